"""The store seam: what callers use of a store, as protocols, so none of them names an implementation.

Search, the chunk table, the answer step and the web layer read through
`StoreReader`, all of it (no caller asks a store what it can do); the indexer
writes through `Store.open_for_write`. Chroma
(`retrieval.store.ChromaStore`, embedded or server) and the in-memory test
store implement them, and one contract suite runs against each, so a test
that passes against the fake says something about Chroma.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from ingest.documents import Chunk

from .records import Changes, Manifest, Record, Row


class VectorStore(Protocol):
    """What dense retrieval needs from a store: nearest chunks among those the groups may read."""

    def query(self, vector: Sequence[float], k: int, groups: Iterable[str]) -> list[tuple[Chunk, float]]: ...


class StoreReader(VectorStore, Protocol):
    """Everything a reader asks of the live index; every listing that takes groups applies the access filter."""

    def nearest(self, vector: Sequence[float], k: int, groups: Iterable[str]) -> list[tuple[str, float]]:
        """Ids of the k nearest chunks `groups` may read, with cosine similarity (no texts: the table has them)."""
        ...

    def count(self, groups: Iterable[str] | None = None) -> int: ...

    def chunks(self, groups: Iterable[str] | None = None, ids: Sequence[str] | None = None) -> list[Chunk]:
        """Stored chunks (all, or those `groups` may read, or the given ids), in id order."""
        ...

    def vectors(self, ids: Sequence[str]) -> list[list[float]]:
        """Stored vectors of the given ids, in the order asked, unfiltered (the caller already holds the chunks)."""
        ...

    def records(self) -> list[Record]:
        """Every stored chunk with its vector and the groups its access keys admit."""
        ...

    def rows(self) -> list[Row]:
        """Every stored chunk's metadata (no texts, no vectors): what a build or a table refresh diffs against."""
        ...

    def generation(self) -> str:
        """A token that changes whenever the live index changes; caches built from the index compare it."""
        ...

    def changes(self, since: str) -> Changes | None:
        """What changed since generation `since` (rows stamped after it, metadata only; ids deleted since).

        None when the stamp chain from `since` is broken (a full rebuild's new
        collection the reader did not follow, an index written before stamps,
        a reader further behind than the deletion log): list every row instead.
        """
        ...

    def manifest(self) -> Manifest | None:
        """What built the live index, or None when nothing was ever built."""
        ...


class StoreWriter(Protocol):
    """Writes into one index build; nothing a fresh build writes is served before `commit`."""

    @property
    def is_fresh(self) -> bool:
        """True for a full rebuild's new collection, which replaces the live one at `commit`."""
        ...

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        """Write chunks with their vectors, replacing whatever was stored under the same ids."""
        ...

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        """New metadata (access included) for chunks whose text and vector are unchanged; replaces, never merges."""
        ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def commit(self) -> None:
        """Record the manifest; for a fresh build, make it the live index."""
        ...

    def mark_changed(self) -> None:
        """Tell readers in every process that the live index changed (a new generation)."""
        ...


class Store(StoreReader, Protocol):
    """A store the indexer can build: the reader and a writer."""

    def open_for_write(self, manifest: Manifest, *, fresh: bool = False) -> StoreWriter:
        """A writer into the live index, or into a new build when `fresh` (a full rebuild).

        Raises IndexMismatchError when the live index was built differently and `fresh` is not set.
        """
        ...
