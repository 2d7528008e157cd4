"""The chunk table: every stored chunk, its vector and its readers, held in process as of one index state.

Dense search runs here, not in the store: one float32 matrix product over
the rows the viewer may read. Measured on 2 cores, Chroma's `where`-filtered
query was the cost of a search at scale (35 ms at 10k chunks, ~410 ms at
100k) while the same top-k over this matrix takes a few milliseconds. The
access rule is the store's own (the stored access keys and the stored access
list must both admit the reader), applied as a row mask BEFORE ranking: a row
the viewer may not read is never among the rows ranked, exactly as the
store's `where` never scores it. Chroma stays the durable store and the
source of truth; this table is read from it and follows its generation (see
`IndexSnapshot` and `retrieval.refresh`), so a chunk restricted or deleted
by a re-ingest is gone from the table before the ingest says its access
changes are live.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ingest.documents import Chunk

from .records import Record


@dataclass(frozen=True)
class DenseSearch:
    """A dense search for one reader: the top hits, and (rank, cosine) in the same ranking of each of them and of
    every further id asked about that the reader may read."""

    top: list[tuple[Chunk, float]]
    ranks: dict[str, tuple[int, float]]


@dataclass(frozen=True)
class ChunkTable:
    """Chunks in id order with their unit vectors as one float32 matrix (row i is chunks[i])."""

    chunks: tuple[Chunk, ...]
    vectors: np.ndarray
    readers: tuple[frozenset[str], ...]
    _rows: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _masks: dict[frozenset[str], np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, records: Iterable[Record], dimension: int = 0) -> ChunkTable:
        # One record per id (a paged read racing a writer may see an id twice; the later page wins).
        ordered = sorted({r.chunk.id: r for r in records}.values(), key=lambda r: r.chunk.id)
        if ordered:
            vectors = np.asarray([r.vector for r in ordered], dtype=np.float32)
        else:
            vectors = np.zeros((0, dimension), dtype=np.float32)
        return cls.of_rows(tuple(r.chunk for r in ordered), vectors, tuple(r.readers for r in ordered))

    @classmethod
    def of_rows(cls, chunks: tuple[Chunk, ...], vectors: np.ndarray, readers: tuple[frozenset[str], ...]) -> ChunkTable:
        """A table of rows already in id order (row i of `vectors` is chunks[i])."""
        if not (len(chunks) == vectors.shape[0] == len(readers)):
            raise ValueError(f"a chunk table needs one vector and one reader set per chunk: {len(chunks)} chunks, "
                             f"{vectors.shape[0]} vectors, {len(readers)} reader sets")
        return cls(chunks, vectors, readers, {c.id: i for i, c in enumerate(chunks)})

    def relabelled(self, rows: Mapping[int, tuple[Chunk, frozenset[str]]]) -> ChunkTable:
        """The same rows and vectors (shared, not copied) with some rows' chunk and readers replaced.

        How an access change reaches the served table at once: no store read
        of texts or vectors, and every cached mask patched only at the rows that
        changed, so the next query pays for the rows changed, not the table.
        """
        chunks, readers = list(self.chunks), list(self.readers)
        for row, (chunk, admitted) in rows.items():
            if chunk.id != chunks[row].id:
                raise ValueError(f"a relabelled row keeps its id: row {row} is {chunks[row].id}, not {chunk.id}")
            chunks[row], readers[row] = chunk, admitted
        table = ChunkTable(tuple(chunks), self.vectors, tuple(readers), self._rows)
        for groups, mask in list(self._masks.items()):
            patched = mask.copy()
            for row in rows:
                patched[row] = table._admits(row, groups)
            patched.setflags(write=False)
            table._masks[groups] = patched
        return table

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1]) if self.vectors.ndim == 2 else 0

    def __len__(self) -> int:
        return len(self.chunks)

    def row(self, chunk_id: str) -> int | None:
        return self._rows.get(chunk_id)

    def get(self, chunk_id: str) -> Chunk | None:
        row = self._rows.get(chunk_id)
        return None if row is None else self.chunks[row]

    def readable(self, groups: frozenset[str]) -> list[Chunk]:
        """The chunks `groups` may read: both the stored access keys and the stored access list must agree."""
        return [self.chunks[i] for i in np.flatnonzero(self.mask(groups)).tolist()]

    def mask(self, groups: frozenset[str]) -> np.ndarray:
        """One bool per row: may `groups` read it. Computed once per group-set per table (the table never changes)."""
        held = self._masks.get(groups)
        if held is None:
            held = np.fromiter((self._admits(row, groups) for row in range(len(self.chunks))),
                               dtype=bool, count=len(self.chunks))
            held.setflags(write=False)
            if len(self._masks) >= 64:  # many distinct group-sets: start over rather than grow without end
                self._masks.clear()  # (one atomic step: requests in other threads may be reading masks)
            self._masks[groups] = held
        return held

    def may_read(self, chunk_id: str, groups: frozenset[str]) -> bool:
        row = self._rows.get(chunk_id)
        return row is not None and self._admits(row, groups)

    def _admits(self, row: int, groups: frozenset[str]) -> bool:
        """The store's access rule for one row: its stored access keys *and* its stored access list admit `groups`."""
        return bool(self.readers[row] & groups) and self.chunks[row].readable_by(groups)

    def nearest(self, vector: Sequence[float] | np.ndarray, k: int, groups: frozenset[str]) -> list[tuple[Chunk, float]]:
        """The k rows `groups` may read with the highest cosine similarity to the (unit) query, best first."""
        return self.dense_search(vector, k, groups).top

    def dense_search(self, vector: Sequence[float] | np.ndarray, k: int, groups: frozenset[str],
                     also: Sequence[str] = ()) -> DenseSearch:
        """The dense top k for `groups`, and where each id of `also` stands in the same ranking.

        Only the readable rows are ranked (the mask selects them before any
        ordering), ties broken by id so the result does not depend on the order
        of equal scores. An id of `also` below the top k is ranked by the rows
        that score above it: a BM25 hit the question's meaning is far from is
        ranked that far down, not left without a dense rank (see
        `HybridRetriever`). One matrix product serves both.
        """
        readable = np.flatnonzero(self.mask(groups))
        if readable.size == 0:
            return DenseSearch([], {})
        query = np.asarray(vector, dtype=np.float32)
        if readable.size * 2 < len(self.chunks):  # a narrow reader: multiply only its rows
            scores = self.vectors[readable] @ query
        else:
            scores = (self.vectors @ query)[readable]
        rows, kept = readable, scores
        if scores.size > k:  # keep every tie of the k-th score, so the id tie-break decides, not the partition
            kth = np.partition(scores, scores.size - k)[scores.size - k] if k > 0 else np.inf
            keep = np.flatnonzero(scores >= kth)
            rows, kept = readable[keep], scores[keep]
        order = sorted(range(rows.size), key=lambda i: (-float(kept[i]), int(rows[i])))[:max(k, 0)]
        top = [(self.chunks[int(rows[i])], float(kept[i])) for i in order]
        placed = {chunk.id: (rank, score) for rank, (chunk, score) in enumerate(top, start=1)}
        # an id unknown here, or one `groups` may not read, has no place in their ranking
        below = [(i, at) for i in dict.fromkeys(also) if i not in placed and (at := self._rank_row(readable, i)) >= 0]
        if below:
            theirs = scores[[at for _, at in below]]
            above = np.count_nonzero(scores[None, :] > theirs[:, None], axis=1)
            placed |= {chunk_id: (int(n) + 1, float(score)) for (chunk_id, _), n, score in zip(below, above, theirs, strict=True)}
        return DenseSearch(top, placed)

    def _rank_row(self, readable: np.ndarray, chunk_id: str) -> int:
        """The position of a chunk's row among the (sorted) readable rows, or -1 when it is not one of them."""
        row = self._rows.get(chunk_id)
        if row is None:
            return -1
        at = int(np.searchsorted(readable, row))
        return at if at < readable.size and readable[at] == row else -1
