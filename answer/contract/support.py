"""Does a claim say only what its verified quotes say? A deterministic checker.

A verbatim quote proves the source says something; it does not prove the
claim says the same thing. This checker is deliberately strict and
explainable: every number (with its unit), every negation and every
unbounded word ("forever", "unlimited") in the claim must appear in its
quotes, and the claim's key terms must be covered by them.
A claim saying "90 days" against a quote saying "30 days" is unsupported, not
partial; so is one giving the Starter plan the number its quote gives Growth
(`misbound_number`). Checkers are pluggable (`SupportChecker`), so an LLM judge can sit
beside this one; this one stays the default because it is reproducible.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ingest.normalize import normalize
from ingest.text import (
    NAME_IN_SENTENCE,
    NEGATIONS,
    NUMBER_WITH_UNIT,
    TERM_STOPWORDS,
    has_negation,
    key_terms,
    numerals,
    stem,
    term_words,
)
from ingest.units import RATE, SIZE, TIME, UNITS, spellings

from .spans import sentence_starts

# How far a claim's quotes bear it out: `partial` is its own outcome, never rounded up.
Status = Literal["supported", "partial", "unsupported"]
SUPPORTED: Status = "supported"
PARTIAL: Status = "partial"
UNSUPPORTED: Status = "unsupported"
STATUSES: tuple[Status, ...] = (SUPPORTED, PARTIAL, UNSUPPORTED)

# Words that turn a bounded statement into an unbounded one ("within 14 days" → "forever"); like a
# number, a claim may use one only if its quotes do.
ABSOLUTES = frozenset(
    ["forever", "always", "unlimited", "unlimit", "infinite", "infinitely", "indefinitely", "indefinite", "permanently", "permanent", "lifetime", "instant", "instantly", "immediately", "guaranteed", "guarantee", "every"]
)


@dataclass(frozen=True)
class Support:
    status: Status
    reasons: tuple[str, ...] = ()


class SupportChecker(Protocol):
    def check(self, claim: str, quotes: Sequence[str]) -> Support: ...


def _as_written(stems: set[str], text: str) -> list[str]:
    """The claim's own words for a set of stems, so a finding reads 'billing', not 'bill'."""
    words: dict[str, str] = {}
    for word in term_words(normalize(text).text):
        words.setdefault(stem(word), word)
    return sorted(words.get(s, s) for s in stems)


def numbers(text: str) -> set[str]:
    """Numbers with their unit word (if any), separators removed, words read as digits: '10,000 events' →
    '10000 event', 'three times' → '3 time'."""
    return _numbers_in(numerals(text))


def _numbers_in(text: str) -> set[str]:
    """`numbers` of a text whose number words are already digits (the checker converts each text once)."""
    found = set()
    for value, unit in NUMBER_WITH_UNIT.findall(normalize(text).text):
        value = value.replace(",", "")
        found.add(f"{value} {stem(unit)}".strip() if unit and unit not in TERM_STOPWORDS else value)
    return found


# "every 30 days", "every hour", "every other week": a period, as bounded as the number or unit after it (which
# the number check holds to the quotes), not "every request", "every 3 requests" or "every other plan".
_EVERY_PERIOD = re.compile(r"\bevery\s+(?=(?:(?:\d[\d,.]*|other)\s+)?(?:second|minute|hour|day|night|week|month|quarter"
                           r"|year)s?\b)", re.IGNORECASE)


def absolutes(text: str) -> set[str]:
    """Unbounded words ('forever', 'unlimited', 'instantly') a text uses."""
    return {w for w in term_words(_EVERY_PERIOD.sub(" ", normalize(text).text)) if w in ABSOLUTES}


def _bare(number: str) -> str:
    return number.split(" ")[0]


# Units whose confusion changes the meaning: "90 hours" is not "90 days", "256 KB" is not "256 MB" (ingest/units.py).
UNIT_FAMILIES = {stem(unit): UNITS[unit][0] for unit in spellings(TIME, SIZE, RATE)}


def _unit_conflict(number: str, evidence: set[str]) -> bool:
    """True when the evidence states the same value only with a different unit of the same kind."""
    value, _, unit = number.partition(" ")
    family = UNIT_FAMILIES.get(unit)
    if family is None:
        return False
    same_value = [n.partition(" ")[2] for n in evidence if _bare(n) == value]
    return bool(same_value) and all(UNIT_FAMILIES.get(u) == family and u != unit for u in same_value)


_CAPITALIZED = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# A line that starts a list item or a table row: a unit of its own even inside one sentence.
_ITEM_LINE = re.compile(r"^\s*(?:[-*+]\s|\d{1,3}[.)]\s)|\|")


def misbound_number(claim: str, quotes: Sequence[str]) -> str:
    """Why a number in the claim belongs to another name in the quotes ("" when none does).

    Every word of "You can set the timeout on the Starter plan to any value from 5 to 30 seconds" is in a quote
    saying "On Growth and Enterprise plans you can set it to any value from 5 to 30 seconds. On Free and Starter
    plans the timeout is fixed at 15 seconds": the number test and the key terms pass a claim that is false. So a
    name the claim writes before a number in the same sentence (back to the number before it) must share a quote
    sentence with that number whenever the quotes give the name a quantity of its own ("15 seconds"; a version
    like "2.4" is not one). Names are capitalized on both sides, so "set" is not "Settings". Sentences are cut
    the same way on both sides, and again where a list item or table row starts, so a claim copied from its quote
    passes.
    """
    # each quote on its own: joined, one quote's first word would follow the last word of another
    names = {stem(n.lower()) for quote in quotes for n in NAME_IN_SENTENCE.findall(quote)} - TERM_STOPWORDS
    if not names:
        return ""
    said = [({_bare(n) for n in found}, any(" " in n for n in found), _named(unit))
            for quote in quotes for unit in sentence_units(quote) for found in [_numbers_in(unit)]]
    for unit in sentence_units(claim):
        before = 0
        for match in NUMBER_WITH_UNIT.finditer(unit):
            value = match.group(1).replace(",", "")
            for name in sorted(_named(unit[before:match.start()]) & names):
                together = any(value in values and name in named for values, _, named in said)
                numbered = any(quantity and name in named for _, quantity, named in said)
                if numbered and not together:
                    word = next(w for w in _CAPITALIZED.findall(unit[before:match.start()]) if stem(w.lower()) == name)
                    return f"the quotes do not give {value} for {word}"
            before = match.end()
    return ""


_NEGATING = frozenset(key_terms(" ".join(NEGATIONS)))


def _negation_agrees(claim: str, quotes: Sequence[str], evidence: str) -> bool:
    """Whether the claim negates as its quotes do.

    Read against the sentences that say what the claim says: those of the quotes holding every key term of it.
    "Ordered delivery changes that for one endpoint." said back from a quote whose other sentence makes "no
    ordering promise" agrees with its own sentence; "Free plans include SSO." does not agree with "Free plans do
    not include SSO.", nor "Exports are available." with a quote saying they are available on one plan and not
    on another (every such sentence must agree), nor "Retries are not sent with backoff." with "Retries are sent
    with backoff." beside a negative sentence about something else. A negative sentence that points back ("this
    is no longer the case", "after the trial they are not") may negate any other, so then every quote counts,
    as it does for a claim no single sentence holds ("Free plans include SSO and audit logs", its parts from two
    sentences). A whole quote said back agrees (its negations are the quote's own) unless another quote points
    back that way.
    """
    said = " ".join(normalize(claim).text.split())
    sentences = {q: [normalize(u).text for u in sentence_units(q)] for q in quotes}
    whole = {q for q in quotes if said == " ".join(normalize(q).text.split())}
    points_back = any(_denies_back(u) for q in quotes if q not in whole for u in sentences[q])
    if whole and not points_back:
        return True
    negated = has_negation(normalize(claim).text)
    terms = key_terms(claim) - _NEGATING  # what it says, negated or not
    saying = [u for found in sentences.values() for u in found if terms and terms <= key_terms(u)]
    agrees = all(has_negation(u) == negated for u in saying)
    if saying and not points_back:
        return agrees
    return agrees and negated == has_negation(normalize(evidence).text)


_POINTS_BACK = re.compile(r"\b(?:this|that|these|those|they|them|it|its|such)\b", re.IGNORECASE)
# "without it" and ", without requiring …" name a condition ("The file is optional; without it, the CLI uses the
# defaults"; "This loads fast, without requiring a download"), never a denial of what was said before ("this is no
# longer the case"); any other "without" may be the denial itself ("Since version 3 they ship without audit logs")
_WITHOUT = re.compile(r"\bwithout (?:this|that|these|those|them|it)\b|,\s*without \w+ing\b[^,.;:]*", re.IGNORECASE)


def _denies_back(sentence: str) -> bool:
    """Whether a sentence's negation points back, so that it may deny another sentence of its quote."""
    return bool(_POINTS_BACK.search(sentence)) and has_negation(_WITHOUT.sub(" ", sentence))


_LEAD_WORD = re.compile(r"[`*_\"'(\[]*([A-Za-z][\w.\-]*)")


def swapped_names(claim: str, quotes: Sequence[str]) -> str:
    """Why the claim says of one name what its quote says of another ("" when it does not).

    "TypeScript ships with official type declarations for Cypress." has every word of "Cypress ships with
    official type declarations for TypeScript.": the key terms pass a claim that turns its quote around. So a
    claim opening with one name is unsupported by quote sentences saying what it says (`SAME_CLAIM` of its key
    terms) when one opens with another name the claim names later, and names the first later itself, and none
    opens with the claim's own first name. A name is a word written with a capital where it is not a sentence's
    first word; a sentence the claim says word for word is its own.
    """
    said = normalize(claim).text
    lead = _LEAD_WORD.match(claim.strip())
    if lead is None or not lead.group(1)[:1].isupper() or any(said in normalize(q).text for q in quotes):
        return ""
    first, after = lead.group(1), claim.strip()[lead.end():]
    terms = key_terms(claim)
    saying = [(unit, _LEAD_WORD.match(unit.strip())) for quote in quotes for unit in sentence_units(quote)
              if len(key_terms(unit) & terms) >= SAME_CLAIM * len(terms)]  # the sentences that say what it says
    if any(opens and opens.group(1).lower() == first.lower() for _, opens in saying):
        return ""  # one of them says it of the same name
    for unit, opens in saying:
        if opens is None or normalize(unit).text.strip() in said:
            continue
        other = opens.group(1)
        if other[:1].isupper() and _written(other, after) and _written(first, unit.strip()[opens.end():]):
            return f"the quotes say it of {other}, not of {first}"
    return ""


def _written(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _named(text: str) -> set[str]:
    return {stem(w.lower()) for w in _CAPITALIZED.findall(text)}


def sentence_units(text: str) -> list[str]:
    """A text's sentences, each cut again at a blank line and where a list item or a table row starts (a hard
    line break inside a sentence is not a cut)."""
    starts = sentence_starts(text) or (0,)
    units: list[str] = []
    for a, b in zip(starts, [*starts[1:], len(text)], strict=True):
        pieces: list[str] = []
        for line in text[a:b].split("\n"):
            if pieces and pieces[-1].strip() and line.strip() and not _ITEM_LINE.search(line):
                pieces[-1] += "\n" + line
            else:
                pieces.append(line)
        units += [piece for piece in pieces if piece.strip()]
    return units


class DeterministicChecker:
    """Numbers (each with its name), negation and key-term coverage; thresholds tuned to fail closed."""

    def __init__(self, *, supported_at: float = 0.8, partial_at: float = 0.5) -> None:
        self.supported_at = supported_at
        self.partial_at = partial_at

    def check(self, claim: str, quotes: Sequence[str]) -> Support:
        if not quotes:
            return Support(UNSUPPORTED, ("no verified quote",))
        claim, quotes = numerals(claim), [numerals(q) for q in quotes]  # "three times" is "3 times" to every rule
        evidence = " ".join(quotes)
        reasons: list[str] = []
        # quote by quote: joined, the end of one quote and the start of the next would read as one text
        claim_numbers, evidence_numbers = _numbers_in(claim), set().union(*(_numbers_in(q) for q in quotes))
        evidence_bare = {_bare(n) for n in evidence_numbers}
        missing = sorted(
            n for n in claim_numbers
            if n not in evidence_numbers and (_bare(n) not in evidence_bare or _unit_conflict(n, evidence_numbers))
        )
        if missing:
            return Support(UNSUPPORTED, (f"number not in the quotes: {', '.join(missing)}",))
        misbound = misbound_number(claim, quotes) if claim_numbers else ""
        if misbound:
            return Support(UNSUPPORTED, (misbound,))
        swapped = swapped_names(claim, quotes)
        if swapped:
            return Support(UNSUPPORTED, (swapped,))
        if not _negation_agrees(claim, quotes, evidence):
            return Support(UNSUPPORTED, ("negation differs between claim and quotes",))
        absolute = sorted(absolutes(claim) - absolutes(evidence))
        if absolute:
            return Support(UNSUPPORTED, (f"absolute term not in the quotes: {', '.join(absolute)}",))
        terms = key_terms(claim)
        if terms:
            covered = terms & key_terms(evidence)
            share = len(covered) / len(terms)
            absent = _as_written(terms - covered, claim)
            if share < self.partial_at:
                return Support(UNSUPPORTED, (f"claim terms not in the quotes: {', '.join(absent)}",))
            if share < self.supported_at:
                reasons.append(f"some claim terms not in the quotes: {', '.join(absent)}")
                return Support(PARTIAL, tuple(reasons))
        return Support(SUPPORTED, tuple(reasons))


SAME_CLAIM = 0.8  # share of a quote sentence's key terms a claim uses: the two say the same thing


def contradicts(claim: str, quote: str) -> bool:
    """Whether a sentence of the quote says what the claim says, negated the other way: nearly all its key terms
    (`SAME_CLAIM`) are the claim's, or nearly all the claim's are its ("Free plans do not include SSO." against
    "Free plans include SSO and audit logs"; "Free plans do not include SSO, audit logs or SCIM." against "Free
    plans include SSO"), or a sentence that may deny any before it ("This is no longer the case."). A negation
    about something else ("If you do not have one yet, use `ferry listen`") is not one."""
    negated = has_negation(normalize(claim).text)
    said = key_terms(claim) - _NEGATING
    for unit in sentence_units(quote):
        if _denies_back(unit):
            return True  # "This is no longer the case." may deny any sentence before it
        terms = key_terms(unit) - _NEGATING
        if terms and said and has_negation(normalize(unit).text) != negated and (
                len(terms & said) >= SAME_CLAIM * len(terms) or len(terms & said) >= SAME_CLAIM * len(said)):
            return True
    return False

