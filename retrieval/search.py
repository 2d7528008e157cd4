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
from typing import Protocol

from ingest.documents import Chunk

from .embedder import Embedder
from .errors import QueryError
from .fusion import dedupe, reciprocal_rank_fusion
from .lexical import ChunkSource, LexicalSearcher
from .rerank import Candidate, Reranker, SignalReranker
from .store import VectorStore
from .viewer import Viewer

MAX_QUESTION_CHARS = 2_000
DEPTH = 50


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
    version: str = ""  # the docs version the reader is browsing, if any: answers prefer it over the current one

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


def renumber(question: str, viewer: Viewer, ranked: Sequence[tuple[Chunk, float]], version: str | None = None) -> RetrievalSet:
    """Give ranked chunks their handles c1..cN, in order."""
    hits = tuple(Hit(f"c{rank}", chunk, score) for rank, (chunk, score) in enumerate(ranked, start=1))
    return RetrievalSet(id=uuid.uuid4().hex[:12], question=question, viewer=viewer, hits=hits, version=version or "")


class HybridStore(VectorStore, ChunkSource, Protocol):
    """A store that answers both nearest-vector queries and ACL-filtered chunk listings."""


class DenseRetriever:
    """Embedding search only: the baseline the hybrid retriever is measured against."""

    def __init__(self, store: VectorStore, embedder: Embedder, *, k: int = 6, floor: float = 0.2) -> None:
        self.store = store
        self.embedder = embedder
        self.k = k
        self.floor = floor

    def search(self, question: str, viewer: Viewer, *, k: int | None = None, version: str | None = None) -> RetrievalSet:
        text = clean_question(question)
        vector = self.embedder.embed([text])[0]
        ranked = [(c, s) for c, s in self.store.query(vector, k or self.k, viewer.groups) if s >= self.floor]
        return renumber(text, viewer, ranked, version)


class HybridRetriever:
    """Dense + BM25 candidates (ACL-filtered before scoring), fused, reranked, deduped, renumbered.

    A candidate survives the relevance floor when its cosine similarity reaches
    `dense_floor`, or when it is in the BM25 list and its similarity reaches
    `lexical_dense_floor`. The floor is deliberately low: it only clears
    nothing-in-common questions; refusals come from the evidence in the answer step.
    """

    def __init__(
        self,
        store: HybridStore,
        embedder: Embedder,
        *,
        k: int = 6,
        depth: int = DEPTH,
        reranker: Reranker | None = None,
        lexical: LexicalSearcher | None = None,
        dense_floor: float = 0.25,
        lexical_dense_floor: float = 0.1,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.k = k
        self.depth = depth
        self.reranker = reranker or SignalReranker()
        self.lexical = lexical or LexicalSearcher(store)
        self.dense_floor = dense_floor
        self.lexical_dense_floor = lexical_dense_floor

    def candidates(self, question: str, viewer: Viewer) -> list[Candidate]:
        """Fused candidates from both searches, each restricted to what the viewer may read."""
        if self.store.count() == 0:
            return []
        vector = self.embedder.embed([question])[0]
        dense = self.store.query(vector, self.depth, viewer.groups)
        lexical = self.lexical.search(question, self.depth, viewer.groups)
        fused = reciprocal_rank_fusion([[c.id for c, _ in dense], [c.id for c, _ in lexical]])
        dense_at = {c.id: (rank, c, s) for rank, (c, s) in enumerate(dense, start=1)}
        lexical_at = {c.id: (rank, c, s) for rank, (c, s) in enumerate(lexical, start=1)}
        # BM25-only candidates come from a cache that may trail the index by a few seconds: re-read them
        # from the store under the viewer's access filter, so a chunk made restricted (or deleted) by a
        # re-ingest a moment ago is dropped, and the text used is the indexed text.
        missing = [i for i in lexical_at if i not in dense_at]
        fresh = {c.id: c for c in self.store.chunks(groups=sorted(viewer.groups), ids=missing)} if missing else {}
        similarity = dict(self._similarities(vector, [i for i in missing if i in fresh], viewer))
        out = []
        for chunk_id, score in fused.items():
            d, lx = dense_at.get(chunk_id), lexical_at.get(chunk_id)
            if d is None and chunk_id not in fresh:
                continue
            chunk = d[1] if d else fresh[chunk_id]
            if not chunk.readable_by(viewer.groups):
                continue
            cosine = d[2] if d else similarity.get(chunk_id)
            out.append(Candidate(chunk, score, cosine, lx[2] if lx else None, d[0] if d else None, lx[0] if lx else None))
        return sorted(out, key=lambda c: (-c.fused, c.chunk.id))

    def _similarities(self, vector: list[float], ids: list[str], viewer: Viewer) -> list[tuple[str, float]]:
        if not ids:
            return []
        stored = getattr(self.store, "vectors", None)  # the stored vectors, when the store can give them
        if stored is not None:
            vectors = stored(ids)
        else:
            chunks = self.store.chunks(groups=sorted(viewer.groups), ids=ids)
            ids, vectors = [c.id for c in chunks], self.embedder.embed([c.embedding_text for c in chunks])
        return [(i, sum(a * b for a, b in zip(vector, v))) for i, v in zip(ids, vectors, strict=True)]

    def relevant(self, candidate: Candidate) -> bool:
        """The conservative floor: some semantic similarity, or shared terms plus a little similarity."""
        cosine = candidate.dense if candidate.dense is not None else -1.0
        if cosine >= self.dense_floor:
            return True
        return candidate.lexical is not None and cosine >= self.lexical_dense_floor

    def search(self, question: str, viewer: Viewer, *, k: int | None = None, version: str | None = None) -> RetrievalSet:
        text = clean_question(question)
        pool = [c for c in self.candidates(text, viewer) if self.relevant(c)]
        ranked = self.reranker.rerank(text, pool, version=version)
        unique = dedupe(ranked, lambda pair: pair[0].text, limit=k or self.k)
        return renumber(text, viewer, unique, version)
