"""A small keyword search over the docs, the refusal state's "search the docs" fallback.

It runs over the parsed corpus with the viewer's access filter, so a restricted
page can never appear in results; ranking is plain term overlap (titles count
double) because it only has to beat "nothing" when the bot has no answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ingest.documents import Chunk
from retrieval.viewer import Viewer

_WORD = re.compile(r"[a-z0-9]{2,}")
MAX_RESULTS = 20


@dataclass(frozen=True)
class Result:
    href: str
    title: str
    heading: str
    snippet: str


def terms(text: str) -> list[str]:
    return list(dict.fromkeys(_WORD.findall(text.lower())))


def search_docs(chunks: Sequence[Chunk], query: str, viewer: Viewer, limit: int = MAX_RESULTS) -> list[Result]:
    """Sections the viewer may read, ranked by how many query terms they contain."""
    wanted = terms(query)
    if not wanted:
        return []
    scored: list[tuple[int, int, Chunk]] = []
    for order, chunk in enumerate(chunks):
        if not viewer.may_read(chunk.access):
            continue
        head = " ".join((chunk.title, *chunk.heading_path)).lower()
        body = chunk.text.lower()
        score = sum(2 * (t in head) + (t in body) for t in wanted)
        if score:
            scored.append((score, order, chunk))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [Result(c.url, c.title, " › ".join(c.heading_path[-1:]), _snippet(c.text, wanted)) for _, _, c in scored[:limit]]


def _snippet(text: str, wanted: list[str], width: int = 180) -> str:
    low = text.lower()
    at = min((i for i in (low.find(t) for t in wanted) if i >= 0), default=0)
    start = max(0, at - width // 3)
    return ("…" if start else "") + " ".join(text[start : start + width].split()) + ("…" if start + width < len(text) else "")
