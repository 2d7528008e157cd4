"""Questions to ask next: up to three, each one the docs answer, checked by searching for it.

Visitors of other docs assistants are offered two or three follow-ups after an
answer. A follow-up offered here is never a guess: it is the heading of a
section this answer's search found but did not quote, when the heading is
itself a question ("Can I pause deliveries?") or a how-to ("How to rotate a
signing secret" becomes "How do I rotate a signing secret?"), and it is
offered only when searching for it, as this reader, finds that very section
first. No model writes them; when no heading qualifies, none is offered.
"""

from __future__ import annotations

import re
from typing import Protocol

from retrieval.search import RetrievalSet
from retrieval.viewer import Viewer

from .contract.result import Answer

MAX_SUGGESTED = 3
_QUESTION = re.compile(r"^(?:how|what|which|when|where|why|who|can|do|does|is|are|should|will)\b.{6,90}\?$",
                       re.IGNORECASE)
_HOW_TO = re.compile(r"^how to\s+(.{4,80}?)[.?!]*$", re.IGNORECASE)


class Searcher(Protocol):
    def search(self, question: str, viewer: Viewer) -> RetrievalSet: ...


def question_of(heading: str) -> str | None:
    """The heading as a question a visitor would type, or None when it is not one (a noun phrase says too little)."""
    text = " ".join(heading.split())
    if _QUESTION.match(text):
        return text
    how = _HOW_TO.match(text)
    if how:
        rest = how.group(1)
        return f"How do I {rest[0].lower()}{rest[1:]}?"
    return None


def suggest(answer: Answer, searcher: Searcher, viewer: Viewer) -> tuple[str, ...]:
    """Up to three next questions from the sections this answer found but did not quote, each checked by search."""
    cited = {c.chunk_id for claim in answer.claims for c in claim.citations}
    asked = _plain(answer.question)
    found: list[str] = []
    for hit in answer.retrieval.hits:  # this reader's hits, and checked again: nothing they may not read is offered
        if hit.chunk.id in cited or not hit.chunk.heading_path or not viewer.may_read(hit.chunk.access):
            continue
        question = question_of(hit.chunk.heading_path[-1])
        if question is None or _plain(question) in {asked, *map(_plain, found)}:
            continue
        top = searcher.search(question, viewer).hits
        if top and top[0].chunk.id == hit.chunk.id:
            found.append(question)
            if len(found) == MAX_SUGGESTED:
                break
    return tuple(found)


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())
