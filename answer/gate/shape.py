"""Does a span have the shape an answer to this kind of question has?

A quantity question ("How long are keys kept?") is answered by a span that
states an amount, a default question by the span naming the default, a how-to
question by steps (a list item, or a sentence with the block it introduces), a
yes/no question by the sentence stating the condition, limit or refusal, a
"why" question by a stated cause or a failure with its condition, a "which
flag?" question by a span that names a flag. Plain rules
over the span's text, so a test can show each decision; extraction scores with
them and the answer gate refuses a quantity question whose quote states none.
"""

from __future__ import annotations

import re

from ingest.text import key_terms
from ingest.units import MEASURING, spellings

from .english import CAUSE, COUNTING_WORDS, FAILS_WHEN, NO_LIMIT, NUMBER_WORD, POLARITY, ROUND_THE_CLOCK, STATES_DEFAULT
from .question import DEFAULT, HOWTO, NAME, QUANTITY, REASON, YESNO, Kind

_DIGIT_OUTSIDE_NAME = re.compile(r"(?<![\w-])\d")  # a number starts here, not inside "v2" or "fd-4291"


def shape_fit(kind: Kind, text: str, *, item: bool = False, header: str = "", heading: str = "", named: str = "") -> int:
    """+1 when `text` is the kind of thing a `kind` question asks for, -1 when it clearly is not, 0 when neutral.

    `item`: the span is a list item or introduces a block (steps, a command); `header`: a table row's header row;
    `heading`: the title and headings a section lead states the answer of (a section "Default strategy" opens with it);
    `named`: the sort of name a "which flag …?" question asks for (`Question.named`).
    """
    if text.rstrip().endswith("?"):  # a sentence that asks (an FAQ entry's own question) answers nothing
        return -1
    if kind == QUANTITY:
        return 1 if states_quantity(text) else -1
    if kind == DEFAULT:
        return 1 if STATES_DEFAULT.search(text) or any("default" in part.lower() for part in (header, heading)) else 0
    if kind == HOWTO:
        return 1 if item else 0
    if kind == YESNO:  # the answer is the sentence that states the condition, the limit or the refusal
        return 1 if POLARITY.search(text) else 0
    if kind == REASON:
        return 1 if CAUSE.search(text) or FAILS_WHEN.search(text) else 0
    if kind == NAME and named in NAMES:
        return 1 if NAMES[named].search(text) else -1
    return 0


# How each sort of name is written in docs: `CYPRESS_RECORD_KEY`, `--browser`, `astro.config.mjs` or `.env`,
# `Content-Type` or `x-ferry-signature`, and a command as code (inline or a block).
NAMES = {
    "variable": re.compile(r"(?<![\w$])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?!\w)|`[A-Z][A-Z0-9_]*`"),
    "flag": re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*"),
    "file": re.compile(r"[\w@-]\.(?:[cm]?[jt]sx?|json5?|ya?ml|toml|mdx?|css|scss|html?|env|txt|lock|ini|conf|xml|py|sh)\b|"
                       r"(?<![\w.])\.[a-z][\w-]*(?:\.[a-z]+)?\b|`[^`\s]*/[^`\s]*`"),
    "header": re.compile(r"\b[A-Z][a-z0-9]*(?:-[A-Z][A-Za-z0-9]*)+\b|`[a-z][a-z0-9]*(?:-[a-z0-9]+)+`"),
    "command": re.compile(r"`[^`]+`"),
}


# A number and the word it counts, with at most one word between: "4 times", "30 calendar days", "two seats".
_COUNT = re.compile(rf"(?<![\w.-])(?:\d[\d,.]*|{COUNTING_WORDS})\s+([a-z-]+)(?:\s+([a-z]+))?\b", re.IGNORECASE)


def counts(text: str, unit: str) -> bool:
    """True when `text` states a number of `unit` (stemmed): "retries up to 4 times" counts "time"."""
    return bool(unit) and any(unit in key_terms(word) for m in _COUNT.finditer(text) for word in m.groups() if word)


def states_quantity(text: str) -> bool:
    """A number that is not part of an identifier ("5 business days", "`24`", "15%"), a number word, or "no limit"."""
    text = ROUND_THE_CLOCK.sub(" ", text)
    return bool(_DIGIT_OUTSIDE_NAME.search(text) or NUMBER_WORD.search(text) or NO_LIMIT.search(text))


# Units that measure rather than count: "30 days" says how long, "5 MB" how big, never how many of a thing.
MEASURES = frozenset(key_terms(" ".join(spellings(*MEASURING))))  # ingest/units.py


def measures_only(text: str) -> bool:
    """True when every number `text` states with a unit is a duration or a size ("within 30 days", "up to 5 MB").

    "How many refund exceptions …?" counts things; a span whose only amounts are durations answers another question.
    """
    units = [min(key_terms(m.group(1)), default="") for m in _COUNT.finditer(text)]
    return bool(units) and all(u in MEASURES for u in units)
