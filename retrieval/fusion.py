"""Pure list operations of hybrid retrieval: reciprocal rank fusion and near-duplicate collapse.

Fusion works on ranks, not raw scores, because cosine similarity and BM25
live on unrelated scales; deep lists (top-50 each) are what make it pay off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ingest.text import plain_words, shingles

T = TypeVar("T")

RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], *, k: int = RRF_K, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Fused score per id: the sum over lists of weight / (k + rank), rank counted from 1."""
    if weights is not None and len(weights) != len(rankings):
        raise ValueError(f"rank fusion needs one weight per ranking: {len(weights)} weights, {len(rankings)} rankings")
    fused: dict[str, float] = {}
    for index, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[index]
        for rank, key in enumerate(dict.fromkeys(ranking), start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


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
