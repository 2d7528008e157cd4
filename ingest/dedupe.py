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

Since two duplicates state the same numbers and negations, chunks are first
grouped by those facts and each group is searched on its own: the result is
the same as one search over all chunks (no pair across groups can match), and
a re-ingest with a `DuplicateMemo` searches again only the groups whose
chunks changed. At 100k chunks a full search took ~24 s here; most groups of
a 1 % edit are unchanged.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .documents import Chunk
from .text import NEGATION_WORDS, NUMBER, plain_words, shingles

THRESHOLD = 0.9
MIN_WORDS = 12


def _facts(text: str, words: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What must be equal for two texts to make the same claim: their numbers and negation words."""
    return tuple(sorted(NUMBER.findall(text))), tuple(sorted(w for w in words if w in NEGATION_WORDS))


Facts = tuple[tuple[str, ...], tuple[str, ...]]
BlockKey = tuple[tuple[str, str, str, str, tuple[str, ...], str | None], ...]


@dataclass
class DuplicateMemo:
    """What a search learnt that the next one may reuse: each text's facts, and each group's result.

    A group's key is everything its result depends on (each member's id, text, page, source, access and
    version, in order), so a reused result is the one a new search would find.
    """

    facts: dict[str, tuple[int, Facts]] = field(default_factory=dict)  # chunk text -> (word count, facts)
    groups: dict[BlockKey, dict[str, str]] = field(default_factory=dict)


def find_duplicates(chunks: Sequence[Chunk], versions: Mapping[str, str | None] | None = None, *,
                    memo: DuplicateMemo | None = None) -> dict[str, str]:
    """{duplicate chunk id: canonical chunk id}; the canonical one is first by (source, position).

    `versions` maps a chunk's page (doc id, or its source) to the version the page
    declares (None if it declares none); chunks from pages declaring different
    versions are kept apart. `memo` carries what this search learns to the next (module docstring).
    """
    versions = versions or {}
    memo = memo if memo is not None else DuplicateMemo()
    order = sorted(range(len(chunks)), key=lambda i: (chunks[i].source, i))
    facts: dict[str, tuple[int, Facts]] = {}
    groups: dict[Facts, list[Chunk]] = defaultdict(list)
    for i in order:
        chunk = chunks[i]
        known = memo.facts.get(chunk.text) or facts.get(chunk.text)
        if known is None:
            words = plain_words(chunk.text)
            known = (len(words), _facts(chunk.text, words))
        facts[chunk.text] = known
        if known[0] >= MIN_WORDS:
            groups[known[1]].append(chunk)
    duplicates: dict[str, str] = {}
    searched: dict[BlockKey, dict[str, str]] = {}
    for members in groups.values():
        if len(members) < 2:
            continue  # alone with its numbers and negations: nothing can duplicate it
        key = tuple((c.id, c.text, c.doc_id, c.source, c.access, _version(c, versions)) for c in members)
        found = memo.groups.get(key)
        if found is None:
            found = _search(members, versions)
        searched[key] = found
        duplicates.update(found)
    memo.facts, memo.groups = facts, searched  # only what this corpus has: the memo never outgrows it
    return duplicates


def _version(chunk: Chunk, versions: Mapping[str, str | None]) -> str | None:
    return versions.get(chunk.doc_id, versions.get(chunk.source))


def _search(chunks: Sequence[Chunk], versions: Mapping[str, str | None]) -> dict[str, str]:
    """The duplicates among `chunks` (in canonical order, every one long enough), by prefix filtering."""
    words = [plain_words(c.text) for c in chunks]
    grams = [shingles(w) for w in words]
    frequency = Counter(s for g in grams for s in g)
    index: dict[tuple[str, ...], list[int]] = defaultdict(list)
    duplicates: dict[str, str] = {}
    for i, chunk in enumerate(chunks):
        ranked = sorted(grams[i], key=lambda s: (frequency[s], s))
        prefix = ranked[: len(ranked) - math.ceil(THRESHOLD * len(ranked)) + 1]
        candidates = sorted({j for s in prefix for j in index[s]})
        canonical = next((j for j in candidates
                          if _same(chunks[j], chunk, grams[j], grams[i], words[j], words[i], versions)), None)
        if canonical is not None:
            duplicates[chunk.id] = chunks[canonical].id
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
    va, vb = _version(canonical, versions), _version(other, versions)
    if va is not None and vb is not None and va != vb:
        return False
    if len(a & b) / len(a | b) < THRESHOLD:
        return False
    return _facts(canonical.text, words_a) == _facts(other.text, words_b)
