"""The verifier: a pure function of (Draft, RetrievalSet, Viewer) that fails closed.

It is the proof behind every citation chip. A citation survives only if its
handle names a chunk retrieved for *this* request, the viewer may read that
chunk, and the quote occurs in the chunk's text (after normalization). A claim
survives only with at least one surviving citation, and its support status
comes from a checker that compares the claim with its quotes. Everything that
was dropped is recorded as a problem, so the retry prompt and the audit can
say exactly why. A quote found only in a *different* retrieved chunk is
rejected with a hint naming that chunk, not re-attributed: the model's
attribution was wrong, and the retry (or nothing) must fix it in the open.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import quote as url_quote

from ingest.mdx import FENCE_LINE
from ingest.normalize import MARKUP, find_quote, normalize_quote
from retrieval.search import Hit, RetrievalSet
from retrieval.viewer import Viewer

from .draft import Draft
from .findings import Finding
from .spans import MIN_QUOTE_CHARS, crosses_apart, is_table_row, table_header, whole_code
from .support import PARTIAL, SUPPORTED, UNSUPPORTED, DeterministicChecker, Status, SupportChecker


@dataclass(frozen=True)
class Citation:
    """A verified quote: where it is, what it says, and which version of the source said it."""

    handle: str
    chunk_id: str
    quote: str  # the exact text of the chunk at [start, end)
    start: int
    end: int
    url: str  # <page url>#<anchor>:~:text=<quote>
    page_url: str  # <page url>#<anchor>, without the text fragment
    title: str
    heading_path: tuple[str, ...]
    doc_version: str
    hash: str
    table_header: str = ""  # the header row when the quote is a table row: context for reading it, not a claim


# What a shown claim is to the question: its direct answer, or a span nearly as relevant beside it.
Role = Literal["", "direct", "supporting"]
DIRECT: Role = "direct"
SUPPORTING: Role = "supporting"
ROLES: tuple[Role, ...] = ("", DIRECT, SUPPORTING)

# What became of one proposed quote: verified, or why not (not in this request's set, not readable by this
# viewer, too short, not verbatim in the chunk it cites).
QuoteKind = Literal["verified", "phantom", "restricted", "short", "not-verbatim"]
QUOTE_KINDS: tuple[QuoteKind, ...] = ("verified", "phantom", "restricted", "short", "not-verbatim")


@dataclass(frozen=True)
class Claim:
    text: str
    status: Status
    citations: tuple[Citation, ...]
    stitched: bool = False  # support needs quotes from more than one chunk
    reasons: tuple[str, ...] = ()
    role: Role = ""  # "" until the answer gate has judged it


@dataclass(frozen=True)
class QuoteCheck:
    """The verifier's finding on one proposed quote, kept for the audit and the eval."""

    claim: int  # 1-based claim number in the draft
    handle: str
    quote: str
    verified: bool
    reason: str = ""  # why it was rejected; empty when verified
    kind: QuoteKind = "verified"


@dataclass(frozen=True)
class Verification:
    """The verifier's verdict on one draft."""

    claims: tuple[Claim, ...]  # every claim that kept at least one citation, with its status
    problems: tuple[Finding, ...] = ()
    phantoms: int = 0
    refused: bool = False
    closest: bool = False  # the draft proposed the closest passages only (no answer): never an Answer
    dropped_claims: tuple[str, ...] = field(default=())
    checks: tuple[QuoteCheck, ...] = field(default=())

    @property
    def shown(self) -> tuple[Claim, ...]:
        """Claims a visitor may see: supported and partial, never unsupported."""
        return tuple(c for c in self.claims if c.status in (SUPPORTED, PARTIAL))

    @property
    def removed_anything(self) -> bool:
        """True when a proposed quote or claim was rejected, so the visitor sees less than was drafted."""
        return any(not check.verified for check in self.checks) or any(c.status == UNSUPPORTED for c in self.claims)

    @property
    def clean(self) -> bool:
        """True when nothing had to be dropped or downgraded."""
        return not self.problems and all(c.status == SUPPORTED for c in self.claims)




def text_fragment(quote: str) -> str:
    """A `#:~:text=` directive that makes browsers scroll to and highlight the quote.

    It must match the *rendered* page, so Markdown markup kept in chunk text
    (backticks, list markers, table pipes) is left out; `-` is escaped because
    the directive syntax gives it a meaning.
    """
    shown = "\n".join(line for line in quote.split("\n") if not FENCE_LINE.match(line))  # ```bash is not on the page
    words = [w for w in shown.replace("`", "").split() if w not in ("|", "-", "*")]

    def encode(text: str) -> str:
        return url_quote(text, safe="").replace("-", "%2D")

    if len(words) > 8:
        return f":~:text={encode(' '.join(words[:4]))},{encode(' '.join(words[-4:]))}"
    return f":~:text={encode(' '.join(words))}"


def verify(
    draft: Draft,
    rset: RetrievalSet,
    viewer: Viewer,
    *,
    checker: SupportChecker | None = None,
    min_quote_chars: int = MIN_QUOTE_CHARS,
) -> Verification:
    """Check every quote and claim of a draft against this request's retrieval set."""
    checker = checker or DeterministicChecker()
    problems: list[Finding] = []
    claims: list[Claim] = []
    dropped: list[str] = []
    checks: list[QuoteCheck] = []
    readable = [h for h in rset.hits if viewer.may_read(h.chunk.access)]
    for number, draft_claim in enumerate(draft.claims, start=1):
        citations: list[Citation] = []
        for quote in draft_claim.quotes:
            citation, kind, problem = _check_quote(quote.handle, quote.text, rset, viewer, readable, min_quote_chars, draft.shown)
            checks.append(QuoteCheck(number, quote.handle, quote.text, citation is not None, problem, kind))
            if citation is None:
                problems.append(Finding(f"claim {number}: {problem}", number))
            else:
                citations.append(citation)
        if not citations:
            dropped.append(draft_claim.text)
            problems.append(Finding(f"claim {number} has no verified quote and was removed: {draft_claim.text[:120]!r}", number))
            continue
        claims.append(_judge(draft_claim.text, _unique(citations), checker, number, problems))
    phantoms = sum(check.kind == "phantom" for check in checks)
    return Verification(
        claims=tuple(claims),
        problems=tuple(problems),
        phantoms=phantoms,
        refused=draft.refused,
        closest=draft.closest,
        dropped_claims=tuple(dropped),
        checks=tuple(checks),
    )


def _check_quote(
    handle: str, text: str, rset: RetrievalSet, viewer: Viewer, readable: Sequence[Hit], min_quote_chars: int,
    shown: tuple[str, ...] | None = None,
) -> tuple[Citation | None, QuoteKind, str]:
    """(citation, kind, reason): a citation for one quote, or what kind of failure it is and why."""
    hit = rset.get(handle)
    if hit is not None and not viewer.may_read(hit.chunk.access):
        return None, "restricted", f"{handle} is not readable by this viewer"
    if shown is not None:  # the generator saw only these passages; anything else it cites was invented
        readable = [h for h in readable if h.handle in shown]
        hit = hit if handle in shown else None
    if hit is None:
        citable = ", ".join(h.handle for h in readable) or "nothing"
        return None, "phantom", f"{handle} does not exist; cite only {citable}"
    chunk = hit.chunk
    # Measured after markup is stripped. A whole table row ("Free | 3") is exempt: it is unambiguous, and it is
    # read with its header row, which the citation carries.
    if len(normalize_quote(text)) < min_quote_chars and not is_table_row(chunk.text, text):
        return None, "short", f"quote in {handle} is shorter than {min_quote_chars} characters: {text!r}"
    span = find_quote(text, chunk.text)
    if span is None:
        # Rejected, never re-attributed: the hint lets the retry fix the handle itself.
        elsewhere = [h.handle for h in readable if h.handle != handle and find_quote(text, h.chunk.text)]
        hint = f" (it is in {', '.join(elsewhere)})" if elsewhere else ""
        return None, "not-verbatim", f"quote not in {handle}{hint}: {text[:120]!r}"
    start, end = whole_code(chunk.text, *_whole_markup(chunk.text, *span))
    if crosses_apart(chunk.text, start, end):
        return None, "not-verbatim", (f"quote in {handle} runs from one tab into another (or past the tabs): the page "
                                      f"never shows it together: {text[:120]!r}")
    exact = chunk.text[start:end]
    fragment = text_fragment(exact)
    return Citation(
        handle=handle,
        chunk_id=chunk.id,
        quote=exact,
        start=start,
        end=end,
        url=f"{chunk.url}{fragment}" if "#" in chunk.url else f"{chunk.url}#{fragment}",
        page_url=chunk.url,
        title=chunk.title,
        heading_path=chunk.heading_path,
        doc_version=chunk.doc_version,
        hash=chunk.hash,
        table_header=table_header(chunk.text, start),
    ), "verified", ""


def _whole_markup(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen a matched span over the markup at its edges, so "`t` is set" never shows as "t` is set"."""
    while start > 0 and text[start - 1] in MARKUP:
        start -= 1
    while end < len(text) and text[end] in MARKUP:
        end += 1
    return start, end


def _unique(citations: Sequence[Citation]) -> tuple[Citation, ...]:
    seen: set[tuple[str, int, int]] = set()
    out = []
    for c in citations:
        if (c.chunk_id, c.start, c.end) not in seen:
            seen.add((c.chunk_id, c.start, c.end))
            out.append(c)
    return tuple(out)


_STATES_SOMETHING = re.compile(r"[^\W_]")  # a letter or a digit, in any script


def states_something(claim: str) -> bool:
    """False for a claim with no letter or digit ("...", "-"): there is nothing in it a quote could support."""
    return bool(_STATES_SOMETHING.search(claim))


def _judge(text: str, citations: tuple[Citation, ...], checker: SupportChecker, number: int, problems: list[Finding]) -> Claim:
    """Support status for a claim; flags support that only exists across two chunks."""
    if not states_something(text):  # "..." or "" copied from a prompt's example: nothing to support
        problems.append(Finding(f"claim {number} is {UNSUPPORTED}: the claim states nothing ({text[:20]!r})", number))
        return Claim(text=text, status=UNSUPPORTED, citations=citations, reasons=("the claim states nothing",))
    support = checker.check(text, [c.quote for c in citations])
    chunks = {c.chunk_id for c in citations}
    stitched = False
    if len(chunks) > 1 and support.status == SUPPORTED:
        stitched = not any(
            checker.check(text, [c.quote for c in citations if c.chunk_id == cid]).status == SUPPORTED for cid in chunks
        )
    if support.status != SUPPORTED:
        problems.append(Finding(f"claim {number} is {support.status}: {'; '.join(support.reasons)}", number))
    return Claim(text=text, status=support.status, citations=citations, stitched=stitched, reasons=support.reasons)


__all__ = ["DIRECT", "SUPPORTING", "Citation", "Claim", "Verification", "verify", "states_something", "text_fragment", "SUPPORTED", "PARTIAL", "UNSUPPORTED"]
