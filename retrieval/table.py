"""The chunk table: every stored chunk, its vector and its readers, held in process as of one index state.

A query asks the store only what the store alone knows (the nearest ids
under the access filter); everything else it needs (chunk text and metadata
for the hits, vectors of BM25-only candidates) is read here, so nothing is
read twice. The table is rebuilt whenever the store's generation moves (see
`LexicalSearcher`), which every ingest does at its access step and at its
commit, so a chunk restricted or deleted by a re-ingest is gone from the
table before the ingest says its access changes are live.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ingest.documents import Chunk

from .records import Record as Record  # lexical.py and the tests name the record from here


@dataclass(frozen=True)
class ChunkTable:
    """Chunks in id order with their unit vectors as one float32 matrix (row i is chunks[i])."""

    chunks: tuple[Chunk, ...]
    vectors: np.ndarray
    readers: tuple[frozenset[str], ...]
    _rows: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, records: Iterable[Record], dimension: int = 0) -> ChunkTable:
        # One record per id (a paged read racing a writer may see an id twice; the later page wins).
        ordered = sorted({r.chunk.id: r for r in records}.values(), key=lambda r: r.chunk.id)
        if ordered:
            vectors = np.asarray([r.vector for r in ordered], dtype=np.float32)
        else:
            vectors = np.zeros((0, dimension), dtype=np.float32)
        chunks = tuple(r.chunk for r in ordered)
        return cls(chunks, vectors, tuple(r.readers for r in ordered), {c.id: i for i, c in enumerate(chunks)})

    def __len__(self) -> int:
        return len(self.chunks)

    def get(self, chunk_id: str) -> Chunk | None:
        row = self._rows.get(chunk_id)
        return None if row is None else self.chunks[row]

    def readable(self, groups: frozenset[str]) -> list[Chunk]:
        """The chunks `groups` may read: both the stored access keys and the stored access list must agree."""
        return [c for c, keys in zip(self.chunks, self.readers, strict=True) if keys & groups and c.readable_by(groups)]

    def may_read(self, chunk_id: str, groups: frozenset[str]) -> bool:
        row = self._rows.get(chunk_id)
        return row is not None and bool(self.readers[row] & groups) and self.chunks[row].readable_by(groups)

    def similarities(self, vector: Sequence[float] | np.ndarray, ids: Sequence[str]) -> dict[str, float]:
        """Cosine similarity of the (unit) query vector to each known id's stored (unit) vector."""
        known = [i for i in ids if i in self._rows]
        if not known or self.vectors.shape[0] == 0:
            return {}
        rows = self.vectors[[self._rows[i] for i in known]]
        scores = rows @ np.asarray(vector, dtype=np.float32)
        return {i: float(s) for i, s in zip(known, scores, strict=True)}
