"""Generators propose drafts; the offline extractive one needs no LLM.

The `Generator` protocol has one method. The extractive generator picks the
sentences of the top hits that best answer the question and proposes each as a
claim quoting itself, so a fresh machine answers offline under the very same
contract (and verifier) as an LLM. When no sentence is close enough to the
question and shares a content word with it, it refuses: the refusal comes from
the evidence, not from a retrieval score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from retrieval.embedder import Embedder
from retrieval.search import RetrievalSet

from .draft import Draft, DraftClaim, Quote
from .support import key_terms


class Generator(Protocol):
    """Proposes a draft for a question from a retrieval set; `feedback` lists a failed attempt's problems."""

    name: str

    def draft(self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()) -> Draft: ...


_QUANTITY_QUESTION = re.compile(
    r"\b(how (many|much|long|often|big|large|fast|soon)|what (amount|size|limit|percentage)|up to|maximum|minimum|"
    r"max|min|limit|at most|at least|how old|which version)\b", re.IGNORECASE)
_HAS_NUMBER = re.compile(r"\d")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")


@dataclass(frozen=True)
class Candidate:
    handle: str
    rank: int
    text: str
    context: str  # page title and heading path: where the sentence sits


def sentences(text: str) -> list[str]:
    """Quotable units of a chunk: prose sentences, list items and table rows; code is skipped."""
    units: list[str] = []
    for block in text.split("\n\n"):
        if block.startswith("```"):
            continue
        for line in block.split("\n") if _is_line_block(block) else [block]:
            line = re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", line).strip()
            units.extend(s.strip() for s in _SENTENCE_END.split(line) if len(s.strip()) >= 20)
    return units


def _is_line_block(block: str) -> bool:
    first = block.lstrip()
    return first.startswith(("- ", "* ")) or bool(re.match(r"\d+\. ", first)) or " | " in block


class ExtractiveGenerator:
    """Offline: claims are verbatim sentences of the top hits that answer the question."""

    name = "extractive"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        max_claims: int = 3,
        top_hits: int = 3,
        min_similarity: float = 0.45,
        keep_within: float = 0.12,
        min_coverage: float = 0.5,
        confident_similarity: float = 0.6,
        number_bonus: float = 0.05,
    ) -> None:
        self.embedder = embedder
        self.max_claims = max_claims
        self.top_hits = top_hits
        self.min_similarity = min_similarity
        self.keep_within = keep_within
        self.min_coverage = min_coverage
        self.confident_similarity = confident_similarity
        self.number_bonus = number_bonus

    def draft(self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()) -> Draft:
        candidates = [
            Candidate(hit.handle, rank, text, " ".join((hit.chunk.title, *hit.chunk.heading_path)))
            for rank, hit in enumerate(rset.hits[: self.top_hits])
            for text in sentences(hit.chunk.text)
        ]
        question_terms = key_terms(question)
        candidates = [c for c in candidates if question_terms & (key_terms(c.text) | key_terms(c.context))]
        if not candidates:
            return Draft(refused=True, claims=(), raw="no sentence shares a content word with the question")
        scores = self._scores(question, question_terms, candidates)
        # Evidence first: a sentence qualifies when it, with the headings it sits under, covers
        # enough of what the question asks about, or is very close to it in meaning.
        ranked = sorted(
            ((s, c) for s, c in zip(scores, candidates)
             if _coverage(question_terms, c) >= self.min_coverage or s >= self.confident_similarity),
            key=lambda pair: (-pair[0], pair[1].rank),
        )
        if not ranked:
            return Draft(refused=True, claims=(), raw=f"no sentence covers {self.min_coverage:.0%} of the question's terms")
        best = ranked[0][0]
        if best < self.min_similarity:
            return Draft(refused=True, claims=(), raw=f"best sentence similarity {best:.2f} < {self.min_similarity}")
        chosen = [c for s, c in ranked if s >= best - self.keep_within][: self.max_claims]
        claims = tuple(DraftClaim((Quote(c.handle, c.text),), c.text) for c in chosen)
        return Draft(refused=False, claims=claims, raw=f"picked {len(claims)} of {len(candidates)} sentences")

    def _scores(self, question: str, terms: set[str], candidates: list[Candidate]) -> list[float]:
        """Semantic similarity with a small bonus for shared terms and for higher-ranked hits."""
        overlap = [len(terms & key_terms(c.text)) / max(len(terms), 1) for c in candidates]
        if self.embedder is None:
            return [o - 0.02 * c.rank for o, c in zip(overlap, candidates)]
        vectors = self.embedder.embed([question, *(c.text for c in candidates)])
        q = vectors[0]
        sims = [_cosine(q, v) for v in vectors[1:]]
        # A question asking for a quantity is answered by a sentence that states one.
        wants_number = bool(_QUANTITY_QUESTION.search(question))
        return [
            s + 0.1 * o - 0.02 * c.rank + (self.number_bonus if wants_number and _HAS_NUMBER.search(c.text) else 0.0)
            for s, o, c in zip(sims, overlap, candidates)
        ]


def _coverage(terms: set[str], candidate: Candidate) -> float:
    """Share of the question's key terms found in a sentence or the headings above it."""
    if not terms:
        return 0.0
    return len(terms & (key_terms(candidate.text) | key_terms(candidate.context))) / len(terms)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
