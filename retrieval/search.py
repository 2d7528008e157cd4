"""Retrieval: the viewer's question → a numbered set of chunks the answer may cite.

Access control is applied inside the store query (and the lexical index), so
a restricted chunk is never a candidate. Handles `c1..cN` are assigned only
after ranking and dedupe, so `c1` is always the top hit; the `RetrievalSet`
is the only table a citation of this request may resolve against.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from ingest.documents import Chunk

from .embedder import Embedder
from .errors import QueryError
from .store import VectorStore
from .viewer import Viewer

MAX_QUESTION_CHARS = 2_000


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk under its per-request handle; the score is for ranking, never shown."""

    handle: str
    chunk: Chunk
    score: float


@dataclass(frozen=True)
class RetrievalSet:
    """What was retrieved for one question by one viewer, in rank order."""

    id: str
    question: str
    viewer: Viewer
    hits: tuple[Hit, ...]

    def __bool__(self) -> bool:
        return bool(self.hits)

    def get(self, handle: str) -> Hit | None:
        return next((hit for hit in self.hits if hit.handle == handle), None)

    @property
    def handles(self) -> tuple[str, ...]:
        return tuple(hit.handle for hit in self.hits)


def clean_question(question: str) -> str:
    """The question as searched: whitespace collapsed; empty is an error, overlong is cut."""
    text = " ".join(question.split())
    if not text:
        raise QueryError("the question is empty")
    return text[:MAX_QUESTION_CHARS]


def renumber(question: str, viewer: Viewer, ranked: Sequence[tuple[Chunk, float]]) -> RetrievalSet:
    """Give ranked chunks their handles c1..cN, in order."""
    hits = tuple(Hit(f"c{rank}", chunk, score) for rank, (chunk, score) in enumerate(ranked, start=1))
    return RetrievalSet(id=uuid.uuid4().hex[:12], question=question, viewer=viewer, hits=hits)


class DenseRetriever:
    """Embedding search only: the baseline the hybrid retriever is measured against."""

    def __init__(self, store: VectorStore, embedder: Embedder, *, k: int = 6, floor: float = 0.2) -> None:
        self.store = store
        self.embedder = embedder
        self.k = k
        self.floor = floor

    def search(self, question: str, viewer: Viewer, *, k: int | None = None) -> RetrievalSet:
        text = clean_question(question)
        vector = self.embedder.embed([text])[0]
        ranked = [(c, s) for c, s in self.store.query(vector, k or self.k, viewer.groups) if s >= self.floor]
        return renumber(text, viewer, ranked)
