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

# What kind of answer a question wants: the shape (`shape.py`) a span must have to answer it.
Kind = Literal["quantity", "default", "yes-no", "how-to", "reason", "open"]
QUANTITY: Kind = "quantity"
DEFAULT: Kind = "default"
YESNO: Kind = "yes-no"
HOWTO: Kind = "how-to"
REASON: Kind = "reason"
OPEN: Kind = "open"

_QUANTITY = re.compile(
    r"\b(how (many|much|long|often|big|large|fast|soon|far|old|frequently)|what('s| is)? the (max|maximum|min|minimum|"
    r"limit|size|number|amount|percentage|price|cost|timeout|duration|length)|at (most|least)|up to|"
    r"max(imum)?|min(imum)?|which port|what port|how quickly|by when|until when|what deadline)\b", re.IGNORECASE)
# "What size is the viewport if I never call cy.viewport?" asks for the default as surely as "default" does.
_DEFAULT = re.compile(r"\bdefaults?\b|\bby default\b|\bout of the box\b|"
                      r"\b(?:if|when|unless) (?:i|we|you) (?:never|don't|do not|haven't|have not) (?:call|set|specify|pass|"
                      r"configure|change|provide|give|touch|override)\b|"
                      r"\bwithout (?:setting|specifying|passing|configuring|changing|calling|providing|overriding)\b",
                      re.IGNORECASE)
_HOWTO = re.compile(
    r"^\s*(how (do|can|should|would) (i|we|you|one)|how to|what (do|can|should) (i|we) do|what steps|"
    r"steps to|where do i|is there a way to)\b|\bwhat can we do\b|\bany idea\b", re.IGNORECASE)
_REASON = re.compile(r"^\s*why\b|\bwhat (happened|went wrong|causes|caused)\b|\bwhat am i doing wrong\b", re.IGNORECASE)
_YESNO = re.compile(
    r"^\s*(is|are|can|could|does|do|did|will|would|should|may|must|has|have|was|were|am)\b", re.IGNORECASE)
# Code-like tokens and bare numbers ("exit status 3", "port 8443", "a 301"): a sentence naming them is about them.
_IDENTIFIER = re.compile(r"`([^`]+)`|(?<![\w.])((?:--?)?[A-Za-z][\w]*(?:[-_.:/][\w]+)+|[A-Z]{2,}-\d+|\d+(?:\.\d+)*)(?![\w])")
_VERSION = re.compile(r"\b(?:v|version\s*|release\s*)(\d+(?:\.\d+)?)\b|\b(\d+\.\d+)\b", re.IGNORECASE)



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

    @property
    def wants_number(self) -> bool:
        return self.kind == QUANTITY


_INTERROGATIVE = re.compile(r"\bhow (many times|many|much|long|often|soon|far)\b|\b(the )?number of\b", re.IGNORECASE)
_COUNTED = re.compile(r"\bhow many ((?:[a-z][\w-]*\s+)*[a-z][\w-]*)", re.IGNORECASE)
_CONTRACTION = re.compile(r"(?<=[a-z])['\u2019](re|ve|m|ll|d|s)\b|(?<=[a-z])n['\u2019]t\b", re.IGNORECASE)


def analyze(text: str, *, ignore: frozenset[str] = frozenset(), code: frozenset[str] = frozenset()) -> Question:
    """Classify a question; `ignore` holds terms too common on the site to say anything (its product name).

    `code` holds the hyphened words the site writes as code: "create-astro" named bare is an identifier
    there, while "non-payment" or "built-in" is an English word a span must not score as naming code.
    """
    plain = _CONTRACTION.sub(lambda m: "" if m.group(1) else " not", text)
    plain = _INTERROGATIVE.sub(" ", plain)  # "how many times" asks for a number; "times" is not what it is about
    terms = frozenset(key_terms(plain))
    focus = frozenset(t for t in terms if t not in ASKING and t not in ignore and t not in TERM_STOPWORDS)
    idents = frozenset(
        (m.group(1) or m.group(2)).lower().strip("`")
        for m in _IDENTIFIER.finditer(text)
        if not _VERSION.fullmatch(m.group(1) or m.group(2))
        and (m.group(1) or not is_hyphened_word(m.group(2)) or m.group(2).lower() in code)
    )
    versions = frozenset(a or b for a, b in _VERSION.findall(text))
    unit = min(key_terms(counted_noun(asked_sentence(text))), default="")
    return Question(text, _kind(text), terms, focus or terms, idents, versions, unit)


def counted_noun(text: str) -> str:
    """What "how many …" counts: the last word of the noun phrase after it ("" when it asks no count).

    English puts the head of a compound last: "how many refund exceptions can …" counts exceptions, not
    refunds; "how many API keys" counts keys. The phrase ends at the first function word ("can", "of", "per").
    """
    found = _COUNTED.search(text)
    if not found:
        return ""
    phrase: list[str] = []
    for word in found.group(1).split():
        if word.lower() in TERM_STOPWORDS:
            break
        phrase.append(word)
    return phrase[-1] if phrase else ""


_MEASURE_ASKED = re.compile(r"\bhow (long|much|big|large|often|soon|far|old)\b|\bwhen\b", re.IGNORECASE)


def asks_a_measure(text: str) -> bool:
    """True when a question asks how long, how big or when ("…, and for how long?"): a duration can answer it."""
    return bool(_MEASURE_ASKED.search(text))


def _kind(text: str) -> Kind:
    asked = asked_sentence(text)
    if _DEFAULT.search(asked):
        return DEFAULT
    if _QUANTITY.search(asked):
        return QUANTITY
    if _HOWTO.search(asked):
        return HOWTO
    if _REASON.search(asked):
        return REASON
    if _YESNO.search(asked):
        return YESNO
    return OPEN


# "…, and what/how/can …?": one sentence asking a second question, which needs an answer of its own.
_SECOND_ASK = re.compile(r",?\s+and\s+(?=(?:what|which|how|when|where|why|who|can|could|does|do|did|is|are|will|would|"
                         r"should|may)\b)", re.IGNORECASE)


def question_parts(text: str) -> list[str]:
    """The questions a text asks, each with the sentences before it; `[text]` when it asks one.

    "Which plan do I need for Jira, and can I attach an existing ticket?" asks two things, and the best
    span for the whole is often the answer to only one of them. Each part keeps the context sentences
    before the asking one ("One build records twice. Which package …, and how do I …?").
    """
    asked = asked_sentence(text)
    pieces = [p.strip(" ,?") for p in _SECOND_ASK.split(asked)]
    if len(pieces) < 2 or any(len(p.split()) < 3 for p in pieces):
        return [text]
    context = text[: text.rfind(asked)].strip()
    return [f"{context} {p[0].upper()}{p[1:]}?".strip() for p in pieces]


def asked_sentence(text: str) -> str:
    """The sentence that asks: "We're on EU VAT. Will you add VAT?" asks its second sentence."""
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", text.strip()) if s]
    questions = [s for s in sentences if s.endswith("?")]
    return questions[-1] if questions else text
