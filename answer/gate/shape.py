"""Does a span have the shape an answer to this kind of question has?

A quantity question ("How long are keys kept?") is answered by a span that
states an amount, a default question by the span naming the default, a how-to
question by steps (a list item, or a sentence with the block it introduces), a
yes/no question by the sentence stating the condition, limit or refusal, a
"why" question by a stated cause or a failure with its condition. Plain rules
over the span's text, so a test can show each decision; extraction scores with
them and the answer gate refuses a quantity question whose quote states none.
"""

from __future__ import annotations

import re

from ingest.text import key_terms
from ingest.units import MEASURING, spellings

from .question import DEFAULT, HOWTO, QUANTITY, REASON, YESNO, Kind

_POLARITY = re.compile(r"\b(not|no|never|cannot|can't|only|must|unless|except|always|supports?|supported|"
                       r"isn't|aren't|doesn't|don't|won't)\b", re.IGNORECASE)
_CAUSE = re.compile(r"\b(because|cause[ds]?|reason|due to|since|so that|means|result of|likely)\b", re.IGNORECASE)
# "The command will fail if `undefined` is returned" answers "why does it fail?": a failure and its condition.
_FAILS_WHEN = re.compile(r"\b(?:fail(?:s|ed)?|errors?|throws?|time[sd]? out|breaks?)\b[^.;:]{0,60}?\b(?:if|when|unless)\b",
                         re.IGNORECASE)
# "If not specified, the port is 4321." states the default without the word: what happens when nothing is given.
_STATES_DEFAULT = re.compile(r"\bdefaults?\b|\bif (?:not|none is|no \w+ is|omitted|unset|left (?:out|empty|blank))\b|"
                             r"\bwhen (?:not (?:set|specified|given|provided)|omitted|unset)\b|\bfalls? back (?:to|on)\b|"
                             r"\b(?:unless|until) (?:you|it is) (?:set|specif|pass|configur|overrid)\w*", re.IGNORECASE)
_DIGIT_OUTSIDE_NAME = re.compile(r"(?<![\w-])\d")  # a number starts here, not inside "v2" or "fd-4291"
# "24/7" says "always", not an amount: "24/7 support" does not answer "for how long?".
_ROUND_THE_CLOCK = re.compile(r"(?<![\w/])24/7(?:/365)?(?![\w/])")
_COUNTING_WORDS = "two|three|four|five|six|seven|eight|nine|ten|twelve"  # numbers written out, as prose counts
_NUMBER_WORD = re.compile(rf"\b({_COUNTING_WORDS}|twice|once|unlimited|no limit)\b",
                          re.IGNORECASE)
# "There is no explicit file size limit" answers "Is there a maximum file size?": the amount is none.
_NO_LIMIT = re.compile(r"\b(?:no|without(?: an?| any)?)(?:\s+[\w-]+){0,3}?\s+(?:limits?|maximum|max|cap|quota|ceiling)\b|"
                       r"\b(?:is|are)\s+not\s+(?:limited|capped)\b", re.IGNORECASE)


def shape_fit(kind: Kind, text: str, *, item: bool = False, header: str = "", heading: str = "") -> int:
    """+1 when `text` is the kind of thing a `kind` question asks for, -1 when it clearly is not, 0 when neutral.

    `item`: the span is a list item or introduces a block (steps, a command); `header`: a table row's header row;
    `heading`: the title and headings a section lead states the answer of (a section "Default strategy" opens with it).
    """
    if text.rstrip().endswith("?"):  # a sentence that asks (an FAQ entry's own question) answers nothing
        return -1
    if kind == QUANTITY:
        return 1 if states_quantity(text) else -1
    if kind == DEFAULT:
        return 1 if _STATES_DEFAULT.search(text) or any("default" in part.lower() for part in (header, heading)) else 0
    if kind == HOWTO:
        return 1 if item else 0
    if kind == YESNO:  # the answer is the sentence that states the condition, the limit or the refusal
        return 1 if _POLARITY.search(text) else 0
    if kind == REASON:
        return 1 if _CAUSE.search(text) or _FAILS_WHEN.search(text) else 0
    return 0


# A number and the word it counts, with at most one word between: "4 times", "30 calendar days", "two seats".
_COUNT = re.compile(rf"(?<![\w.-])(?:\d[\d,.]*|{_COUNTING_WORDS})\s+([a-z-]+)(?:\s+([a-z]+))?\b", re.IGNORECASE)


def counts(text: str, unit: str) -> bool:
    """True when `text` states a number of `unit` (stemmed): "retries up to 4 times" counts "time"."""
    return bool(unit) and any(unit in key_terms(word) for m in _COUNT.finditer(text) for word in m.groups() if word)


def states_quantity(text: str) -> bool:
    """A number that is not part of an identifier ("5 business days", "`24`", "15%"), a number word, or "no limit"."""
    text = _ROUND_THE_CLOCK.sub(" ", text)
    return bool(_DIGIT_OUTSIDE_NAME.search(text) or _NUMBER_WORD.search(text) or _NO_LIMIT.search(text))


# Units that measure rather than count: "30 days" says how long, "5 MB" how big, never how many of a thing.
MEASURES = frozenset(key_terms(" ".join(spellings(*MEASURING))))  # ingest/units.py


def measures_only(text: str) -> bool:
    """True when every number `text` states with a unit is a duration or a size ("within 30 days", "up to 5 MB").

    "How many refund exceptions …?" counts things; a span whose only amounts are durations answers another question.
    """
    units = [min(key_terms(m.group(1)), default="") for m in _COUNT.finditer(text)]
    return bool(units) and all(u in MEASURES for u in units)
