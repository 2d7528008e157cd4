"""What a question asks for: its type, its focus terms, the identifiers and docs version it names.

Extraction and the "answers the question" gate both need to know what would
count as an answer. "How long are keys kept?" is answered by a sentence that
states a duration; "Can I point an endpoint at 192.168.1.20?" by the sentence
that names the condition or the refusal; "How do I forward webhooks to
localhost?" by the steps. The analysis is plain rules over the question text,
so every decision it feeds can be explained and tested.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ingest.text import ASKING, TERM_STOPWORDS, is_hyphened_word, key_terms

from .english import (
    ASKS_A_MEASURE,
    ASKS_A_NAME,
    ASKS_DEFAULT,
    ASKS_HOW_MANY,
    ASKS_HOWTO,
    ASKS_QUANTITY,
    ASKS_REASON,
    ASKS_YES_NO,
    LEADING_CLAUSE,
    LOOKING_FOR,
    SECOND_ASK,
)
from .weights import PART_WORDS

# What kind of answer a question wants: the shape (`shape.py`) a span must have to answer it.
Kind = Literal["quantity", "default", "yes-no", "how-to", "reason", "name", "open"]
QUANTITY: Kind = "quantity"
DEFAULT: Kind = "default"
YESNO: Kind = "yes-no"
HOWTO: Kind = "how-to"
REASON: Kind = "reason"
NAME: Kind = "name"  # a name in code of one sort: an environment variable, a flag, a file, a header, a command
OPEN: Kind = "open"

# Code-like tokens and bare numbers ("exit status 3", "port 8443", "a 301", "--record"): a sentence naming them is
# about them.
_IDENTIFIER = re.compile(r"`([^`]+)`|(?<![\w.])((?:--?)?[A-Za-z_][\w]*(?:[-_.:/][\w]+)+|--?[A-Za-z][\w]*|[A-Z]{2,}-\d+|"
                         r"\d+(?:\.\d+)*)(?![\w])")
# Single letters joined by dots are an abbreviation of prose ("e.g.", "i.e."), not a name in code.
_ABBREVIATION = re.compile(r"[a-z](?:\.[a-z])+\.?", re.IGNORECASE)
# A release the question names: "v2", "version 2.4", "1.9"; never a piece of an address or a longer number
# ("192.168.1.20" names no release, nor does "13.6.0" name 13.6 or 6.0).
_VERSION = re.compile(r"\b(?:v|version\s*|release\s*)(\d+(?:\.\d+)?)\b|(?<![\d.])(\d+\.\d+)(?!\.?\d)", re.IGNORECASE)


@dataclass(frozen=True)
class Question:
    """A question, analysed once per request."""

    text: str
    kind: Kind
    terms: frozenset[str]  # every key term (stemmed)
    focus: frozenset[str]  # key terms that say what the question is about
    identifiers: frozenset[str]  # code-like tokens named in the question, lower-cased
    versions: frozenset[str]  # docs versions the question names ("1.9")
    counted: str = ""  # what "how many …" counts, stemmed ("how many times" -> "time"); "" when it counts nothing
    named: str = ""  # the sort of name a "which flag / which file …" question asks for (`english.ASKS_A_NAME`)

    @property
    def wants_number(self) -> bool:
        return self.kind == QUANTITY


_PLURAL = re.compile(r"[^s]s$", re.IGNORECASE)  # "seats", "times"; not "class" or "bus"
_COUNTED = re.compile(r"\bhow many ((?:[a-z][\w-]*\s+)*[a-z][\w-]*)", re.IGNORECASE)
_CONTRACTION = re.compile(r"(?<=[a-z])['\u2019](re|ve|m|ll|d|s)\b|(?<=[a-z])n['\u2019]t\b", re.IGNORECASE)


def analyze(text: str, *, ignore: frozenset[str] = frozenset(), code: frozenset[str] = frozenset()) -> Question:
    """Classify a question; `ignore` holds terms too common on the site to say anything (its product name).

    `code` holds the hyphened words the site writes as code: "create-astro" named bare is an identifier
    there, while "non-payment" or "built-in" is an English word a span must not score as naming code.
    """
    plain = _CONTRACTION.sub(lambda m: "" if m.group(1) else " not", text)
    plain = ASKS_HOW_MANY.sub(" ", plain)  # "how many times" asks for a number; "times" is not what it is about
    plain = LOOKING_FOR.sub(r"\1", plain)  # "where do I find my key?" is about the key
    terms = frozenset(key_terms(plain))
    focus = frozenset(t for t in terms if t not in ASKING and t not in ignore and t not in TERM_STOPWORDS
                      and not _ABBREVIATION.fullmatch(t))
    idents = frozenset(
        (m.group(1) or m.group(2)).lower().strip("`")
        for m in _IDENTIFIER.finditer(text)
        if not _VERSION.fullmatch(m.group(1) or m.group(2)) and not _ABBREVIATION.fullmatch(m.group(2) or "")
        and (m.group(1) or not is_hyphened_word(m.group(2)) or m.group(2).lower() in code)
    )
    versions = frozenset(a or b for a, b in _VERSION.findall(text))
    unit = min(key_terms(counted_noun(asked_sentence(text))), default="")
    kind = _kind(text)
    return Question(text, kind, terms, focus or terms, idents, versions, unit,
                    named_sort(asked_sentence(text)) if kind == NAME else "")


def named_sort(text: str) -> str:
    """The sort of name in code a question asks for ("variable", "flag", "header", "file", "command"), or ""."""
    return next((sort for sort, asks in ASKS_A_NAME.items() if asks.search(text)), "")


def counted_noun(text: str) -> str:
    """What "how many …" counts: the last word of the noun phrase after it ("" when it asks no count).

    English puts the head of a compound last: "how many refund exceptions can …" counts exceptions, not
    refunds; "how many API keys" counts keys. The phrase ends at the first function word ("can", "of", "per"),
    and "how many" counts a plural: in "how many user seats come with …" the verb after it is not what is counted.
    """
    found = _COUNTED.search(text)
    if not found:
        return ""
    phrase: list[str] = []
    for word in found.group(1).split():
        if word.lower() in TERM_STOPWORDS:
            break
        phrase.append(word)
    plurals = [w for w in phrase if _PLURAL.search(w)]
    return plurals[-1] if plurals else phrase[-1] if phrase else ""


def asks_a_measure(text: str) -> bool:
    """True when a question asks how long, how big or when ("…, and for how long?"): a duration can answer it."""
    return bool(ASKS_A_MEASURE.search(text))


def _kind(text: str) -> Kind:
    asked = asked_sentence(text)
    if ASKS_DEFAULT.search(asked):
        return DEFAULT
    if ASKS_QUANTITY.search(asked):
        return QUANTITY
    if ASKS_HOWTO.search(asked):
        return HOWTO
    if ASKS_REASON.search(asked):
        return REASON
    if ASKS_YES_NO.search(LEADING_CLAUSE.sub("", asked, count=1)):  # read past "If I cancel halfway, …"
        return YESNO
    if named_sort(asked):
        return NAME
    return OPEN


def same_release(a: str, b: str) -> bool:
    """"3" and "3.0" name one release, and "2" covers "2.1": equal, or one is the other with more parts.

    A question names a major version ("moving from v1 to v2"), the docs tag each page with a release ("2.4").
    """
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def question_parts(text: str) -> list[str]:
    """The questions a text asks, each with the sentences before it; `[text]` when it asks one.

    "Which plan do I need for Jira, and can I attach an existing ticket?" asks two things, and the best
    span for the whole is often the answer to only one of them. Each part keeps the context sentences
    before the asking one ("One build records twice. Which package …, and how do I …?").
    """
    asked = asked_sentence(text)
    pieces = [p.strip(" ,?") for p in SECOND_ASK.split(asked)]
    if len(pieces) < 2 or any(len(p.split()) < PART_WORDS for p in pieces):
        return [text]
    context = text[: text.rfind(asked)].strip()
    return [f"{context} {p[0].upper()}{p[1:]}?".strip() for p in pieces]


def asked_sentence(text: str) -> str:
    """The sentence that asks: "We're on EU VAT. Will you add VAT?" asks its second sentence."""
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", text.strip()) if s]
    questions = [s for s in sentences if s.endswith("?")]
    return questions[-1] if questions else text
