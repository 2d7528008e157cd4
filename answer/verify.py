"""The verifier: a pure function of (Draft, RetrievalSet, Viewer) that fails closed.

It is the proof behind every citation chip. A citation survives only if its
handle names a chunk retrieved for *this* request, the viewer may read that
chunk, and the quote occurs in the chunk's text (after normalization). A claim
survives only with at least one surviving citation, and its support status
comes from a checker that compares the claim with its quotes. Everything that
was dropped is recorded as a problem, so the retry prompt and the audit can
say exactly why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import quote as url_quote

from retrieval.search import RetrievalSet
from retrieval.viewer import Viewer

from .draft import Draft
from .normalize import find_quote
from .support import PARTIAL, SUPPORTED, UNSUPPORTED, DeterministicChecker, SupportChecker

MIN_QUOTE_CHARS = 12


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


@dataclass(frozen=True)
class Claim:
    text: str
    status: str  # supported / partial / unsupported
    citations: tuple[Citation, ...]
    stitched: bool = False  # support needs quotes from more than one chunk
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verification:
    """The verifier's verdict on one draft."""

    claims: tuple[Claim, ...]  # every claim that kept at least one citation, with its status
    problems: tuple[str, ...] = ()
    quotes_total: int = 0
    quotes_verbatim: int = 0
    phantoms: int = 0
    refused: bool = False
    dropped_claims: tuple[str, ...] = field(default=())

    @property
    def shown(self) -> tuple[Claim, ...]:
        """Claims a visitor may see: supported and partial, never unsupported."""
        return tuple(c for c in self.claims if c.status in (SUPPORTED, PARTIAL))

    @property
    def clean(self) -> bool:
        """True when nothing had to be dropped or downgraded."""
        return not self.problems and all(c.status == SUPPORTED for c in self.claims)


def text_fragment(quote: str) -> str:
    """A `#:~:text=` directive that makes browsers scroll to and highlight the quote."""
    words = quote.split()
    if len(words) > 8:
        start, end = " ".join(words[:4]), " ".join(words[-4:])
        return f":~:text={url_quote(start, safe='')},{url_quote(end, safe='')}"
    return f":~:text={url_quote(' '.join(words), safe='')}"


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
    problems: list[str] = []
    claims: list[Claim] = []
    dropped: list[str] = []
    total = verbatim = phantoms = 0
    for number, draft_claim in enumerate(draft.claims, start=1):
        citations: list[Citation] = []
        for quote in draft_claim.quotes:
            total += 1
            hit = rset.get(quote.handle)
            if hit is None:
                phantoms += 1
                problems.append(f"claim {number}: {quote.handle} does not exist; cite only {', '.join(rset.handles) or 'nothing'}")
                continue
            chunk = hit.chunk
            if not viewer.may_read(chunk.access):
                problems.append(f"claim {number}: {quote.handle} is not readable by this viewer")
                continue
            if len(quote.text.strip()) < min_quote_chars:
                problems.append(f"claim {number}: quote in {quote.handle} is shorter than {min_quote_chars} characters: {quote.text!r}")
                continue
            span = find_quote(quote.text, chunk.text)
            if span is None:
                elsewhere = [h.handle for h in rset.hits if h.handle != quote.handle and find_quote(quote.text, h.chunk.text)]
                hint = f" (it is in {', '.join(elsewhere)})" if elsewhere else ""
                problems.append(f"claim {number}: quote not in {quote.handle}{hint}: {quote.text[:120]!r}")
                continue
            verbatim += 1
            start, end = span
            exact = chunk.text[start:end]
            citations.append(
                Citation(
                    handle=quote.handle,
                    chunk_id=chunk.id,
                    quote=exact,
                    start=start,
                    end=end,
                    url=f"{chunk.url}#{text_fragment(exact)}" if "#" not in chunk.url else f"{chunk.url}{text_fragment(exact)}",
                    page_url=chunk.url,
                    title=chunk.title,
                    heading_path=chunk.heading_path,
                    doc_version=chunk.doc_version,
                    hash=chunk.hash,
                )
            )
        if not citations:
            dropped.append(draft_claim.text)
            problems.append(f"claim {number} has no verified quote and was removed: {draft_claim.text[:120]!r}")
            continue
        claims.append(_judge(draft_claim.text, _unique(citations), checker, number, problems))
    return Verification(
        claims=tuple(claims),
        problems=tuple(problems),
        quotes_total=total,
        quotes_verbatim=verbatim,
        phantoms=phantoms,
        refused=draft.refused,
        dropped_claims=tuple(dropped),
    )


def _unique(citations: Sequence[Citation]) -> tuple[Citation, ...]:
    seen: set[tuple[str, int, int]] = set()
    out = []
    for c in citations:
        if (c.chunk_id, c.start, c.end) not in seen:
            seen.add((c.chunk_id, c.start, c.end))
            out.append(c)
    return tuple(out)


def _judge(text: str, citations: tuple[Citation, ...], checker: SupportChecker, number: int, problems: list[str]) -> Claim:
    """Support status for a claim; flags support that only exists across two chunks."""
    support = checker.check(text, [c.quote for c in citations])
    chunks = {c.chunk_id for c in citations}
    stitched = False
    if len(chunks) > 1 and support.status == SUPPORTED:
        stitched = not any(
            checker.check(text, [c.quote for c in citations if c.chunk_id == cid]).status == SUPPORTED for cid in chunks
        )
    if support.status != SUPPORTED:
        problems.append(f"claim {number} is {support.status}: {'; '.join(support.reasons)}")
    return Claim(text=text, status=support.status, citations=citations, stitched=stitched, reasons=support.reasons)


__all__ = ["Citation", "Claim", "Verification", "verify", "text_fragment", "SUPPORTED", "PARTIAL", "UNSUPPORTED"]
