"""Rerankers: fused candidates → final order. The default uses only signals available offline.

`SignalReranker` adds to the (normalized) fusion score: how many of the
question's terms appear in the page title and heading path, exact matches of
identifiers the question names (CLI flags, config keys, error codes) and of
quoted phrases, and a boost for the docs version the reader is browsing; it
takes off for a section that is context rather than a statement (a "See
also" list of links, a changelog entry or "History" section for a question
that does not ask about changes), so those never crowd out the sections that
state the thing.
`CrossEncoderReranker` is the hook for a site that has cross-encoder weights;
no registry package ships any, so the default must stand on its own.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ingest.context_sentences import asks_history, is_history_section, is_navigation_heading
from ingest.documents import Chunk
from ingest.text import identifiers, tokenize

from .errors import RerankerError

_QUOTED = re.compile(r"[\"“”'`]([^\"“”'`]{3,80})[\"“”'`]")


@dataclass(frozen=True)
class Candidate:
    """A chunk on its way to the final ranking, with what each search said about it (ranks from 1)."""

    chunk: Chunk
    fused: float
    dense: float | None = None
    lexical: float | None = None
    dense_rank: int | None = None
    lexical_rank: int | None = None


class Reranker(Protocol):
    """Orders candidates for a question; best first, each with its final score."""

    def rerank(self, question: str, candidates: Sequence[Candidate], *, version: str | None = None) -> list[tuple[Chunk, float]]: ...


@functools.lru_cache(maxsize=1 << 16)
def _heading_terms(title: str, heading_path: tuple[str, ...]) -> frozenset[str]:
    """A chunk's title and heading terms: the same few headings meet every query, so tokenize each once."""
    return frozenset(tokenize(" ".join((title, *heading_path))))


def heading_overlap(question: str, chunk: Chunk, terms: frozenset[str] | None = None) -> float:
    """Share of the question's terms found in the chunk's page title and heading path (0..1)."""
    terms = frozenset(tokenize(question)) if terms is None else terms
    if not terms:
        return 0.0
    return len(terms & _heading_terms(chunk.title, chunk.heading_path)) / len(terms)


def wanted_terms(question: str) -> frozenset[str]:
    """The identifiers and quoted phrases of a question, lower-cased: what `exact_matches` looks for."""
    return frozenset(t for t in (*identifiers(question), *(p.strip().lower() for p in _QUOTED.findall(question))) if t)


def exact_matches(question: str, chunk: Chunk, wanted: frozenset[str] | None = None) -> int:
    """How many identifiers and quoted phrases of the question occur verbatim (case-insensitive) in the chunk."""
    wanted = wanted_terms(question) if wanted is None else wanted
    if not wanted:
        return 0
    haystack = " ".join((chunk.title, *chunk.heading_path, chunk.text)).lower()
    return sum(1 for term in wanted if term in haystack)


def is_aside(chunk: Chunk, history_asked: bool) -> bool:
    """A section that is context, not a statement: links to elsewhere, or history for a question not about it."""
    headings = tuple(chunk.heading_path)
    if headings and is_navigation_heading(headings[-1]):
        return True
    return not history_asked and is_history_section(chunk.title, headings)


@dataclass(frozen=True)
class SignalReranker:
    """The offline default: fusion score plus title/heading, exact-match and version signals."""

    heading_weight: float = 0.15  # times the share of the question's terms in the title and headings
    exact_weight: float = 0.15  # per identifier or quoted phrase found verbatim
    max_exact: int = 3  # exact matches counted at most
    version_weight: float = 0.25  # the docs version the reader browses
    aside_weight: float = 0.3  # taken off a section that is links or history (`is_aside`)

    def rerank(self, question: str, candidates: Sequence[Candidate], *, version: str | None = None) -> list[tuple[Chunk, float]]:
        top = max((c.fused for c in candidates), default=0.0) or 1.0
        terms, wanted = frozenset(tokenize(question)), wanted_terms(question)
        history_asked = asks_history(question)
        scored = []
        for c in candidates:
            score = c.fused / top
            score += self.heading_weight * heading_overlap(question, c.chunk, terms)
            score += self.exact_weight * min(self.max_exact, exact_matches(question, c.chunk, wanted))
            if version is not None and c.chunk.doc_version == version:
                score += self.version_weight
            if is_aside(c.chunk, history_asked):
                score -= self.aside_weight
            scored.append((c.chunk, score))
        return sorted(scored, key=lambda pair: (-pair[1], pair[0].id))


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder from a local model folder, loaded lazily and once."""

    def __init__(self, model_path: str, *, version_weight: float = 0.1, max_candidates: int = 50, model: Any = None) -> None:
        """`model` may be a ready object with CrossEncoder's `predict(pairs)`; otherwise `model_path` is loaded on first use."""
        if not model_path and model is None:
            raise RerankerError("a cross-encoder reranker needs a model path; none is configured")
        self.model_path = model_path
        self.version_weight = version_weight
        self.max_candidates = max_candidates
        self._model: Any = model
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import CrossEncoder

                    self._model = CrossEncoder(self.model_path, device="cpu")
                except Exception as exc:  # missing folder, wrong format: say which path
                    raise RerankerError(f"cannot load cross-encoder from {self.model_path!r}: {exc}") from exc
            return self._model

    def rerank(self, question: str, candidates: Sequence[Candidate], *, version: str | None = None) -> list[tuple[Chunk, float]]:
        pool = sorted(candidates, key=lambda c: -c.fused)[: self.max_candidates]
        if not pool:
            return []
        logits = self._load().predict([(question, c.chunk.embedding_text) for c in pool])
        scored = []
        for c, logit in zip(pool, logits, strict=True):
            score = 1.0 / (1.0 + math.exp(-float(logit)))
            if version is not None and c.chunk.doc_version == version:
                score += self.version_weight
            scored.append((c.chunk, score))
        return sorted(scored, key=lambda pair: (-pair[1], pair[0].id))
