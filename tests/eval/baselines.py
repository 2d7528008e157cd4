"""Copy-the-top-passage answerers: the trap a grounded answerer must clearly beat.

Quoting the top hit scores perfectly on citation metrics (every quote is
verbatim, every chip lands) and tells the visitor little. `make eval` runs
these beside the real generators so answer correctness is read against them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from answer.contract.draft import Draft, DraftClaim, Quote
from answer.contract.spans import units
from answer.gate.features import cosine
from retrieval.search import RetrievalSet


def _top_units(rset: RetrievalSet) -> tuple[str, list[str]]:
    if not rset.hits:
        return "", []
    hit = rset.hits[0]
    return hit.handle, [u.text for u in units(hit.chunk.text)]


def _claim(handle: str, text: str) -> Draft:
    return Draft(refused=False, claims=(DraftClaim((Quote(handle, text),), text),), raw="baseline")


class FirstSentenceOfTopHit:
    """Quotes the first sentence (or item, or row) of the top hit; never refuses while anything is retrieved."""

    name = "first-sentence-of-top-hit"

    def draft(self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()) -> Draft:
        handle, found = _top_units(rset)
        return _claim(handle, found[0]) if found else Draft(refused=True, claims=())


class TopHitBestSentence:
    """Quotes the top hit's sentence most similar to the question."""

    name = "top-hit-best-sentence"

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def draft(self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()) -> Draft:
        handle, found = _top_units(rset)
        if not found:
            return Draft(refused=True, claims=())
        q, *vectors = self.embedder.embed([question, *found])
        best = max(range(len(found)), key=lambda i: cosine(q, vectors[i]))
        return _claim(handle, found[best])

