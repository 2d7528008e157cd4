"""Sources that disagree: two readable sections stating different amounts for the same thing.

A docs site that says "The SDKs time out after 30 seconds" on one page and
"The default request timeout of the SDKs is 5 seconds" on another (a stale
page, a hostile edit) has no verified answer: quoting either as the fact
hides the other. Two quotes disagree when they state an amount in the same
unit with a different value and are about the same thing (most of their key
terms, amounts aside, are shared). The answer then shows both, each with its
source, under "the docs disagree" — never one of them as verified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingest.text import NAME_IN_SENTENCE, key_terms
from ingest.units import COUNT, SHARE, SIZE, TIME, UNITS, spellings

from .english import BOUND
from .weights import BOUND_BEFORE, RANGE_AFTER, SAME_THING

# A number and the unit it measures; units of one family are compared in one base ("30 s" = "30 seconds"), from
# ingest/units.py; a count of anything else ("3 requests") is its own family.
_COUNTED = "requests?|events?|characters?|chars|items|entries|rows|calls"
_AMOUNT = re.compile(
    rf"(?<![\w.])(\d+(?:[.,]\d+)*)\s*({'|'.join(re.escape(u) for u in spellings(TIME, SIZE, SHARE, COUNT))}|{_COUNTED})"
    r"(?![\w])", re.IGNORECASE)


@dataclass(frozen=True)
class Amount:
    family: str  # time / size / share / count / the unit itself
    value: float  # in the family's base unit
    bound: bool  # a limit or a range end ("up to 30 s", "5–30 s"), not the value itself
    text: str  # as written ("30 seconds")


def amounts(text: str) -> list[Amount]:
    """Every amount with a unit the text states, in a comparable base."""
    found = []
    for match in _AMOUNT.finditer(text):
        number, unit = match.group(1).replace(",", ""), match.group(2).lower()
        family, factor = UNITS.get(unit, (unit.rstrip("s"), 1.0))
        before = text[max(0, match.start() - BOUND_BEFORE):match.start()]
        ranged = bool(re.match(r"\s*[–-]\s*\d", text[match.end():match.end() + RANGE_AFTER]))
        try:
            found.append(Amount(family, float(number) * factor, bool(BOUND.search(before)) or ranged, match.group(0)))
        except ValueError:
            continue
    return found


def _topic(text: str) -> set[str]:
    """Key terms of a quote without its amounts: what the amount is of."""
    return {t for t in key_terms(_AMOUNT.sub(" ", text)) if not any(ch.isdigit() for ch in t)}


def disagree(a: str, b: str) -> bool:
    """True when two quotes state different values (same unit family, neither a limit) for the same thing.

    Conservative on purpose: a false alarm costs a right answer its badge. A limit ("up to 30 s") is compared
    only with a limit; quotes where each says something the other does not ("Starter" / "Growth", "monthly" /
    "annual") are about different things; one quote's key terms must be nearly all in the other.
    """
    left, right = amounts(a), amounts(b)
    kinds = {(x.family, x.bound) for x in left} & {(y.family, y.bound) for y in right}
    if not kinds:
        return False  # no value of one kind in both: a limit and a default are different statements
    if all({x.value for x in left if (x.family, x.bound) == k} & {y.value for y in right if (y.family, y.bound) == k}
           for k in kinds):
        return False  # every shared kind of amount has a value both state
    names_a, names_b = set(NAME_IN_SENTENCE.findall(a)), set(NAME_IN_SENTENCE.findall(b))
    ta, tb = _topic(a) | {n.lower() for n in names_a}, _topic(b) | {n.lower() for n in names_b}
    if not ta or not tb or (ta - tb and tb - ta):
        return False  # each says something the other does not ("monthly" / "annual"): about different things
    return len(ta & tb) / min(len(ta), len(tb)) >= SAME_THING
