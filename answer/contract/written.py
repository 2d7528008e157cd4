"""A short answer in the model's words, written on top of the proof and checked sentence by sentence.

The offline stage decides the outcome and shows verified quotes in well under
a second. What only a model adds is saying the answer in one plain sentence,
turning two quotes into steps, answering "yes". So the model is handed the
question and only the quotes already verified and shown (each numbered, with
where it sits: a few hundred tokens, never whole sections), and asked for at
most a few sentences, each ending in the numbers of the quotes it rests on.

Every sentence is a claim. It is shown only when the support checker (the
same numbers, negations and key terms test the claims pass) finds it
supported by the quotes it names, and rests only on those of them that say it
(`_narrowed`: quotes read together lend words from one and a number from
another); one they only partly support may be shown as the quote's own
sentence it restates (`_in_quote_words`); any other sentence naming no quote,
or one the quotes do not support, is dropped and kept for the audit. A command
block the model writes is kept under its sentence only when a quote it rests
on introduces that whole block with what the sentence says (`_introduces`);
otherwise it is shown under the quote's own introducing sentence
(`_in_quote_code`), or not at all.
The written answer never changes the outcome: refusals and Related passages
never reach the model, and a reply saying the quotes do not answer
(`NOT ANSWERED`) is recorded and shows nothing (small models say it of right
answers: docs/llm.mdx). Sentences without quote numbers, which small models
often write, rest on the fewest quotes that together support them, if any do.
A "Yes." or "No." is shown only when the quote the sentence rests on answers so
itself (an FAQ's "No. …"), else the sentence is shown without it.

A reply with a sentence the checker dropped may be asked for again, as a
sample (`Writer(attempts=…)`), when at the first reply's pace it would still
end within `again_within` seconds of the question's first request (the written
answer's latency is what a visitor waits for); the reply with the most shown sentences is kept (the
first wins a tie) and every other reply is kept for the audit. Every reply is
checked the same way, so asking again can only show more checked sentences,
never an unchecked one. A decline or a failure is not asked again.
"""

from __future__ import annotations

import functools
import itertools
import re
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from ingest.context_sentences import leans_back
from ingest.mdx import FENCE_LINE
from ingest.normalize import normalize
from ingest.text import (
    NAME_IN_SENTENCE,
    NUMBER_WITH_UNIT,
    TERM_STOPWORDS,
    compound_parts,
    has_negation,
    key_terms,
    numerals,
    stem,
)

from .reply import CODE_SPAN, SENTENCE_ENDS, fence_cut, numbered, unemphasized, units
from .spans import ITEM, SENTENCE, Unit, blocks, inside_code, introduced_block, sentence_starts
from .spans import units as quote_units
from .support import (
    PARTIAL,
    SUPPORTED,
    UNIT_FAMILIES,
    UNSUPPORTED,
    DeterministicChecker,
    Support,
    SupportChecker,
    contradicts,
    numbers,
    sentence_units,
)
from .verify import Claim

DECLINED = "NOT ANSWERED"
MAX_UNITS = 6  # sentences or steps read from a reply; the prompt asks for fewer
MAX_QUOTE_CHARS = 700  # per quote in the prompt: a long code block is cut, the check still reads it whole
_NAMES_NONE = "names no quote"
_SAYS_NOTHING = "says nothing"
_REPEATS = "repeats"
_BARE = "a command with no sentence to say what it does"
SAME_SENTENCE = 0.8  # share of a quote's sentence's key terms a shown sentence already uses: it says the same
_DIGIT = re.compile(r"\d")
_RESTATED = DeterministicChecker(partial_at=0.5)  # a model's sentence against the one quote sentence it may borrow
_ITEM = re.compile(r"^(?:[-*+]|\d{1,3}[.)])\s+")  # a list item's marker, not part of its sentence
RESTATES = 0.6  # share of what a sentence adds to the question (words and numbers) a quote's sentence must hold
SAME_SUBJECT = 0.5  # … and of the words it shares with the question: the same thing is what it is about
# What the quotes a sentence names lack (they may be the wrong quotes), as against what they contradict.
_LACKED = ("number not in the quotes", "claim terms not in the quotes")
MIN_TERMS = 2  # key terms or numbers a shown sentence carries: "Here's how you can do it:" says nothing to check
# "The documentation states that …", "According to the docs, …": the sentence reports the quotes; what it reports
# is what is checked (a "does not mention" keeps its negation, so the negation check still reads it).
_REPORTED = re.compile(r"^(?:according to (?:the )?(?:docs|documentation|guide),\s*|"
                       r"(?:the |this )?(?:docs|documentation|guide|page|section)(?: also)?\s+"
                       r"(?:says?|states?|mentions?|notes?|explains?)(?:\s+that)?\s+)", re.IGNORECASE)

INSTRUCTIONS = (
    "You answer a question about a product's documentation. The numbered quotes below were taken from the "
    "documentation and checked to answer it. Answer with the quotes' own words: keep their wording, shorten "
    "them, join them; do not reword the question.\n"
    "- Begin with the sentence that answers the question; write at most 3 short sentences, or a numbered list "
    "of at most 5 steps.\n"
    "- End every sentence or step with the numbers of the quotes it rests on, like [1] or [1][2].\n"
    "- Copy commands, option names and values exactly as the quotes write them; put a command in a ``` block "
    "after the sentence that introduces it.\n"
    "- Say nothing the quotes do not say, and leave out a quote that does not help.\n\n"
    "Example. Question: Will my old logs disappear if I stay on the free tier? Quotes: [1] Logs are kept for 30 "
    "days on the Free plan. [2] Paid plans keep logs for one year.\n"
    "Answer: Logs are kept for 30 days on the Free plan [1]; paid plans keep logs for one year [2].")


@dataclass(frozen=True)
class Passage:
    """One verified quote the model may rest a sentence on: `number` is how the prompt names it."""

    number: int
    quote: str
    where: str  # "Page › Heading"
    claim: int  # the index of the shown claim it is quoted in


@dataclass(frozen=True)
class Sentence:
    """One sentence or step of the written answer, with the quotes it names and the checker's verdict."""

    text: str
    passages: tuple[int, ...]
    status: str  # supported, partial, unsupported, "names no quote", "says nothing", "repeats" or "unknown quote"
    reasons: tuple[str, ...] = ()
    step: int = 0  # its number in a numbered list (0: a sentence)
    code: str = ""  # a command block after it: a whole block its quote introduces with this sentence
    instead_of: str = ""  # the model's sentence, when what is shown is the quote's own sentence it restates

    @property
    def shown(self) -> bool:
        return self.status == SUPPORTED


@dataclass(frozen=True)
class Written:
    """The model's short answer: what is shown, what was dropped and why, and the raw reply for the audit."""

    sentences: tuple[Sentence, ...] = ()  # shown, in the order written
    dropped: tuple[Sentence, ...] = ()
    declined: bool = False  # the model said the quotes do not answer
    raw: str = ""
    model: str = ""
    error: str = ""  # the model could not be reached or replied nothing usable: the outcome stands as it was
    passages: tuple[Passage, ...] = field(default=(), repr=False)
    others: tuple[str, ...] = ()  # the raw replies of the other attempts, not shown (the audit keeps them)

    @property
    def shown(self) -> bool:
        return bool(self.sentences) and not self.declined


class Completion(Protocol):
    """A chat model behind litellm: one plain-text reply to a list of messages."""

    name: str

    def reply(self, messages: list[dict[str, str]], *, sample: int = 0, timeout: float | None = None) -> str:
        """The reply; `sample` > 0 asks for another sample of it (sampled, seeded by the number), within `timeout`."""
        ...


@runtime_checkable
class CitingModel(Protocol):
    """A model whose provider cites what it was given (Anthropic, Gemini: provider_citations.py).

    It is handed the quotes themselves, as documents, and returns the reply with each cited stretch followed by
    the numbers of the quotes the provider says it rests on, so the reply is read and checked like any other.
    """

    name: str

    def cite(self, question: str, passages: Sequence[Passage], thread: Sequence[str]) -> str: ...


def passages_of(claims: Sequence[Claim]) -> tuple[Passage, ...]:
    """The verified quotes of the shown claims, numbered from 1 in reading order, each once, with where each sits."""
    out: list[Passage] = []
    seen: set[tuple[str, int, int]] = set()
    for index, claim in enumerate(claims):
        for citation in claim.citations:
            key = (citation.chunk_id, citation.start, citation.end)
            if key not in seen:
                seen.add(key)
                path = [citation.title, *(h for h in citation.heading_path[-1:] if h != citation.title)]
                out.append(Passage(len(out) + 1, citation.quote, " › ".join(p for p in path if p), index))
    return tuple(out)


def prompt(question: str, passages: Sequence[Passage], thread: Sequence[str] = ()) -> list[dict[str, str]]:
    """The messages: the instructions, then the question (after the thread's earlier questions) and the quotes."""
    earlier = "".join(f"Earlier question: {q}\n" for q in thread[-2:])
    quotes = "\n\n".join(f"[{p.number}] ({p.where})\n{_cut(p.quote)}" if p.where else f"[{p.number}]\n{_cut(p.quote)}"
                         for p in passages)
    return [{"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": f"{earlier}Question: {question}\n\nQuotes:\n\n{quotes}"}]


def _cut(quote: str) -> str:
    return quote if len(quote) <= MAX_QUOTE_CHARS else quote[: MAX_QUOTE_CHARS - 1] + "…"


def read_reply(text: str, passages: Sequence[Passage], checker: SupportChecker, model: str = "", *,
               question: str) -> Written:
    """The reply checked: each sentence or step shown only when the quotes it names support it, or, when they
    only partly do, in the words of the quote's sentence it restates (`_in_quote_words`)."""
    if text.strip().upper().startswith(DECLINED):
        return Written(declined=True, raw=text, model=model, passages=tuple(passages))
    by_number = {p.number: p for p in passages}
    read: list[Sentence] = []  # every sentence in the order written, shown or not
    answer_word: Sentence | None = None  # a "No." written alone, waiting for the sentence after it
    for unit, step, code in units(text, by_number)[:MAX_UNITS]:
        plain, cited = numbered(unit)
        code = code if code.strip() else ""  # a block with nothing in it is no command
        if not plain and code:  # a command with no sentence of its own: shown only under its quote's (below)
            read.append(Sentence("", tuple(n for n in cited if n in by_number), _SAYS_NOTHING, (_BARE,), step, code))
            continue
        if not plain:
            continue
        held, answer_word = answer_word, None
        if _ANSWER_WORD.fullmatch(plain) and not step and not code:
            if held is not None:
                read.append(held)
            answer_word = Sentence(plain, tuple(n for n in cited if n in by_number), _SAYS_NOTHING, (_ALONE,))
            continue
        if held is not None and not step:  # "No." then "A self-hosted version …": read as one sentence
            plain = f"{held.text.rstrip('.!,:; ')}. {plain}"
        elif held is not None:
            read.append(held)
        sentence = _checked(plain, cited, step, code, passages, checker)
        read.append(sentence)
        if code and sentence.shown and not sentence.code:  # the command, apart: under its quote's introduction, if any
            read.append(Sentence("", sentence.passages, _SAYS_NOTHING, (_BARE,), step, code))
    if answer_word is not None:
        read.append(answer_word)
    for at, sentence in enumerate(read):  # after the whole reply: a quote's sentence never repeats a later one
        if not sentence.shown:
            others = [s for s in read if s.shown and s is not sentence]
            before = [s for s in read[:at] if s.shown]
            read[at] = (_in_quote_code(sentence, passages, others, before) or _in_quote_words(sentence, question, passages, others)
                        or sentence)
    for at in _repeats(read):
        read[at] = replace(read[at], status=_REPEATS, reasons=("it repeats a sentence shown beside it",))
    for at in _dangling(read, passages):
        read[at] = replace(read[at], status=PARTIAL, reasons=(
            "it points back at a sentence before it that rests on another quote",))
    return Written(tuple(s for s in read if s.shown), tuple(s for s in read if not s.shown), raw=text, model=model,
                   passages=tuple(passages))


def _dangling(read: Sequence[Sentence], passages: Sequence[Passage]) -> list[int]:
    """Where a shown sentence in the model's words points back ("They are deleted after 30 days [2].") at anything
    but what the quote sentence it restates points back at: the shown sentence before it must rest on the same
    quote, on the sentence right before (when both are found in it). Its "they" is the quote's, not whatever the
    visitor just read. The first sentence shown pointing back ("This directory contains …") points at what was
    asked and its quote's chip (so it does when the sentence before it was dropped: the audit shows both)."""
    by_number = {p.number: p for p in passages}
    dangling, before = [], None
    for at, sentence in enumerate(read):
        if not sentence.shown or not sentence.text:
            continue
        if (before is not None and not sentence.instead_of and _reads_on(_said(sentence.text)[2])
                and not _follows(before, sentence, by_number)):
            dangling.append(at)
            continue
        before = sentence
    return dangling


def _follows(before: Sentence, sentence: Sentence, by_number: Mapping[int, Passage]) -> bool:
    """Whether a sentence may point back at the one shown before it: they share a quote, and in it the sentence
    it restates comes right after (or is) the one the sentence before restates, when both are found there."""
    for number in set(before.passages) & set(sentence.passages):
        units = [u.strip() for u in sentence_units(by_number[number].quote)]
        was, now = _said_at(before.text, units), _said_at(_said(sentence.text)[2], units)
        if was is None or now is None or now in (was, was + 1):
            return True
    return False


def _said_at(text: str, units: Sequence[str]) -> int | None:
    """Which of a quote's sentences says the text alone, if one does."""
    return next((i for i, unit in enumerate(units) if _PART.check(text, [unit]).status == SUPPORTED), None)


def _repeats(read: Sequence[Sentence]) -> list[int]:
    """Where a shown sentence (not a step: a procedure may say "Restart the service" twice) says what another
    shown one says: a model may write one twice. Of those with the same words, one with a command is kept over
    one without, and one of each command."""
    kept: dict[str, list[tuple[int, str]]] = {}  # (where, its command) of the shown sentences with these words
    repeats = []
    for at, sentence in enumerate(read):
        if not sentence.shown or sentence.step:
            continue
        same = kept.setdefault(" ".join(sentence.text.casefold().rstrip(".:;!").split()), [])
        if same and (not sentence.code or any(_same_code(sentence.code, code) for _, code in same)):
            repeats.append(at)
            continue
        repeats += [where for where, code in same if not code]
        same[:] = [(where, code) for where, code in same if code] + [(at, sentence.code)]
    return sorted(repeats)


def _checked(plain: str, cited: Sequence[int], step: int, code: str, passages: Sequence[Passage],
             checker: SupportChecker) -> Sentence:
    """One sentence or step of the reply with the checker's verdict on it against the quotes it rests on.

    A "Yes," or "No." it opens with is no claim the check can read: the rest is checked, and the word is shown only
    when the quote answers so itself (`_answered_so`); otherwise the sentence is shown without it.
    """
    lead, said, checked = _said(plain)
    by_number = {p.number: p for p in passages}
    cites = tuple(dict.fromkeys(n for n in cited if n in by_number))
    if cited and len(cites) < len(set(cited)):  # it rests on a quote it was never given: not shown
        return Sentence(plain, cites, "unknown quote", ("it cites a quote number it was not given",), step, code)
    if not cites:  # a small model often leaves the numbers out: the fewest quotes that support it, if any
        cites, closest = _supporting(checked, passages, checker)
        if not cites:
            return Sentence(plain, (), _NAMES_NONE, ("no quote supports it, and it names none", *closest),
                            step, code)
    quotes = [by_number[n].quote for n in cites]
    spans = _code_spans(checked)
    if step and len(spans) == 1 and not code and not re.search(r"[^\W\d_]", CODE_SPAN.sub("", checked)):
        return Sentence(plain, cites, _SAYS_NOTHING, (_BARE,), step, spans[0].strip("`"))  # "2. `ferry login`"
    empty = _says_nothing(checked, code, step)  # whether the command is its quote's, `_introduces` decides below
    if empty:
        return Sentence(plain, cites, _SAYS_NOTHING, (empty,), step, code)
    support = checker.check(checked, quotes)
    if support.status == SUPPORTED and len(cites) > 1:  # together they do: which of them say it?
        cites, support = _narrowed(checked, [by_number[n] for n in cites], checker)
        quotes = [by_number[n].quote for n in cites]
    altered = [span for span in _code_spans(checked) if not any(_verbatim(span.strip("`"), q) for q in quotes)]
    if support.status == SUPPORTED and altered:  # "`ferry deploy --prod`" where the docs say `ferry deploy`
        support = Support(PARTIAL, (f"code not in the quotes as written: {', '.join(altered)}",))
    introducing = tuple(n for n in cites if code and _introduces(checked, by_number[n].quote, code))
    kept_code = code if introducing else ""
    cites = introducing or cites  # its chips lead to the quotes that give its command so
    if code and not kept_code and checked.rstrip().endswith(":"):
        return Sentence(plain, cites, _SAYS_NOTHING, ("its command is not the one its quotes introduce so",),
                        step, code)  # the quote's own introduction may still show it (`_in_quote_code`)
    if support.status != SUPPORTED:  # dropped as written, for the audit; its command may yet be shown
        return Sentence(plain, cites, support.status, support.reasons, step, code)
    reasons = support.reasons + (("its command was left out: no quote it rests on introduces it so",)
                                 if code and not kept_code else ())
    if not lead:
        return Sentence(plain, cites, support.status, reasons, step, kept_code)
    answer = _answered_so(lead.group(1), checked, quotes, checker)
    reasons += () if answer else (f"its “{lead.group(1)}” was left out: no quote it rests on answers so",)
    return Sentence(f"{answer} {said}" if answer else said, cites, support.status, reasons, step, kept_code)


def _said(plain: str) -> tuple[re.Match[str] | None, str, str]:
    """A sentence's leading "Yes,"/"No." (if any), the sentence without it, and what it says, the words the check
    reads: without "The docs state that" too (a "does not mention" keeps its negation for the negation check)."""
    lead = _LEADING_ANSWER.match(plain)
    said = plain[lead.end():] if lead else plain
    said = said[:1].upper() + said[1:]
    return lead, said, _REPORTED.sub("", said, count=1)


def _in_quote_words(sentence: Sentence, question: str, passages: Sequence[Passage],
                    shown: Sequence[Sentence]) -> Sentence | None:
    """The quote's own sentence, shown in place of a sentence the quotes it names do not bear out, when it says
    the same.

    A small model restates a quote in words of its own ("1000px wide and 660px tall" for "the width to `1000px`
    and the height to `660px`"), and the key-term test, rightly strict, drops it: the answer the visitor needed
    goes missing while a side remark is shown. It also names the wrong quote ("… in the last 24 hours [1]" when
    the 24 hours are in [3]), which the number test, rightly, rejects. What the model meant is in a quote it was
    given, verified verbatim, so one sentence of that quote is shown instead, in the docs' words, when:

    - the model's sentence adds to the question a number, or at least `MIN_TERMS` words ("Yes, there is a usage
      cap on the MCP server" says the question back, and borrows nothing; "… is three" answers "how many");
    - that one sentence partly supports it by the deterministic test (`_RESTATED`): every number (but those the
      question states: "… got a 409 because …" says the visitor's number back), each beside the name the
      sentence gives it, the same negation (a "No, deleted events are not exported" never borrows
      "Events can be exported as CSV"), and half its key terms;
    - it holds every name the model's sentence shares with the question or the quote ("30 days on the Free
      tier" never borrows "30 days on paid plans") and `RESTATES` of the words and numbers the model's sentence
      adds to the question;
    - it is prose (no code block, list item or table row, no cut inside a code span) the visitor does not
      already read, for a model's sentence no shown sentence already says;
    - it is about its own subject (not "They …", "Otherwise, …", "After 30 days, these logs …" unless it opens
      its quote), and, from a quote the model's sentence did not name, holds `SAME_SUBJECT` of the words the model's
      sentence shares with the question (its quote does, for a sentence that named none), what it says it is about (a sentence on translating the UI
      strings is no answer to what French visitors see of an untranslated page);
    - it is a sentence of a quote the model named, or, when none of those has one, of any quote it was given.

    A sentence its quotes contradict (a negation, a number another name has) borrows nothing: what it meant is
    not what the docs say, and a sentence beside it would hide that. One they lack a number or words for may
    have named the wrong quote.

    The deterministic test, not the configured checker, so a model judge is never called again here. The
    model's words stay in the audit (`Sentence.instead_of`); visitors get the quote's sentence only.
    """
    if sentence.status not in (PARTIAL, UNSUPPORTED, _NAMES_NONE) or sentence.code:
        return None
    if sentence.status == UNSUPPORTED and not all(r.startswith(_LACKED) for r in sentence.reasons):
        return None  # the quotes it names say otherwise (a negation, another name's number): what it meant is wrong
    _, _, said_words = _said(sentence.text)
    claim, question = numerals(said_words), numerals(question)  # "three" and "3" are one number to every rule
    words = {term for term in key_terms(claim) - key_terms(question) if not _DIGIT.search(term)}  # numbers apart
    said = _values(claim) - _values(question)
    if not said and len(words) < MIN_TERMS:
        return None
    if any(key_terms(claim) | _values(claim) <= key_terms(numerals(s.text)) | _values(s.text) for s in shown):
        return None  # a shown sentence already says all it says
    taken = [key_terms(s.text) for s in shown]
    restated = _without(claim, question)  # "… got a 409 because …": the visitor's number, not a claim
    about = key_terms(claim) & key_terms(question)  # what the sentence says it is about
    named = [p for p in passages if p.number in sentence.passages]
    for group in (named, [p for p in passages if p not in named]) if named else (list(passages),):
        best: tuple[int, str, Passage] | None = None
        for passage in group:
            if contradicts(claim, passage.quote):
                continue  # "Yes, Free plans include SSO" over "Free plans do not include SSO. Enterprise plans …"
            names = _names(claim) & (_names(question) | _names(passage.quote))
            whole = key_terms(passage.quote) | key_terms(compound_parts(passage.quote))
            for own in _prose_sentences(passage.quote):
                if _reads_on(own) and not _opens(passage.quote, own):
                    continue  # "After 30 days, these logs are deleted.": which logs, the sentence before says
                terms = key_terms(own)
                share = len(words & terms) + len(said & _values(own))
                if share < RESTATES * (len(words) + len(said)) or not names <= _names(own) or leans_back(own):
                    continue  # "They are deleted after 30 days." is about whatever the sentence before names
                subject = terms | key_terms(compound_parts(own)) if named else whole
                if passage not in named and len(about & subject) < SAME_SUBJECT * len(about):
                    continue  # a quote it did not name: a sentence on translating UI strings for one on pages
                if _RESTATED.check(restated, [own]).status == UNSUPPORTED:
                    continue
                if any(len(terms & t) >= SAME_SENTENCE * len(terms) for t in taken):
                    continue  # the visitor already reads it
                if best is None or share > best[0]:
                    best = (share, own, passage)
        if best is not None:
            _, own, passage = best
            return Sentence(unemphasized(own), (passage.number,), SUPPORTED,
                            (f"shown in the words of quote [{passage.number}]: the model's sentence "
                             f"{_FELL_SHORT[sentence.status]}",), sentence.step, instead_of=sentence.text)
    return None


_FELL_SHORT = {PARTIAL: "was partly supported", UNSUPPORTED: "was not supported by the quotes it named",
               _NAMES_NONE: "named no quote", _SAYS_NOTHING: "said nothing of it"}


def _in_quote_code(sentence: Sentence, passages: Sequence[Passage], shown: Sequence[Sentence],
                   before: Sequence[Sentence] = ()) -> Sentence | None:
    """A command the model copied from a quote, shown under the quote's own sentence that introduces it, when the
    model's sentence about it is not borne out, says less or other than that sentence, or is missing.

    The model copies the command right and says what it does in words of its own ("To upgrade Starlight …, use
    the following command:" over "You can update it … by running the following command in your terminal:"), or
    writes the block with no sentence at all. The command is what the visitor came for, and the quote holds it
    with the sentence that says what it does: shown together, both verbatim, from a quote the sentence named
    (else any quote given), unless the quote contradicts the model's sentence or the visitor already reads the
    command. The command must be the quote's whole block (a block's first line under "To update plugins too,
    run:" is another command), and the sentence the one the quote introduces it with (`_introduction`); a
    command the quote gives inline ("Install it with Homebrew: `brew install ferry`.") is shown in its sentence.
    """
    if not sentence.code or sentence.status not in (PARTIAL, UNSUPPORTED, _NAMES_NONE, _SAYS_NOTHING):
        return None
    if sentence.status == UNSUPPORTED and not all(r.startswith(_LACKED) for r in sentence.reasons):
        return None
    if any(_same_code(sentence.code, s.code) or _inline(sentence.code, s.text) for s in shown):
        return None
    named = [p for p in passages if p.number in sentence.passages]
    claim = numerals(_said(sentence.text)[2]) if sentence.text else ""
    for passage in named or passages:
        introduction, own = _introduction(passage.quote, sentence.code)
        if not introduction or (claim and contradicts(claim, passage.quote)):
            continue
        last = next((s.text for s in reversed(before) if s.text), "")
        if introduction != own and last and introduction.casefold().startswith(last.casefold().rstrip(".")):
            introduction = own  # the sentence it reads on from is the one shown just above it
        return Sentence(unemphasized(introduction), (passage.number,), SUPPORTED,
                        (f"shown with the words of quote [{passage.number}] that introduce its command: the model's "
                         f"sentence {_FELL_SHORT[sentence.status]}",), sentence.step,
                        "" if _inline(sentence.code, introduction) else sentence.code,
                        instead_of=sentence.text or "(a command alone)")
    return None


def _introduction(quote: str, code: str) -> tuple[str, str]:
    """The quote's sentence (or list item) that introduces the code block equal to `code`, shown with the sentence
    before it when it reads on from it, and the introducing sentence alone; ("", "") when none does, or the one
    before reads on too.

    A sentence introduces the block right after it (`introduced_block`) when it ends in a colon, or in a period
    when a code span in it is the block's command ("Add the adapter with `ferry add`." over `ferry add
    adapter-node`; "Check your Ferry version first." introduces nothing). A list item introduces only a block of
    its own and only with a colon ("2. Log in with `ferry login`." is no introduction to a block after the list).
    A one-line command the quote gives inline, as a whole code span of a sentence, is introduced by that sentence.
    """
    quote = "\n".join(part for line in quote.split("\n") for part in fence_cut(line))  # "… marker: ```js"
    layout = blocks(quote)
    quoted = quote_units(quote)
    found = [u if u.kind == SENTENCE else replace(u, kind=SENTENCE) for u in quoted
             if u.kind in (SENTENCE, ITEM) and not _NESTED.search(u.text.strip())]  # a nested item is its own
    items = {u.start for u in quoted if u.kind == ITEM}
    at, own = _introducing(quote, code, found, layout, items)
    if at is None:
        return "", ""
    unit = found[at]
    if not _reads_on(own):
        return own, own
    before = found[at - 1] if at else None  # "To undo this, run:" opening its quote: undo what, it never says
    if (before is None or before.block != unit.block or unit.start in items or before.start in items
            or _reads_on(before.text)):
        return "", ""
    return " ".join(quote[before.start:unit.end].split()), own


_NESTED = re.compile(r"\n\s*(?:[-*+]|\d{1,3}[.)])\s")


def _introducing(quote: str, code: str, found: Sequence[Unit], layout: list[tuple[int, int, str]],
                 items: set[int]) -> tuple[int | None, str]:
    """Which of the quote's sentences introduces the command, and its words: the one before its block, else one
    giving it inline that does not deny it ("Never run `ferry self-update` during a deploy." introduces nothing)."""
    for at, unit in enumerate(found):
        block = introduced_block(quote, unit, layout)
        if block is None or block[2] != "code" or not _same_code(_block_code(quote[block[0]:block[1]]), code):
            continue
        own = " ".join(_ITEM.sub("", unit.text, count=1).split())
        if own.rstrip("*_ ").endswith(".") and (unit.start in items or not _names_command(own, code)):
            continue  # a remark before the block, not its introduction
        return at, own
    for at, unit in enumerate(found):
        own = " ".join(_ITEM.sub("", unit.text, count=1).split())
        if _inline(code, own) and not has_negation(normalize(own).text):
            return at, own
    return None, ""


def _names_command(sentence: str, code: str) -> bool:
    """Whether a code span of the sentence is the block's command, or its start up to a word's end."""
    first = _code_lines(code)[0].strip()
    return any(first == span or first.startswith(span + " ") for span in (m.strip("`") for m in _code_spans(sentence)))


def _inline(code: str, sentence: str) -> bool:
    """Whether a one-line command is a whole code span of the sentence."""
    lines = _code_lines(code)
    return len(lines) == 1 and bool(lines[0].strip()) and f"`{lines[0].strip()}`" in sentence


# A sentence that reads on from the one before: it opens on a connective, or points back early ("To undo this,
# run:", "These are updated with:"), not "this page" or "the following command" nor a pronoun late in it ("… so
# you can run it from any directory:").
_CONNECTIVE = re.compile(r"^(?:alternatively|next|afterwards|after that|also|finally|or|additionally|similarly|"
                         r"likewise|again|now)\b", re.IGNORECASE)
_POINTING = re.compile(r"\b(?:this|these|those|it|its|they|them|their)\b|\bthat(?=\s*(?:[,.:;]|$))",
                       re.IGNORECASE)  # "To undo that, run:"; not "names that read as …" nor "so that"
_NOT_POINTING = re.compile(r"\b(?:this|that) (?:page|guide|section|tutorial|document)\b|\bthis (?:command|snippet|"
                           r"example|code)\s*:?$", re.IGNORECASE)  # the page itself; "… run this command:" points ahead


def _reads_on(sentence: str) -> bool:
    """Whether a sentence leans on the one before it ("Then run:", "To undo this, run:")."""
    text = _ITEM.sub("", CODE_SPAN.sub("", sentence).strip(), count=1)
    return leans_back(text) or bool(_CONNECTIVE.match(text)) or bool(
        _POINTING.search(_opening_clause(_NOT_POINTING.sub("", text))))


def _opening_clause(sentence: str) -> str:
    """Where a sentence names what it is about: its subject (`_subject`: "After 30 days, these logs"), else, with no
    auxiliary verb found, up to its first comma within six words ("To undo this,"), else its first three words."""
    subject = _subject(sentence)
    if subject != sentence:
        return subject
    head = re.split(r"[,:;]", sentence, maxsplit=1)[0]
    return head if head != sentence and len(head.split()) <= 6 else " ".join(sentence.split()[:3])


def _code_spans(text: str) -> list[str]:
    """The text's `code spans`, backticks and all (`reply.CODE_SPAN`: "``a `b` c``" is one)."""
    return [match.group() for match in CODE_SPAN.finditer(text)]


def _block_code(block: str) -> str:
    """A fenced block's code, without its fence lines."""
    lines = block.split("\n")
    inner = lines[1:-1] if len(lines) > 1 and FENCE_LINE.match(lines[-1]) else lines[1:]
    return "\n".join(inner)


def _same_code(a: str, b: str) -> bool:
    """Two commands are the same when their lines are, trailing spaces, blank edges and a common indent aside (a
    block in a list item is indented with it)."""
    return _code_lines(a) == _code_lines(b)


def _code_lines(code: str) -> list[str]:
    return [line.rstrip() for line in textwrap.dedent(code).strip("\n").split("\n")]


def _introduces(sentence: str, quote: str, code: str) -> bool:
    """Whether the quote introduces this command with what the sentence says, no more and no less: only then is
    the command shown under the model's words ("To migrate the database, use:" over a quote's `ferry db reset`
    that "deletes all data" is another command's sentence, and "To start over, reset the database with:" leaves
    out the "delete all data" of the docs' own). Anything else shows the quote's introduction (`_in_quote_code`)."""
    shown, own = _introduction(quote, code)
    if not own or shown != own or _inline(code, own) or _reads_on(sentence):
        return False
    said, introduction = sentence.rstrip(":. "), own.rstrip(":. ")
    return (_PART.check(said, [introduction]).status == SUPPORTED
            and _PART.check(introduction, [said]).status == SUPPORTED)


def _verbatim(code: str, quote: str) -> bool:
    """Whether a code span's text is the quote's as written: a whole code span or code line of it (or a function's
    name before its arguments: `cy.get` of `cy.get('.a')`), or a whole token of its prose. Never part of a
    command: `ferry deploy` is not `ferry deploy --dry-run`, nor `--cache` `--cache=false`."""
    code = code.strip()
    if not code:
        return True
    layout = blocks(quote)
    lines = [line.strip() for start, end, kind in layout if kind == "code"
             for line in _block_code(quote[start:end]).split("\n")]
    prose = "\n".join(quote[start:end] for start, end, kind in layout if kind != "code")
    spans = [span.strip("`").strip() for span in _code_spans(prose)]
    called = re.compile(rf"(?<![\w.$]){re.escape(code.removesuffix('()'))}\(")
    if any(c == code or c.removesuffix("()") == code.removesuffix("()") or called.match(c) for c in spans + lines):
        return True
    text = CODE_SPAN.sub(" ", prose)
    return bool(re.search(rf"(?<![\w./=@-]){re.escape(code)}(?![\w./=@-]|\s+-)", text))


def _without(text: str, question: str) -> str:
    """The text without the numbers the question states, as the question states them: the same unit, or none
    ("… got a 409 because …" says the visitor's 409 back; its "30 days" is not the question's "30 minutes").
    Their units stay, as words of the sentence."""
    asked = numbers(question)
    bare = {number.split(" ")[0] for number in asked}

    def drop(match: re.Match[str]) -> str:
        stated = next(iter(numbers(match.group())), match.group(1))
        value, _, unit = stated.partition(" ")
        if stated in asked or (value in bare and unit not in UNIT_FAMILIES):
            return match.group()[len(match.group(1)):]
        return match.group()

    return NUMBER_WITH_UNIT.sub(drop, text) if asked else text


def _subject(sentence: str) -> str:
    """What a sentence says something of: its words before its first verb ("After 30 days, these logs" in "After
    30 days, these logs are deleted."), or the whole sentence when no verb is found."""
    verb = _VERB.search(f" {sentence} ")
    return sentence[:verb.start()] if verb else sentence


def _opens(quote: str, sentence: str) -> bool:
    """Whether the sentence opens its quote (a list item's marker aside): nothing before it to point back at."""
    return _ITEM.sub("", quote.strip(), count=1).startswith(sentence)


def _values(text: str) -> set[str]:
    """The numbers a text states, without their units: "three times" and "3 attempts" both state 3 (the unit is
    the support check's to hold)."""
    return {number.split(" ")[0] for number in numbers(text)}


def _names(text: str) -> set[str]:
    """The capitalized names a text uses inside its sentences ("the Free plan"), stemmed: a plan, product or
    place a sentence is about."""
    return {stem(name.lower()) for name in NAME_IN_SENTENCE.findall(text)} - TERM_STOPWORDS


def _prose_sentences(quote: str) -> list[str]:
    """The sentences of a quote that read as prose on their own, a list item's without its marker: no code block,
    table row, quoted block or link, and never cut inside a `code span` (the segmenter does not know Markdown)."""
    starts = [at for at in sentence_starts(quote) if not inside_code(quote, at)]
    out = []
    for a, b in itertools.pairwise([*starts, len(quote)]):
        own = _ITEM.sub("", quote[a:b].strip(), count=1)
        if (own.endswith(SENTENCE_ENDS) and "\n" not in own and own.count("`") % 2 == 0 and "](" not in own
                and "|" not in own and not own.startswith(">")):
            out.append(own)
    return out


# "Yes." or "No." said before a sentence, alone or in it: nothing the check can hold to a quote, so it is shown only
# when a quote the sentence rests on opens with the same word and the first sentence after that word supports the
# sentence alone (an FAQ's "No. A self-hosted version is not available."): the quote's answer, not the model's
# guess, and not an answer the quote gives to something else before the sentence it says.
_ANSWER_WORD = re.compile(r"(yes|no)\s*[.!,:;]?", re.IGNORECASE)
_LEADING_ANSWER = re.compile(r"^(yes|no)\s*[.!,:;]\s+(?=\S)", re.IGNORECASE)
_QUOTE_ANSWER = re.compile(r"\s*(yes|no)[.!,:;](?=\s|$)", re.IGNORECASE)  # "No." answers; "No self-…" does not
_ALONE = "a yes or no with no sentence after it"


def _answered_so(word: str, claim: str, quotes: Sequence[str], checker: SupportChecker) -> str:
    """"Yes." or "No." as the quote that answers so writes it, when one does for this claim ("" otherwise)."""
    for quote in quotes:
        found = _QUOTE_ANSWER.match(quote)
        if not found or found.group(1).lower() != word.lower():
            continue
        rest = quote[found.end():].lstrip()
        later = [start for start in sentence_starts(rest) if start > 0]
        first = rest[: later[0]] if later else rest
        if checker.check(claim, [first]).status == SUPPORTED:
            return f"{found.group(1)}."
    return ""


def _says_nothing(sentence: str, code: str, step: int = 0) -> str:
    """Why a sentence is too empty to show ("" when it is not): it must state something the check can hold to its
    quotes, a sentence that introduces a block must bring the block, and only a step may be a command alone
    ("2. `npm run dev`")."""
    if sentence.rstrip().endswith(":") and not code:
        return "it introduces a command or list it does not give"
    if len(key_terms(numerals(sentence))) + len(numbers(sentence)) < MIN_TERMS:
        return "it states nothing the quotes could bear out"
    if not step and not re.search(r"[^\W\d_]", CODE_SPAN.sub("", sentence)):  # "; `npx astro add starlight`.": a name, no statement
        return "it names code and says nothing of it"
    return ""


def _supporting(sentence: str, passages: Sequence[Passage],
                checker: SupportChecker) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The fewest quotes that support an unnumbered sentence: the first that does alone, else the first two that
    do together, one part each ("… is 4 seconds, and the `timeout` option changes it": `_part_each`). Never
    three or more: a checker may be a model, so its calls stay few (measured: three or more showed no sentence
    more on any set).

    When none does, the sentence is dropped, and the audit is told how the closest quote fell short (the first
    that partly supports it, else the first quote), from the checks already made, so staff see why.
    """
    closest: tuple[int, Support] | None = None
    for size in (1, 2):
        for group in itertools.combinations(passages, size):
            verdict = checker.check(sentence, [p.quote for p in group])
            if verdict.status == SUPPORTED and (size == 1 or _part_each(sentence, group)):
                return tuple(p.number for p in group), ()
            if size == 1 and (closest is None or verdict.status == PARTIAL != closest[1].status):
                closest = (group[0].number, verdict)
    if closest is None:
        return (), ()
    number, verdict = closest
    how = "partly" if verdict.status == PARTIAL else "not"
    return (), (f"{how} supported by [{number}]: {'; '.join(verdict.reasons) or verdict.status}",)


def _narrowed(sentence: str, named: Sequence[Passage], checker: SupportChecker) -> tuple[tuple[int, ...], Support]:
    """The quotes of those a sentence names that support it, when all of them together do: those that do alone,
    else the fewest that do one part each (`_part_each`), else none, and the sentence is only partly supported.

    Read together, quotes lend a sentence words from one and a number from another: "Webhook logs are deleted
    after 30 days [1][2]" over a quote on webhook logs and one on audit logs ("Audit logs are deleted after 30
    days.") is a claim neither makes. And a chip under a sentence must lead to a quote that says it, not to one the
    model named beside it.
    """
    alone = tuple(p.number for p in named if checker.check(sentence, [p.quote]).status == SUPPORTED)
    if alone:
        return alone, Support(SUPPORTED)
    for size in range(2, len(named) + 1):
        for group in itertools.combinations(named, size):
            if _part_each(sentence, group):
                return tuple(p.number for p in group), Support(SUPPORTED)
    return tuple(p.number for p in named), Support(PARTIAL, (
        "supported only by the quotes it names read together: no one of them says it, nor do they a statement each",))


# Where a sentence joins two statements: "…; …", "… 30 days, and can be replayed …", "… but …".
_JOINT = re.compile(r";\s+|(?<!\s),?\s+(?:and|but)\s+(?=[a-z`])")
# An auxiliary verb: what a statement that opens on it ("… and can be replayed from the dashboard") says of the
# subject before, and where a sentence's subject ends ("After 30 days, these logs | are deleted").
_AUX = r"(?:are|is|was|were|can(?:not)?|could|will|would|may|might|must|should|has|have|had|does|do|did)"
_VERB = re.compile(rf"\s{_AUX}\s", re.IGNORECASE)
# One part against one quote sentence: the deterministic test (never a model's call), every key term, as the
# written answers' own check holds the whole sentence (a part swapping "Enterprise" for "free" is no part of it).
_PART = DeterministicChecker(supported_at=1.0)


def _part_each(sentence: str, group: Sequence[Passage]) -> bool:
    """Whether a sentence quotes support together says several things, each from one of them.

    Split where it joins statements ("…; …", "… and can …": first where it first does, then at every joint), each
    part must be supported by one sentence of one quote of the group, a sentence that does not lean on the one
    before it, and each quote must support a part. A part that names no subject of its own is read with the
    subject of the part before it (`_statements`), unless it opens as the quote sentence saying it opens
    ("…; lowering `max_retries` shortens the schedule" over "Lowering `max_retries` shortens the schedule …"):
    "Webhook logs are deleted after 30 days." is one statement, its words from a quote on webhook logs and its
    number from one on audit logs ("They are deleted after 30 days.") no support for it, nor for "Webhook logs
    are listed on the Deliveries page and are deleted after 30 days." When no part before names a subject either
    ("CLI sessions last 30 days; after that, run `ferry login` again"), the part must be said by the same quote
    sentence as the part before it.
    """
    terms = key_terms(sentence)
    said = [(i, u) for i, p in enumerate(group) for u in (u.strip() for u in sentence_units(p.quote))
            if not (_reads_on(u) and not _opens(p.quote, u))
            and _named_subject(u) <= terms]  # "Audit logs …" is no sentence on "the logs"
    for pieces in dict.fromkeys((tuple(_JOINT.split(sentence, maxsplit=1)), tuple(_JOINT.split(sentence)))):
        parts = _statements([piece.strip() for piece in pieces])
        borne: list[set[int]] = []
        for piece, reading, alone in parts:
            read = {at for at, (_, u) in enumerate(said) if _PART.check(reading, [u]).status == SUPPORTED}
            if alone:
                read &= borne[-1]  # no subject: the sentence the part before comes from
            if reading != piece or alone:  # … or one standing alone that opens as it does, its subject and all
                read |= {at for at, (_, u) in enumerate(said) if _opening(u) == _opening(piece)
                         and not _reads_on(u) and _PART.check(piece, [u]).status == SUPPORTED}
            borne.append(read)
        if parts and all(borne) and {said[at][0] for found in borne for at in found} == set(range(len(group))):
            return True
    return False


def _named_subject(sentence: str) -> set[str]:
    """The key terms of what a sentence is about: its subject without a lead-in ("On every plan, webhook logs") or
    an of-phrase ("The webhook logs of a project"), or, with no auxiliary verb found, its first two words."""
    subject = _subject(sentence)
    head = subject if subject != sentence else " ".join(sentence.split()[:2])
    return key_terms(re.split(r"\s+of\s+", head.split(",")[-1])[0])


def _opening(text: str) -> list[str]:
    """A sentence's first two words, a list item's marker aside."""
    return [word.casefold() for word in re.findall(r"\w+", _ITEM.sub("", text, count=1))[:2]]


# A part that opens on what names its own subject: an article or determiner, a capitalized name, code.
_NAMES_SUBJECT = re.compile(r"^(?:(?:the|a|an|each|every|all|any|no|your|our|some|most|many|only)\b|[A-Z`])")


def _statements(pieces: list[str]) -> list[tuple[str, str, bool]]:
    """The statements a sentence cut at its joints makes: each part, how it reads, and whether it has no subject
    to be read with (so must come from the sentence the part before it comes from); none when a part is empty or
    states too little.

    A later part says its thing of the subject of the nearest part before it that names one, when it names none
    itself: it opens on its verb ("… and can be replayed"), its subject points back ("… and they are deleted …"),
    or no auxiliary verb follows a subject of its own ("… and expire after 30 days" reads "Webhook logs expire
    after 30 days").
    """
    if len(pieces) < 2 or not all(pieces):
        return []
    parts: list[tuple[str, str, bool]] = []
    subject = ""  # the subject a part without one of its own is read with
    for piece in pieces:
        own = _subject(piece)
        pointing = own != piece and bool(_POINTING.search(own))
        if not parts or (own != piece and own.strip() and not pointing) or (
                own == piece and _NAMES_SUBJECT.match(piece)):
            subject = own.strip() if own != piece and not pointing else subject
            parts.append((piece, piece, False))
        elif subject:
            found = _POINTING.search(own) if pointing else None  # replaced as text: a subject may hold "\U"
            reading = (own[:found.start()] + subject + own[found.end():] + piece[len(own):] if found
                       else f"{subject} {piece}")
            parts.append((piece, reading, False))  # "their payloads are …" reads "Webhook logs payloads are …"
        else:
            parts.append((piece, piece, True))
    return [] if any(len(key_terms(reading)) + len(numbers(reading)) < MIN_TERMS for _, reading, _ in parts) else parts


class Writer:
    """Asks a chat model for the short answer and checks it (see the module docstring)."""

    def __init__(self, model: Completion | CitingModel, checker: SupportChecker, *, attempts: int = 1,
                 deadline: float = 25.0, again_within: float = 20.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.model = model
        self.checker = checker
        self.attempts = max(1, attempts)
        self.deadline = deadline  # seconds from the first request after which no attempt runs
        self.again_within = again_within  # another attempt only if, at the first one's pace, it ends by then
        self.clock = clock

    def write(self, question: str, claims: Sequence[Claim], thread: Sequence[str] = ()) -> Written:
        """The checked written answer for these shown claims; a model failure is recorded, never raised."""
        passages = passages_of(claims)
        if not passages:
            return Written(model=self.model.name)
        model = self.model
        if isinstance(model, CitingModel):  # the provider's own citations: one reply, numbered by the provider
            return self._read(lambda: model.cite(question, passages, thread), passages, question)
        messages = prompt(question, passages, thread)
        started = self.clock()
        best = self._read(lambda: model.reply(messages), passages, question)
        took = self.clock() - started
        others: list[str] = []
        for sample in range(1, self.attempts):
            elapsed = self.clock() - started
            if not _worth_asking_again(best) or elapsed + took > min(self.again_within, self.deadline):
                break
            left = self.deadline - elapsed
            again = self._read(functools.partial(model.reply, messages, sample=sample, timeout=left), passages,
                               question)
            if _score(again) > _score(best):
                best, again = again, best
            others.append(again.raw or f"(no reply: {again.error})")
        return replace(best, others=tuple(others)) if others else best

    def _read(self, ask: Callable[[], str], passages: tuple[Passage, ...], question: str) -> Written:
        from ..errors import DraftFormatError, GeneratorError

        try:
            text = ask()
        except (GeneratorError, DraftFormatError) as exc:
            return Written(model=self.model.name, error=str(exc)[:300], raw=getattr(exc, "raw", ""),
                           passages=passages)
        return read_reply(text, passages, self.checker, self.model.name, question=question)


def _worth_asking_again(written: Written) -> bool:
    """A reply the checker cut (a sentence dropped or shown in a quote's words, or nothing shown); never a decline
    or a failure."""
    cut = written.dropped or not written.sentences or any(s.instead_of for s in written.sentences)
    return not written.declined and not written.error and bool(cut)


def _score(written: Written) -> tuple[int, int, int]:
    """More shown sentences first, then more in the model's own words, then fewer dropped: which of two checked
    replies the visitor reads."""
    if written.declined or written.error:
        return (-1, 0, 0)
    return (len(written.sentences), sum(not s.instead_of for s in written.sentences), -len(written.dropped))


# -- JSON: the API shows what was shown; the audit log keeps the dropped sentences and the raw reply too ----------

def written_json(written: Written, *, full: bool = False) -> dict[str, object]:
    data: dict[str, object] = {
        "sentences": [_sentence_json(s, full) for s in written.sentences], "declined": written.declined,
        "model": written.model,
        "quotes": [{"number": p.number, "claim": p.claim} for p in written.passages],
    }
    if full:
        data |= {"dropped": [_sentence_json(s, full) for s in written.dropped], "raw": written.raw, "error": written.error,
                 "others": list(written.others)}
    return data


def _sentence_json(sentence: Sentence, full: bool) -> dict[str, object]:
    data: dict[str, object] = {"text": sentence.text, "quotes": list(sentence.passages), "status": sentence.status,
                               "reasons": list(sentence.reasons), "step": sentence.step, "code": sentence.code}
    if full and sentence.instead_of:  # the model's unchecked words: the audit's, never a visitor's
        data["instead_of"] = sentence.instead_of
    return data


def written_from_json(data: object) -> Written | None:
    """The written answer as stored; None for a record without one (or one this version cannot read)."""
    if not isinstance(data, dict):
        return None

    def sentences(items: object) -> tuple[Sentence, ...]:
        return tuple(Sentence(str(s.get("text", "")), tuple(int(n) for n in s.get("quotes") or ()),
                              str(s.get("status", "")), tuple(str(r) for r in s.get("reasons") or ()),
                              int(s.get("step") or 0), str(s.get("code", "")), str(s.get("instead_of", "")))
                     for s in (items if isinstance(items, list) else []) if isinstance(s, dict))

    passages = tuple(Passage(int(p.get("number", 0)), "", "", int(p.get("claim", 0)))
                     for p in data.get("quotes") or [] if isinstance(p, dict))
    # a stored sentence is shown again only if it was shown then: `supported` is re-read, never assumed
    shown = tuple(s for s in sentences(data.get("sentences")) if s.shown)
    return Written(shown, sentences(data.get("dropped")), bool(data.get("declined")), str(data.get("raw", "")),
                   str(data.get("model", "")), str(data.get("error", "")), passages,
                   tuple(str(o) for o in data.get("others") or () if isinstance(o, str)))
