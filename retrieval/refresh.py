"""Bring a chunk table up to the store's new generation by re-reading only what changed.

Two steps, of different urgency. `apply_access` is the access part: from the
rows changed since the table's generation (metadata only, see
`ChromaStore.changes`) it restricts, relabels or withdraws the rows the table
holds, sharing its vectors; it is what a query waits for, so that no chunk
whose access the store tightened is served. `apply_changes` (from the same
change listing) and `refresh_table` (from a listing of every row, when the
change chain is broken) build the next table, texts and vectors included, off
the query path.

Reading the whole index (texts, metadata, vectors) after every ingest cost
2.6 s at 10k chunks and 30 s at 100k, paid by the first query after the
change. Here the store is asked for its metadata only (`rows()`: no texts,
no vectors), each stored id is compared with the row the table holds, and:

- an unchanged row (same content hash, same metadata, same access keys) is reused with its vector;
- a row whose text is unchanged but whose metadata or access moved (a page
  restricted, lines shifted) is rebuilt from the new metadata, keeping its vector;
- a new or edited chunk is read from the store (text and vector);
- an id the store no longer has is dropped.

Access comes from the new metadata for every row that changed, so a chunk
restricted by a re-ingest is restricted in the refreshed table. Texts are
read before vectors and a writer replaces both at once, so a write racing
this refresh can only leave a row's vector newer than its text; its hash then
differs from the store's at the next generation (every write moves it), and
the row is read again.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ingest.documents import Chunk

from .protocols import StoreReader
from .records import Changes, Row
from .table import ChunkTable


def apply_access(table: ChunkTable, changes: Changes) -> ChunkTable:
    """The table with the access of `changes` applied to the rows it holds; no texts or vectors are read.

    A row whose text is unchanged takes its new metadata (access widened or
    narrowed); a row whose text changed keeps its old text readable only by
    the groups both the old and the new access admit (the new text comes with
    the next table); a deleted row is readable by no one. A new id waits for
    the next table.
    """
    rows: dict[int, tuple[Chunk, frozenset[str]]] = {}
    for listed in changes.rows:
        at = table.row(listed.chunk.id)
        if at is None:
            continue
        old = table.chunks[at]
        if old.hash == listed.hash:
            rows[at] = (replace(listed.chunk, text=old.text), listed.readers)
        else:
            narrowed = tuple(g for g in old.access if g in listed.chunk.access)
            rows[at] = (replace(old, access=narrowed), table.readers[at] & listed.readers)
    for chunk_id in changes.deleted:
        at = table.row(chunk_id)
        if at is not None:
            rows[at] = (replace(table.chunks[at], access=()), frozenset())
    return table.relabelled(rows) if rows else table


def apply_changes(table: ChunkTable, changes: Changes, store: StoreReader) -> tuple[ChunkTable, int]:
    """The next table from a change listing: rows not listed are kept, deleted ones dropped, changed ones diffed."""
    listed = {row.chunk.id: row for row in changes.rows}
    ids = sorted({c.id for c in table.chunks if c.id not in changes.deleted} | set(listed))
    return _rebuild(table, ids, listed, store)


def refresh_table(table: ChunkTable, store: StoreReader) -> tuple[ChunkTable, int]:
    """The table of the store's current content and how many rows were re-read; unchanged rows are reused."""
    stored = {row.chunk.id: row for row in store.rows()}
    return _rebuild(table, sorted(stored), stored, store)


def _rebuild(table: ChunkTable, ids: list[str], stored: dict[str, Row], store: StoreReader) -> tuple[ChunkTable, int]:
    """The table of rows `ids`: those in `stored` diffed against the held table, the others kept as held."""
    reuse: list[int] = []  # for each new row: the old row whose vector it keeps, or -1 (re-read)
    chunks: list[Chunk | None] = []
    readers: list[frozenset[str]] = []
    for chunk_id in ids:
        listed = stored.get(chunk_id)
        row = table.row(chunk_id)
        if listed is None and row is not None:  # not changed since the table's generation: kept as it is
            reuse.append(row)
            chunks.append(table.chunks[row])
            readers.append(table.readers[row])
            continue
        assert listed is not None
        if row is None or table.chunks[row].hash != listed.hash:
            reuse.append(-1)
            chunks.append(None)
        else:
            old = table.chunks[row]
            relabelled = replace(listed.chunk, text=old.text)
            reuse.append(row)
            chunks.append(old if relabelled == old else relabelled)
        readers.append(listed.readers)
    missing = [chunk_id for chunk_id, row in zip(ids, reuse, strict=True) if row < 0]
    fresh = {c.id: c for c in store.chunks(ids=missing)} if missing else {}
    fresh_vectors = dict(zip(missing, store.vectors(missing), strict=True)) if missing else {}
    keep = [i for i, chunk_id in enumerate(ids) if reuse[i] >= 0 or (chunk_id in fresh and chunk_id in fresh_vectors)]
    rows = [chunks[i] if reuse[i] >= 0 else fresh[ids[i]] for i in keep]
    dimension = table.dimension or (len(next(iter(fresh_vectors.values()))) if fresh_vectors else 0)
    vectors = np.empty((len(keep), dimension), dtype=np.float32)
    old_rows = np.asarray([reuse[i] for i in keep], dtype=np.int64)
    reused = old_rows >= 0
    if reused.any():
        vectors[reused] = table.vectors[old_rows[reused]]
    for at in np.flatnonzero(~reused).tolist():
        vectors[at] = np.asarray(fresh_vectors[ids[keep[at]]], dtype=np.float32)
    return ChunkTable.of_rows(tuple(c for c in rows if c is not None), vectors, tuple(readers[i] for i in keep)), len(missing)

