"""View models for the chat templates, computed in code so templates stay dumb and links stay safe.

Every link a visitor can click is rebuilt here from the chunk of this turn's
retrieval set — never taken from model text — and only kept when it points at
the site's own URLs. Card ids carry the turn id, so two turns that both cite
`c1` never collide. Chips are labelled 1, 2, … in the order the answer cites
sections (the `c1` handles are retrieval ranks, meaningless to a reader); quote
text is rendered by `web/quotes.py`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal

from markupsafe import Markup, escape

from answer.contract.record import (
    DEGRADED,
    DISAGREE,
    REFUSED,
    RELATED_PASSAGES,
    UNVERIFIED,
    VERIFIED,
    Display,
    UnverifiedPolicy,
    display,
)
from answer.contract.result import Answer
from answer.contract.support import Status
from answer.contract.verify import Citation, Claim, text_fragment
from answer.contract.written import Written, passages_of
from answer.followup import Rewrite
from answer.gate.stage import quoted_list
from answer.language import language_note, other_language
from ingest.mdx import FENCE_LINE
from ingest.site import SiteConfig
from retrieval.search import Hit, RetrievalSet

from .links import is_site_url, section_path
from .looked import Looked, looked_at, related
from .quotes import excerpt_html, quote_html

log = logging.getLogger(__name__)

_TURN_ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")

# What a turn shows: an answer's display state, or for a thread turn this reader may not see, only that it
# exists (withheld) or that its sources changed since (stale).
TurnState = Display | Literal["withheld", "stale"]
WITHHELD: TurnState = "withheld"
STALE: TurnState = "stale"


@dataclass(frozen=True)
class Cite:
    """A verified citation ready for a chip and its hover card."""

    handle: str  # c1…: kept as a data attribute and in the audit view, never the chip's label
    number: int  # the chip's label: sources numbered in reading order, one number per section (its parts share it)
    card_id: str
    href: str | None  # None when the link would leave the site: the chip then renders without a link
    title: str
    heading_path: tuple[str, ...]
    doc_version: str
    quote: str  # the exact chunk text, for data-quote and caption comparison
    quote_html: Markup  # the quote as the docs render it (a small table for table rows)
    excerpt_html: Markup  # the hover card's excerpt, quote in <mark>
    is_table: bool = False

    @property
    def label(self) -> str:
        """What a screen reader announces for the chip: "Source 1: Refunds › Refund windows"."""
        return f"Source {self.number}: " + " › ".join((self.title, *self.heading_path))


@dataclass(frozen=True)
class ClaimView:
    text: str
    status: Status
    stitched: bool
    cites: tuple[Cite, ...]

    @property
    def repeats_quote(self) -> bool:
        return len(self.cites) == 1 and same_text(self.text, self.cites[0].quote)


@dataclass(frozen=True)
class WrittenLine:
    """One sentence or step of the written answer with the chips of the quotes it rests on."""

    text: str
    step: int  # its number in a list of steps, 0 for a sentence
    code: str  # a command copied from a quote, shown after it
    refs: tuple[tuple[int, str | None], ...]  # (chip number, source link or None) of each quote it names


@dataclass(frozen=True)
class Source:
    """One cited section in the side panel, listed once with every exact quote taken from it."""

    handle: str
    title: str
    heading_path: tuple[str, ...]
    href: str | None
    quotes: tuple[str, ...]
    number: int = 0  # the same number its chips carry


@dataclass(frozen=True)
class TurnView:
    turn_id: str
    question: str
    state: TurnState
    answer_id: str
    looked_at: tuple[Looked, ...]
    claims: tuple[ClaimView, ...]
    sources: tuple[Source, ...]
    hidden: tuple[str, ...]
    related: tuple[Looked, ...] = ()  # for a refusal: the sections looked at, as links
    asked: str = ""  # what the visitor typed; `question` is what was searched when a follow-up was rewritten
    written: tuple[WrittenLine, ...] = ()  # the model's short answer over the quotes, each line checked
    written_by: str = ""
    next_questions: tuple[str, ...] = ()  # follow-ups the docs answer, each checked by a search (answer/suggest.py)
    written_failed: bool = False  # the model was asked and could not answer in time: a quiet note, the quotes stand
    unmentioned: str = ""  # a refusal or Related passages: why no answer, as a sentence (the question's language, or its
    # words no section mentions)

    @property
    def steps(self) -> bool:
        return any(line.step for line in self.written)

    @property
    def searched(self) -> str:
        """The standalone question searched for, when it differs from what was typed ("Searched for: …").

        Only one that reads as a question is printed (`Rewrite.shown`, the same rule the stream follows): a
        broken splice of the earlier subject is still what was searched, but shown it only confuses.
        """
        return self.question if self.asked and Rewrite(self.asked, self.question).shown else ""

    @property
    def site_query(self) -> str:
        """What a refusal offers to search the site for: the rewrite when it reads as a question, else what was typed."""
        return self.question if not self.asked or self.asked == self.question or self.searched else self.asked

    @property
    def markdown(self) -> str:
        """The answer as Markdown for "Copy answer": each quote with its source link, then the sources."""
        lines = [f"**{self.asked or self.question}**", ""]
        for line in self.written:
            refs = "".join(f"[{n}]({href})" if href else f"[{n}]" for n, href in line.refs)
            lines.append(f"{f'{line.step}. ' if line.step else ''}{line.text} {refs}")
            if line.code:
                lines += ["", "```", line.code, "```"]
        if self.written:
            lines.append("")
        for claim in self.claims:
            for c in claim.cites:
                chip = f"[{c.number}]({c.href})" if c.href else f"[{c.number}]"
                if "\n" in c.quote.strip():  # a sentence with the command or list it introduces: lines kept
                    quoted = c.quote.strip().split("\n")
                    if sum(bool(FENCE_LINE.match(line)) for line in quoted) % 2:
                        quoted.append("```")  # the verified quote ends at the code, before its closing fence
                    lines += [f"> {line}".rstrip() for line in quoted] + [f"> {chip}"]
                else:
                    lines.append(f"> {' '.join(c.quote.split())} {chip}")
                lines.append("")
            if not claim.repeats_quote:
                lines += [claim.text, ""]
        if self.sources:
            lines.append("Sources:")
            for s in self.sources:
                name = " › ".join((s.title, *s.heading_path))
                lines.append(f"{s.number}. [{name}]({s.href})" if s.href else f"{s.number}. {name}")
        return "\n".join(lines).strip() + "\n"


def client_turn_id(value: Any, default: str) -> str:
    """A client-supplied turn id is only used when it is a short plain token."""
    return value if isinstance(value, str) and _TURN_ID.match(value) else default


def resolve(rset: RetrievalSet, citation: Citation) -> Hit | None:
    """The hit a citation stands on, or None unless its handle, chunk, quote span and access all check out.

    The one gate every chip, card, link and side-panel entry passes: a verified citation always
    resolves, so a None here means a bug upstream, and showing it would be a phantom citation.
    """
    hit = rset.get(citation.handle)
    if (hit is None or hit.chunk.id != citation.chunk_id or not rset.viewer.may_read(hit.chunk.access)
            or hit.chunk.text[citation.start : citation.end] != citation.quote):
        log.error("citation %s -> %s does not resolve in retrieval set %s; not shown", citation.handle, citation.chunk_id, rset.id)
        return None
    return hit


def source_href(hit: Hit, citation: Citation, site: SiteConfig) -> str | None:
    """The "Open source" link, rebuilt from the retrieved chunk: `<page url>#<anchor>:~:text=…`."""
    chunk = hit.chunk
    fragment = text_fragment(chunk.text[citation.start : citation.end])
    url = f"{chunk.url}{fragment}" if "#" in chunk.url else f"{chunk.url}#{fragment}"
    if not is_site_url(url, site):
        log.error("refusing to link %s: it is not under the site base URL %s", chunk.url, site.base_url)
        return None
    return url


class ChipNumbers:
    """Chip labels in reading order of the answer: the first section cited is 1, a section cited again keeps its
    number, whichever part of it a quote comes from (a long section's parts share one heading and one link)."""

    def __init__(self) -> None:
        self._numbers: dict[str, int] = {}
        self._lock = threading.Lock()

    def of(self, section: str) -> int:
        with self._lock:
            return self._numbers.setdefault(section, len(self._numbers) + 1)


def section_key(hit: Hit) -> str:
    """What a chip number and a Sources line stand for: the section, whose parts share its page and anchor."""
    return hit.chunk.url


def cite_view(rset: RetrievalSet, citation: Citation, site: SiteConfig, card_id: str, number: int = 1) -> Cite | None:
    """A chip and its card, or None when the citation does not resolve against this turn's retrieval set."""
    hit = resolve(rset, citation)
    if hit is None:
        return None
    link = partial(is_site_url, site=site)
    text = hit.chunk.text
    quote = quote_html(text, citation.start, citation.end, header=citation.table_header, link=link)
    return Cite(
        handle=citation.handle, number=number, card_id=card_id, href=source_href(hit, citation, site),
        # Where the quote sits is read from the chunk it resolved to, like its link: a restored answer's
        # record may name a title or version the page no longer has.
        title=hit.chunk.title, heading_path=section_path(hit.chunk.title, hit.chunk.heading_path),
        doc_version=hit.chunk.doc_version, quote=citation.quote, quote_html=quote,
        excerpt_html=excerpt_html(text, citation.start, citation.end, link=link), is_table="<table" in quote,
    )


def claim_view(claim: Claim, rset: RetrievalSet, site: SiteConfig, turn_id: str, number: int,
               numbers: ChipNumbers) -> ClaimView | None:
    """One verified claim, or None when none of its citations resolves (a claim is never shown without one).

    `number` (1-based, in answer order) keeps card ids stable between stream and page; `numbers` labels the
    chips, one numbering per turn, shared by its claims and its side panel.
    """
    cites: list[Cite] = []
    for i, c in enumerate(claim.citations, start=1):
        hit = resolve(rset, c)
        if hit is None:
            continue  # unresolved citations get no number, so the labels have no gaps
        view = cite_view(rset, c, site, f"card-{turn_id}-{number}-{i}", numbers.of(section_key(hit)))
        if view is not None:
            cites.append(view)
    if not cites:
        return None
    return ClaimView(text=claim.text, status=claim.status, stitched=claim.stitched, cites=tuple(cites))


def same_text(a: str, b: str) -> bool:
    """True when a caption only repeats its quote, so it need not be shown twice."""
    def norm(text: str) -> str:
        return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())
    return norm(a) == norm(b)


def sources(claims: Sequence[Claim], rset: RetrievalSet, site: SiteConfig,
            numbers: ChipNumbers | None = None) -> tuple[Source, ...]:
    """Each cited section once (its parts together), in order of first citation, with its distinct quotes and its
    chips' number.

    The side panel lists the sections by title only: their quotes are in the answer already, beside their chips.
    """
    numbers = numbers if numbers is not None else ChipNumbers()
    order: dict[str, Source] = {}
    for claim in claims:
        for c in claim.citations:
            hit = resolve(rset, c)
            if hit is None:
                continue
            key = section_key(hit)
            found = order.get(key)
            if found is None:
                chunk = hit.chunk  # titles come from the resolved chunk, like the link (see cite_view)
                order[key] = Source(c.handle, chunk.title, section_path(chunk.title, chunk.heading_path),
                                    source_href(hit, c, site), (c.quote,), numbers.of(key))
            elif c.quote not in found.quotes:
                order[key] = replace(found, quotes=found.quotes + (c.quote,))
    return tuple(order.values())


def withheld_view(answer_id: str, asked: str, *, stale: bool) -> TurnView:
    """A thread turn the reader may not see: only that it exists; with its question when only its sources changed."""
    question = asked if stale else ""
    return TurnView(turn_id=answer_id, question=question, state=STALE if stale else WITHHELD, answer_id=answer_id,
                    looked_at=(), claims=(), sources=(), hidden=(), asked=question)


def turn_view(answer: Answer, site: SiteConfig, turn_id: str, policy: UnverifiedPolicy = "hide", *, asked: str = "",
              next_questions: tuple[str, ...] = ()) -> TurnView:
    rset = answer.retrieval
    state = display(answer.state, degraded=answer.degraded, disagreement=answer.disagreement,
                    model_unavailable=answer.model_unavailable, policy=policy, related=answer.related)
    numbers = ChipNumbers()  # one numbering for chips and side panel, in reading order
    views = {n: v for n, c in enumerate(answer.claims)  # by the claim's index: the written answer names them so
             if (v := claim_view(c, rset, site, turn_id, n + 1, numbers)) is not None}
    claims = tuple(views.values())
    if state in (VERIFIED, DEGRADED, DISAGREE, RELATED_PASSAGES) and not claims:  # a rebuilt turn whose quotes no longer resolve: never "verified"
        return replace(withheld_view(answer.id, asked or answer.question, stale=True), turn_id=turn_id)
    return TurnView(
        turn_id=turn_id, question=answer.question, state=state, answer_id=answer.id, looked_at=looked_at(rset, site),
        claims=claims, sources=sources(answer.claims, rset, site, numbers),
        hidden=answer.hidden if state == UNVERIFIED else (), related=related(rset, site) if state == REFUSED else (),
        asked=asked or answer.question,
        written=written_lines(answer.written, answer.claims, views) if state in (VERIFIED, DEGRADED) else (),
        written_by=answer.written.model if answer.written is not None else "",
        next_questions=next_questions,
        written_failed=bool(answer.written and answer.written.error) and state in (VERIFIED, DEGRADED),
        unmentioned=(refusal_note(asked or answer.question, answer.unmentioned) if state == REFUSED else
                     unmentioned_sentence(answer.unmentioned) if state == RELATED_PASSAGES else ""),
    )


def refusal_note(question: str, unmentioned: Sequence[str]) -> str:
    """The line under a refusal that says why: a question in another language is told so (its words are in no
    section because the docs are read in English, not because they lack the topic); else the words no section
    found mentions, if that is why."""
    language = other_language(question)
    return language_note(language) if language else unmentioned_sentence(unmentioned)


def unmentioned_sentence(words: Sequence[str]) -> str:
    """What the visitor (and an agent) is told of words no section found mentions: "None of the docs sections
    found mentions “PayPal”." ("" for none)."""
    return f"None of the docs sections found mentions {quoted_list(words)}." if words else ""


def written_lines(written: Written | None, claims: Sequence[Claim], views: dict[int, ClaimView]
                  ) -> tuple[WrittenLine, ...]:
    """The written answer's shown sentences, each with the chip of every quote it names.

    The quote numbers are re-derived from the claims (`passages_of` numbers them the same way every time), and
    each is matched to the chip showing that very quote on this page. A sentence is shown only beside its proof:
    one with a quote that does not resolve here is left out, and with none left nothing is shown.
    """
    if written is None or not written.shown:
        return ()
    numbered = {p.number: p for p in passages_of(claims)}

    def chip(number: int) -> Cite | None:
        passage = numbered.get(number)
        view = views.get(passage.claim) if passage is not None else None
        return next((c for c in view.cites if c.quote == passage.quote), None) if view and passage else None

    lines = []
    for sentence in written.sentences:
        cites = [c for n in sentence.passages if (c := chip(n)) is not None]
        if cites and len(cites) == len(sentence.passages):
            first: dict[int, str | None] = {}  # one ref a section: two parts' quotes share its number and heading
            for c in cites:
                first.setdefault(c.number, c.href)
            refs = tuple(first.items())
            lines.append(WrittenLine(sentence.text, sentence.step, sentence.code, refs))
    return tuple(lines)


SHORT_CHARS = 120  # a question shown as a label or a link's text: the whole of it stays one click away


def sentence(message: str) -> str:
    """A message read on its own on a page starts with a capital ("Please type a question"); the API's is as raised."""
    return message[:1].upper() + message[1:]


def short(text: str, limit: int = SHORT_CHARS, mark: str = "…") -> str:
    """`text` cut at the last word boundary before `limit` characters, ending in `mark` when it was cut.

    A 929-character question pasted into the chat is a heading of the gap report and the text of a refusal's
    "Search the docs for …" link: both must stay a line or two, the whole question being on its own page.
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,;:.") + mark


_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def inline_code(text: str) -> Markup:
    """Escape text and show its code spans as code, as the docs render them (CommonMark: a span closes at the
    next run of as many backticks, so a template literal inside ``double backticks`` keeps its own; a lone
    backtick stays text)."""
    text = str(text)
    out: list[Markup] = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        body = match.group(2)
        if len(body) > 1 and body.startswith(" ") and body.endswith(" ") and body.strip():
            body = body[1:-1]
        out += [Markup(escape(text[last:match.start()])), Markup("<code>%s</code>") % body]
        last = match.end()
    out.append(Markup(escape(text[last:])))
    return Markup("").join(out)
