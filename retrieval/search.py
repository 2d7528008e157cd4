"""Retrieval: the viewer's question → a numbered set of chunks the answer may cite.

Access control is applied before anything is ranked: in the chunk table's
row mask (the store's own access rule) and in the lexical index, so a
restricted chunk is never a candidate. Handles `c1..cN` are assigned only
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
from .fusion import dedupe, reciprocal_rank_score
from .lexical import served
from .protocols import StoreReader, VectorStore
from .rerank import Candidate, Reranker, SignalReranker
from .snapshot import IndexSnapshot
from .table import DenseSearch
from .viewer import Viewer

MAX_QUESTION_CHARS = 1_000  # the one question limit: the web edge rejects longer, search cuts what reaches it
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
        store: StoreReader,
        embedder: Embedder,
        *,
        k: int = 6,
        depth: int = DEPTH,
        reranker: Reranker | None = None,
        snapshot: IndexSnapshot | None = None,
        dense_floor: float = 0.25,
        lexical_dense_floor: float = 0.1,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.k = k
        self.depth = depth
        self.reranker = reranker or SignalReranker()
        self.snapshot = snapshot or IndexSnapshot(store)
        self.dense_floor = dense_floor
        self.lexical_dense_floor = lexical_dense_floor

    def candidates(self, question: str, viewer: Viewer) -> list[Candidate]:
        """Fused candidates from both searches, each restricted to what the viewer may read.

        Both searches run over the chunk table of the store's current
        generation: the dense top-k is a numpy
        product over only the rows the viewer may read (see `ChunkTable.dense_search`),
        and BM25-only candidates take their text and their place in the same
        dense ranking from the same table, so a query reads nothing from the
        store but its generation.
        """
        table, index = self.snapshot.view(viewer.groups)
        vector = self.embedder.embed([question])[0]
        lexical = served(table, index.search(question, self.depth), viewer.groups)
        dense = table.dense_search(vector, self.depth, viewer.groups, also=[c.id for c, _ in lexical])
        return self._fuse(dense, lexical, viewer)

    def _fuse(self, dense: DenseSearch, lexical: list[tuple[Chunk, float]], viewer: Viewer) -> list[Candidate]:
        """Join the two searches by reciprocal rank; a candidate must be readable by the viewer on both counts.

        Every candidate is ranked by meaning: a BM25 hit outside the dense top
        k counts at its true dense rank (often in the thousands for a hit that
        only shares words), where leaving it out of that list scored it as if
        meaning had no say. A dense hit outside the BM25 top k counts once, as
        before: giving it its BM25 rank too was measured and not taken
        (docs/performance.mdx).
        """
        groups = viewer.groups
        dense_at = dense.ranks
        lexical_at = {c.id: (rank, s) for rank, (c, s) in enumerate(lexical, start=1)}
        chunk_of = {c.id: c for c, _ in lexical if c.id in dense_at} | {c.id: c for c, _ in dense.top}
        out = []
        for chunk_id, chunk in chunk_of.items():
            if not chunk.readable_by(groups):
                continue
            d, lx = dense_at[chunk_id], lexical_at.get(chunk_id)
            fused = reciprocal_rank_score([d[0], lx[0] if lx else None])
            out.append(Candidate(chunk, fused, d[1], lx[1] if lx else None, d[0], lx[0] if lx else None))
        return sorted(out, key=lambda c: (-c.fused, c.chunk.id))

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
