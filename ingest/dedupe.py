"""Near-duplicate chunks: boilerplate copied by hand across pages.

If the same paragraph sits on five pages, retrieval returns five copies and the
answer cites whichever won, so one claim gets different citations from one
request to the next. We keep one canonical chunk (the first in sorted source
order) and record the others against it.

Two chunks are duplicates when their normalized word 3-shingles overlap with
Jaccard >= `THRESHOLD` *and* they state the same numbers and negations (a
copied section that says 30 days where the other says 14 is a different claim,
not a duplicate), a reader of the duplicate may read the canonical chunk, and
the pages do not declare different versions. Very short chunks ("Yes.") are
never merged: their meaning lives in the heading. Copies of one partial
(partials.py) rendered on several pages are never merged either: each copy is
on the page a visitor opens, under that page's headings, so each is indexed.
Candidates come from prefix filtering (rarest shingles first), so the check
is exact without comparing every pair.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from .documents import Chunk
from .text import NEGATION_WORDS, NUMBER, plain_words, shingles

THRESHOLD = 0.9
MIN_WORDS = 12


def _facts(text: str, words: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What must be equal for two texts to make the same claim: their numbers and negation words."""
    return tuple(sorted(NUMBER.findall(text))), tuple(sorted(w for w in words if w in NEGATION_WORDS))


def find_duplicates(chunks: Sequence[Chunk], versions: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """{duplicate chunk id: canonical chunk id}; the canonical one is first by (source, position).

    `versions` maps a chunk's page (doc id, or its source) to the version the page
    declares (None if it declares none); chunks from pages declaring different
    versions are kept apart.
    """
    versions = versions or {}
    order = sorted(range(len(chunks)), key=lambda i: (chunks[i].source, i))
    rank = {i: r for r, i in enumerate(order)}
    words = {i: plain_words(chunks[i].text) for i in order}
    eligible = [i for i in order if len(words[i]) >= MIN_WORDS]
    grams = {i: shingles(words[i]) for i in eligible}
    frequency = Counter(s for i in eligible for s in grams[i])
    index: dict[tuple[str, ...], list[int]] = defaultdict(list)
    duplicates: dict[str, str] = {}
    for i in eligible:
        ranked = sorted(grams[i], key=lambda s: (frequency[s], s))
        prefix = ranked[: len(ranked) - math.ceil(THRESHOLD * len(ranked)) + 1]
        candidates = sorted({j for s in prefix for j in index[s]}, key=rank.__getitem__)
        canonical = next((j for j in candidates if _same(chunks[j], chunks[i], grams[j], grams[i], words[j], words[i], versions)), None)
        if canonical is not None:
            duplicates[chunks[i].id] = chunks[canonical].id
            continue
        for s in prefix:
            index[s].append(i)
    return duplicates


def _same(canonical: Chunk, other: Chunk, a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]], words_a: list[str], words_b: list[str],
          versions: Mapping[str, str | None]) -> bool:
    """True when `other` may be dropped in favour of `canonical`."""
    if canonical.doc_id == other.doc_id:
        return False  # repeated text inside one page is the author's structure, each has its own anchor
    if canonical.source == other.source:
        return False  # one partial rendered on several pages: each copy is where a visitor reads it
    if not set(other.access) <= set(canonical.access):
        return False  # someone who may read the duplicate could not read the canonical chunk
    va = versions.get(canonical.doc_id, versions.get(canonical.source))
    vb = versions.get(other.doc_id, versions.get(other.source))
    if va is not None and vb is not None and va != vb:
        return False
    if len(a & b) / len(a | b) < THRESHOLD:
        return False
    return _facts(canonical.text, words_a) == _facts(other.text, words_b)
