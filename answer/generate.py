"""Generators propose drafts; the offline extractive one needs no LLM.

The `Generator` protocol has one method. The extractive generator asks the
answer gate (`gate/`) for the spans of the top hits that best answer the
question and lets it decide: the direct
answer first, then at most two spans nearly as relevant, each proposed as a
claim quoting itself. When no span passes the gate it proposes the closest
passages, marked as such (shown as Related passages, never as an answer), or
refuses when nothing comes close, with the gate's reasons either way: the
refusal comes from the evidence, not from a retrieval score. A fresh machine thus answers offline under the very same
contract (and verifier) as an LLM.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from ingest.text import NAME_IN_SENTENCE, key_terms
from retrieval.embedder import Embedder
from retrieval.search import RetrievalSet

from .contract.draft import Draft, DraftClaim, PartialClaim, Quote
from .contract.spans import answer_word_before
from .gate import AnswerGate
from .gate.features import AnswerExtractor, Span
from .gate.question import YESNO
from .gate.weights import MAX_QUOTES


class Generator(Protocol):
    """Proposes a draft for a question from a retrieval set; `feedback` lists a failed attempt's problems."""

    name: str

    def draft(self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()) -> Draft: ...


@runtime_checkable
class StreamingGenerator(Generator, Protocol):
    """A generator that can also hand over each claim as soon as it is written whole, then the draft."""

    def draft_stream(
        self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()
    ) -> Iterator[PartialClaim | Draft]: ...


class ExtractiveGenerator:
    """Offline: claims are verbatim spans of the top hits that answer the question, the direct answer first."""

    name = "extractive"

    def __init__(self, embedder: Embedder | None = None, *, judge: AnswerGate | None = None, max_claims: int = MAX_QUOTES) -> None:
        self.judge = judge or AnswerGate(AnswerExtractor(embedder))
        self.max_claims = max_claims

    def draft(self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()) -> Draft:
        asked = self.judge.question(question)
        chosen, reasons = self.judge.pick(asked, rset, max_spans=self.max_claims)
        closest = not chosen
        if closest:
            # Nothing answers: the closest passages are proposed all the same; the gate shows them as Related
            # passages, never as an answer, and the reasons stay with the draft for the audit.
            chosen = self.judge.closest(asked, rset, max_spans=self.max_claims)
            if not chosen:
                return Draft(refused=True, claims=(), raw="; ".join(reasons), reasons=reasons,
                             unmentioned=self.judge.unmentioned(asked, rset))
        quotes = [s.span.text for s in chosen]
        if not closest and asked.kind == YESNO:
            quotes[0] = _with_answer_word(asked.terms | self.judge.unremarkable(), rset, chosen[0].span)
        claims = tuple(DraftClaim((Quote(s.span.handle, quote),), quote) for s, quote in zip(chosen, quotes, strict=True))
        raw = "; ".join(f"{s.span.handle} {s.score:.2f} {dict(s.features)}" for s in chosen)
        return Draft(refused=False, claims=claims, raw=raw, reasons=reasons, closest=closest)


def _with_answer_word(known: frozenset[str], rset: RetrievalSet, span: Span) -> str:
    """The direct answer to a yes/no question with the "No." or "Yes." its paragraph opens with, when it has one.

    That word answers the section's own heading, so it is taken only when the heading names nothing beyond the
    `known` terms (the question's, and the site's own name): "No." under "Can I export data on the Free plan?" is
    no answer to "Are exports available on the Enterprise plan?". Only the direct answer takes it; a supporting
    span's heading is further from the question.
    """
    hit = rset.get(span.handle)
    if hit is None:
        return span.text
    chunk = hit.chunk
    heading = (chunk.heading_path or (chunk.title,))[-1]
    if any(not key_terms(name) <= known for name in NAME_IN_SENTENCE.findall(heading)):
        return span.text
    start = answer_word_before(chunk.text, span.start)
    return chunk.text[start:span.end]
