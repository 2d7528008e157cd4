"""Pure list operations of hybrid retrieval: reciprocal rank fusion and near-duplicate collapse.

Fusion works on ranks, not raw scores, because cosine similarity and BM25
live on unrelated scales; deep lists (top-50 each) are what make it pay off.
Scores scaled per question and added find the gold section more often on
every evaluation set, but were not taken: the answer gate's refusals read
which six sections arrive, and they lost refusals (docs/performance.mdx).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ingest.text import plain_words, shingles

T = TypeVar("T")

RRF_K = 60


def reciprocal_rank_score(ranks: Sequence[int | None], *, k: int = RRF_K) -> float:
    """One item's fused score: the sum over the rankings holding it of 1 / (k + rank), rank counted from 1."""
    return sum(1.0 / (k + rank) for rank in ranks if rank is not None)


def _fingerprint(text: str) -> tuple[tuple[str, ...], frozenset[tuple[str, ...]]]:
    words = plain_words(text)  # what "the same text" means for dedupe
    return tuple(words), shingles(words, 5)


def _overlaps(a: tuple[tuple[str, ...], frozenset[tuple[str, ...]]], b: tuple[tuple[str, ...], frozenset[tuple[str, ...]]], threshold: float) -> bool:
    if a[0] == b[0]:
        return True
    smaller = min(len(a[1]), len(b[1]))
    # Containment, not Jaccard: a short partial repeated inside a longer section is still a duplicate.
    return smaller > 0 and len(a[1] & b[1]) / smaller >= threshold


def near_duplicate(a: str, b: str, *, threshold: float = 0.8) -> bool:
    """True when two texts are equal after normalization or share most of their 5-word shingles."""
    return _overlaps(_fingerprint(a), _fingerprint(b), threshold)


def dedupe(ranked: Sequence[T], text: Callable[[T], str], *, threshold: float = 0.8, limit: int | None = None) -> list[T]:
    """Keep the best-ranked of each group of near-identical items, in the given order (at most `limit`)."""
    kept: list[T] = []
    seen: list[tuple[tuple[str, ...], frozenset[tuple[str, ...]]]] = []
    for item in ranked:
        if limit is not None and len(kept) >= limit:
            break
        mark = _fingerprint(text(item))
        if not any(_overlaps(mark, other, threshold) for other in seen):
            kept.append(item)
            seen.append(mark)
    return kept
