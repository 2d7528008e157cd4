"""Every number the answer gate decides with, in one place.

The gate's judgement is a weighted sum of named span features (`features.py`)
and a few thresholds on it (`stage.py`). They were set on content/ only and
checked on held-out sites (cypress-docs, Starlight); see docs/performance.mdx
for the figures each change was held to. Change one here, and `make eval`
reports every set before it is kept. Tests build their own `Weights` or
`Thresholds` to isolate one decision; nothing else hides a number.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Weights:
    """How much each span feature counts towards its score."""

    meaning: float = 1.0  # embedding similarity of the question and the span
    section: float = 0.35  # similarity of the question and the span's title and headings
    terms: float = 0.45  # rarity-weighted share of the question's focus the span and its headings use
    asks: float = 0.3  # the same share of the focus terms most retrieved sections do not use (beyond the subject)
    identifiers: float = 0.35  # share of the question's code-like tokens the span names
    type_match: float = 0.12  # the span has the shape the question's kind asks for
    type_miss: float = 0.12  # … or clearly has not
    lead: float = 0.04  # the span opens its section
    rank: float = 0.025  # per retrieval rank below the top hit
    other_version: float = 0.15  # a docs version other than the one wanted
    history: float = 0.12  # a past version or a rename, for a question that does not ask about changes
    length: float = 0.05  # per unit beyond the first: a longer quote must earn its length
    continues: float = 0.1  # orders supporting spans only: one from the section a chosen span leads from


@dataclass(frozen=True)
class Thresholds:
    """When a scored span answers, may stand beside the answer, or when nothing answers."""

    floor: float = 0.75  # extraction score of the direct answer
    support_within: float = 0.35  # a supporting span scores within this of the direct answer
    support_floor: float = 0.65  # and at least this
    max_absent: float = 0.6  # rarity-weighted share of the question's focus no retrieved section mentions
    quantity_focus: float = 0.35  # a stated number answers only if its span and headings name this much of the focus
    counted_focus: float = 0.2  # … or this much of the rest when it counts what "how many …" asks ("4 times")
    direct_tries: int = 5  # best spans tried for the direct answer (one failing only on a name may have a neighbour)
    related_floor: float = 0.6  # extraction score a span needs to be shown as a Related passage when nothing answers


TOP_HITS = 6  # retrieved sections whose spans are candidates
MAX_UNITS = 3  # sentences one candidate span may join (items and table rows stand alone)
SUBJECT_SHARE = 0.5  # a focus term more than this share of the retrieved sections use is the subject they share
COMMON_SHARE = 0.3  # a term on more than this share of all chunks is the site's subject, never a question's focus
MAX_QUOTES = 3  # spans an Answer quotes: the direct answer, its support and a rival value, if any
PART_WORDS = 3  # words each part of "…, and …?" needs to be a question of its own
BOUND_BEFORE = 16  # characters before an amount read for "up to", "at most": a limit, not the value itself
RANGE_AFTER = 4  # characters after an amount read for a range's dash ("5–30 s")
MAX_RELATED = 3  # Related passages shown when nothing answers: the best span of each of the closest sections
SAME_THING = 0.75  # two amounts disagree only when this share of the shorter quote's key terms is in the other too


@dataclass(frozen=True)
class Confidence:
    """The Answer-or-Related line: a logistic weighing of `confidence.signals`, and where the badge starts."""

    bias: float = 0.0
    coefficients: tuple[tuple[str, float], ...] = ()
    answer_at: float = 0.0  # the probability at and above which a pick is shown as an Answer


FITTED = Confidence()  # unfitted: every direct answer that passes the gate is an Answer
