"""An in-memory store that implements the store protocols the way Chroma does, for the contract suite and unit tests.

Rows are kept encoded (text, vector, metadata) through `retrieval.records`,
and every access-filtered read evaluates the same `where` Chroma is given, so
whatever the encoding does to group names (two names meeting in one key) this
store does too. Handles on one `MemorySpace` share it like two processes on
one Chroma: a build writes a fresh collection and moves the pointer at commit,
leftovers of a build that died are dropped at the next commit.
"""

from __future__ import annotations

import itertools
import math
import re
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ingest.documents import Chunk
from retrieval.embedder import Embedder
from retrieval.records import (
    ChangeLog,
    Changes,
    Manifest,
    Metadata,
    Record,
    Row,
    acl_filter,
    changed_filter,
    chunk_from_record,
    chunk_metadata,
    decode_record,
    decode_row,
    generation_token,
    stamped_metadata,
    token_stamp,
)

_BUILD = re.compile(r"-\d{14}-[0-9a-f]{6}")


def admits(where: dict[str, Any], meta: Metadata) -> bool:
    """Chroma's `where` semantics for the filters `acl_filter` and `changed_filter` build: equality, `$gt`, `$or`."""
    if "$or" in where:
        return any(admits(clause, meta) for clause in where["$or"])
    return all(_holds(meta.get(key), value) for key, value in where.items())


def _holds(stored: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict) and "$gt" in wanted:
        return isinstance(stored, int) and stored > wanted["$gt"]  # a row without the key never matches, as in Chroma
    return bool(stored == wanted)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


@dataclass
class Stored:
    """One row as a store keeps it: text, vector and encoded metadata."""

    text: str
    vector: list[float]
    meta: Metadata


class MemorySpace:
    """One in-memory 'Chroma': named collections and each store's pointer, shared by every handle on it."""

    def __init__(self) -> None:
        self.collections: dict[str, dict[str, Stored]] = {}
        self.pointers: dict[str, dict[str, Any]] = {}  # store name -> collection, manifest, generation
        self._ticks = itertools.count(1)

    def tick(self) -> int:
        return next(self._ticks)


class MemoryIndex:
    """Implements `retrieval.protocols.Store`; `MemoryIndex(embedder, chunks)` is a store already built from chunks."""

    def __init__(self, embedder: Embedder | None = None, chunks: Iterable[Chunk] = (), *,
                 space: MemorySpace | None = None, name: str = "docs") -> None:
        self.embedder = embedder
        self.space = space or MemorySpace()
        self.name = name
        chunks = list(chunks)
        if chunks:
            self.add(chunks)

    # -- the pointer ----------------------------------------------------------

    def _pointer(self) -> dict[str, Any] | None:
        return self.space.pointers.get(self.name)

    def _live(self) -> dict[str, Stored]:
        pointer = self._pointer()
        return {} if pointer is None else self.space.collections[pointer["collection"]]

    def manifest(self) -> Manifest | None:
        pointer = self._pointer()
        return None if pointer is None else pointer["manifest"]

    def generation(self) -> str:
        pointer = self._pointer()
        return ":" if pointer is None else generation_token(pointer["collection"], str(pointer["generation"]),
                                                            pointer["log"])

    def next_stamp(self) -> int:
        pointer = self._pointer()
        return pointer["log"].stamp + 1 if pointer is not None else 1

    def changes(self, since: str) -> Changes | None:
        """As `ChromaStore.changes`: the rows stamped after `since` and the ids logged as deleted since."""
        pointer = self._pointer()
        if pointer is None:
            return None
        current, collection = self.generation(), pointer["collection"]
        if since == current:
            return Changes(current)
        if since == pointer.get("follows") and token_stamp(since, collection) is None:
            return Changes(current, complete=False)
        stamp = token_stamp(since, collection)
        deleted = pointer["log"].deleted_since(stamp) if stamp is not None else None
        if stamp is None or deleted is None:
            return None
        where = changed_filter(stamp)
        rows = tuple(decode_row(cid, row.meta) for cid, row in self._live().items() if admits(where, row.meta))
        return Changes(current, rows, deleted - {row.chunk.id for row in rows})

    def collections(self) -> list[str]:
        return sorted([*self.space.collections, *(f"{name}-active" for name in self.space.pointers)])

    def _bump(self, stamp: int, deleted: Sequence[str] = ()) -> None:
        pointer = self._pointer()
        if pointer is not None:
            pointer["generation"] = self.space.tick()
            pointer["log"] = pointer["log"].advance(stamp, str(pointer["generation"]), deleted)

    def _activate(self, collection: str, manifest: Manifest, stamp: int = 1, deleted: Sequence[str] = ()) -> None:
        old = self._pointer()
        generation = self.space.tick()
        if old is not None and old["collection"] == collection:
            log = old["log"].advance(stamp, str(generation), deleted)
        else:
            log = ChangeLog.start(stamp, str(generation))
        self.space.pointers[self.name] = {"collection": collection, "manifest": manifest, "generation": generation,
                                          "log": log, "follows": self.generation() if old is not None else ""}
        for name in list(self.space.collections):  # the old build, and builds that died before switching over
            if name != collection and name.startswith(self.name) and _BUILD.fullmatch(name[len(self.name):]):
                del self.space.collections[name]

    def open_for_write(self, manifest: Manifest, *, fresh: bool = False) -> MemoryWriter:
        current = self.manifest()
        pointer = self._pointer()
        if current is not None and pointer is not None and not fresh:
            current.check(manifest.embedder, manifest.dimension)
            return MemoryWriter(self, pointer["collection"], manifest, fresh=False)
        name = f"{self.name}-{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:6]}"
        self.space.collections[name] = {}
        return MemoryWriter(self, name, manifest, fresh=True)

    # -- reads, filtered as Chroma filters ------------------------------------

    def _admitted(self, groups: Iterable[str]) -> list[tuple[str, Stored]]:
        where = acl_filter(groups)
        return [(cid, row) for cid, row in self._live().items() if admits(where, row.meta)]

    def count(self, groups: Iterable[str] | None = None) -> int:
        return len(self._live()) if groups is None else len(self._admitted(groups))

    def _nearest(self, vector: Sequence[float], k: int, groups: Iterable[str]) -> list[tuple[str, Stored, float]]:
        scored = [(cid, row, cosine(vector, row.vector)) for cid, row in self._admitted(groups)]
        return sorted(scored, key=lambda hit: -hit[2])[:max(k, 0)]

    def query(self, vector: Sequence[float], k: int, groups: Iterable[str]) -> list[tuple[Chunk, float]]:
        readers = frozenset(groups)
        hits = [(chunk_from_record(cid, row.text, row.meta), score) for cid, row, score in self._nearest(vector, k, readers)]
        return [(c, s) for c, s in hits if c.readable_by(readers)]  # the stored access list must agree with the key

    def nearest(self, vector: Sequence[float], k: int, groups: Iterable[str]) -> list[tuple[str, float]]:
        return [(cid, score) for cid, _, score in self._nearest(vector, k, groups)]

    def chunks(self, groups: Iterable[str] | None = None, ids: Sequence[str] | None = None) -> list[Chunk]:
        if ids is not None and not ids:
            return []
        readers = None if groups is None else frozenset(groups)
        rows = self._live().items() if readers is None else self._admitted(readers)
        found = [chunk_from_record(cid, row.text, row.meta) for cid, row in rows if ids is None or cid in ids]
        return sorted((c for c in found if readers is None or c.readable_by(readers)), key=lambda c: c.id)

    def vectors(self, ids: Sequence[str]) -> list[list[float]]:
        live = self._live()
        return [list(live[cid].vector) for cid in ids]

    def records(self) -> list[Record]:
        return [decode_record(cid, row.text, row.meta, row.vector) for cid, row in self._live().items()]

    def rows(self) -> list[Row]:
        return [decode_row(cid, row.meta) for cid, row in self._live().items()]

    # -- the list view unit tests edit: (chunk, vector) pairs of the live index --

    @property
    def items(self) -> list[tuple[Chunk, list[float]]]:
        return [(chunk_from_record(cid, row.text, row.meta), row.vector) for cid, row in self._live().items()]

    @items.setter
    def items(self, pairs: list[tuple[Chunk, list[float]]]) -> None:
        self.replace_items(pairs)

    def replace_items(self, pairs: Sequence[tuple[Chunk, Sequence[float]]], *, announce: bool = True) -> None:
        """Make the live index hold exactly `pairs`; `announce=False` writes like an ingest before its generation moves."""
        if self._pointer() is None:
            self._build_empty()
        live, stamp = self._live(), self.next_stamp()
        pointer = self._pointer()
        assert pointer is not None
        wanted = {c.id: Stored(c.text, [float(x) for x in v], chunk_metadata(c)) for c, v in pairs}
        pending = pointer.setdefault("pending", set())
        pending.update(cid for cid in live if cid not in wanted)
        for cid in [cid for cid in live if cid not in wanted]:
            del live[cid]
        for cid, row in wanted.items():  # a row written again is stamped, an unchanged one keeps its stamp
            held = live.get(cid)
            if held is None or (held.text, held.vector, {k: v for k, v in held.meta.items() if k != "changed"}) != (
                    row.text, row.vector, row.meta):
                live[cid] = Stored(row.text, row.vector, row.meta | {"changed": stamp})
        if announce:
            self._bump(stamp, sorted(pointer.pop("pending")))

    def add(self, chunks: Sequence[Chunk]) -> None:
        """Embed and store chunks in the live index (building one when there is none), then announce it."""
        if self.embedder is None:
            raise ValueError("MemoryIndex.add embeds its chunks: give the store an embedder")
        vectors = self.embedder.embed([c.embedding_text for c in chunks]) if chunks else []
        self.replace_items([*self.items, *zip(chunks, vectors, strict=True)])

    def _build_empty(self) -> None:
        embedder_id, dimension = (self.embedder.id, self.embedder.dimension) if self.embedder else ("none", 0)
        self.open_for_write(Manifest(embedder=embedder_id, dimension=dimension), fresh=True).commit()


class MemoryWriter:
    """Implements `retrieval.protocols.StoreWriter` on one collection of a `MemorySpace`."""

    def __init__(self, store: MemoryIndex, collection: str, manifest: Manifest, *, fresh: bool) -> None:
        self._store = store
        self._collection = collection
        self._manifest = manifest
        self._fresh = fresh
        self._stamp = 1 if fresh else store.next_stamp()
        self._deleted: list[str] = []

    @property
    def is_fresh(self) -> bool:
        return self._fresh

    def _rows(self) -> dict[str, Stored]:
        return self._store.space.collections[self._collection]

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        if len(chunks) != len(vectors):
            raise ValueError(f"upsert needs one vector per chunk, got {len(chunks)} chunks and {len(vectors)} vectors")
        rows = self._rows()
        for chunk, vector in zip(chunks, vectors, strict=True):
            rows[chunk.id] = Stored(chunk.text, [float(x) for x in vector], stamped_metadata(chunk, self._stamp))

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        rows = self._rows()
        for chunk in chunks:
            if chunk.id in rows:
                rows[chunk.id].meta = stamped_metadata(chunk, self._stamp)

    def delete(self, ids: Sequence[str]) -> None:
        rows = self._rows()
        self._deleted.extend(cid for cid in ids if cid in rows)
        for cid in ids:
            rows.pop(cid, None)

    def commit(self) -> None:
        self._store._activate(self._collection, self._manifest, self._stamp, self._deleted)
        self._fresh, self._stamp, self._deleted = False, self._stamp + 1, []

    def mark_changed(self) -> None:
        if not self._fresh:
            self._store._bump(self._stamp, self._deleted)
            self._stamp, self._deleted = self._stamp + 1, []
