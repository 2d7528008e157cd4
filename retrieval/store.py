"""The Chroma store: reads of the live index and the writer, over `ChromaIndex` (connection and pointer).

Records cross into the rest of the code only as types (`Chunk`, `Record`,
`Row`); the metadata encoding, access keys included, is `retrieval.records`.
Every read that takes reader groups filters with the store's `where`, and the
stored access list must agree with the key before a chunk is returned.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ingest.documents import Chunk

from .chroma import ChromaIndex
from .records import (
    ChangeLog,
    Changes,
    Manifest,
    Metadata,
    Record,
    Row,
    acl_filter,
    changed_filter,
    chunk_from_record,
    decode_record,
    decode_row,
    generation_token,
    is_whole,
    stamped_metadata,
    token_stamp,
)

_BATCH = 256
_PAGE = 5_000  # records per read when loading the whole index into the chunk table


class ChromaStore(ChromaIndex):
    """Chunks in Chroma: embedded (`path`) or a Chroma server (`url`); implements `protocols.Store`."""

    def open_for_write(self, manifest: Manifest, *, fresh: bool = False) -> ChromaWriter:
        """A writer into the live collection, or into a new one when `fresh` (a full rebuild).

        Raises IndexMismatchError when the live index was built differently and
        `fresh` is not set.
        """
        self._connect()
        current = self.manifest()
        if current is not None and not fresh:
            current.check(manifest.embedder, manifest.dimension)
            return ChromaWriter(self, self._live(), manifest, switch=False, stamp=self.next_stamp())
        return ChromaWriter(self, self._new_build(), manifest, switch=True, stamp=1)

    def _get(self, *, ids: Sequence[str] | None = None, **kwargs: Any) -> dict[str, list[Any]] | None:
        """`collection.get` in pages of _PAGE records (or ids), merged.

        Chroma reads a whole get in one SQL statement, so an unpaged read of
        ~100k records fails ("too many SQL variables"); every read of the whole
        index, or of many ids, goes through here.
        """
        include = kwargs.get("include", [])
        merged: dict[str, list[Any]] = {"ids": [], **{key: [] for key in include}}

        def pages() -> Iterator[dict[str, Any]]:
            if ids is not None:
                yield from ({"ids": list(ids[start : start + _PAGE])} for start in range(0, len(ids), _PAGE))
                return
            offset = 0
            while True:
                yield {"limit": _PAGE, "offset": offset}
                offset += _PAGE

        for args in pages():
            page = self._read("get", lambda live, args=args: live.get(**args, **kwargs))
            if page is None:
                return None
            merged["ids"].extend(page["ids"])
            for key in include:
                merged[key].extend(page[key] if page[key] is not None else [])
            if ids is None and len(page["ids"]) < _PAGE:
                break
        return merged

    def count(self, groups: Iterable[str] | None = None) -> int:
        """How many chunks the index holds (or, given reader groups, how many of them those groups may read)."""
        if groups is None:
            return int(self._read("count", lambda live: live.count()) or 0)
        where = acl_filter(groups)
        found = self._get(where=where, include=[])
        return 0 if found is None else len(found["ids"])

    def query(self, vector: Sequence[float], k: int, groups: Iterable[str]) -> list[tuple[Chunk, float]]:
        """The k nearest chunks that `groups` may read, with cosine similarity."""
        if k <= 0:
            return []
        where = acl_filter(groups)
        result = self._read("query", lambda live: live.query(
            query_embeddings=[list(vector)], n_results=k, where=where, include=["documents", "metadatas", "distances"]))
        if result is None:
            return []
        ids, docs = result["ids"][0], result["documents"][0]
        metas, distances = result["metadatas"][0], result["distances"][0]
        readers = frozenset(groups)
        hits = [
            (chunk_from_record(i, d, m), 1.0 - float(dist))
            for i, d, m, dist in zip(ids, docs, metas, distances, strict=True)
            if is_whole(d, m)
        ]
        return [(c, s) for c, s in hits if c.readable_by(readers)]  # the stored access list must agree with the key

    def nearest(self, vector: Sequence[float], k: int, groups: Iterable[str]) -> list[tuple[str, float]]:
        """Ids of the k nearest chunks `groups` may read, with cosine similarity: only what the store alone knows.

        The texts, metadata and vectors of these ids are in the chunk table the
        process already holds, so the query asks for distances only.
        """
        if k <= 0:
            return []
        where = acl_filter(groups)
        result = self._read("query", lambda live: live.query(
            query_embeddings=[list(vector)], n_results=k, where=where, include=["distances"]))
        if result is None:
            return []
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], result["distances"][0], strict=True)]

    def records(self) -> list[Record]:
        """Every stored chunk with its vector and the groups its access keys admit, read page by page."""
        result = self._get(include=["documents", "metadatas", "embeddings"])
        if result is None:
            return []
        return [decode_record(i, d, m, v)
                for i, d, m, v in zip(result["ids"], result["documents"], result["metadatas"], result["embeddings"], strict=True)
                if is_whole(d, m)]

    def chunks(self, groups: Iterable[str] | None = None, ids: Sequence[str] | None = None) -> list[Chunk]:
        """Stored chunks (all, or those `groups` may read, or the given ids), in id order."""
        kwargs: dict[str, Any] = {"include": ["documents", "metadatas"]}
        if groups is not None:
            kwargs["where"] = acl_filter(groups)
        if ids is not None:
            if not ids:
                return []
            kwargs["ids"] = list(ids)
        result = self._get(**kwargs)
        if result is None:
            return []
        chunks = [chunk_from_record(i, d, m) for i, d, m in zip(result["ids"], result["documents"], result["metadatas"], strict=True)
                  if is_whole(d, m)]
        if groups is not None:
            readers = frozenset(groups)
            chunks = [c for c in chunks if c.readable_by(readers)]
        return sorted(chunks, key=lambda c: c.id)

    def vectors(self, ids: Sequence[str]) -> list[list[float]]:
        """Stored vectors of the given chunk ids, in the order asked (lets a moved chunk skip re-embedding)."""
        if not ids:
            return []
        result = self._get(ids=list(ids), include=["embeddings"])
        if result is None:
            return []
        by_id = {i: [float(x) for x in v] for i, v in zip(result["ids"], result["embeddings"], strict=True)}
        return [by_id[i] for i in ids]

    def rows(self) -> list[Row]:
        """Every stored chunk's metadata, decoded; what an incremental build diffs against."""
        result = self._get(include=["metadatas"])
        if result is None:
            return []
        return [decode_row(i, m) for i, m in zip(result["ids"], result["metadatas"], strict=True) if is_whole("", m)]


    def changes(self, since: str) -> Changes | None:
        """What changed since generation `since`: the rows stamped after it (metadata only) and the ids it deleted.

        One pointer read, then one `where changed > stamp` read, so a refresh
        costs what changed, not the index's size. None when the chain from
        `since` is broken (another collection, an index written before stamps
        or by a writer that does not stamp, a reader further behind than the
        deletion log): the caller lists the index whole.
        """
        meta = self._pointer_state()
        if meta is None:
            return None
        log = ChangeLog.of(meta)
        current = generation_token(self._collection_name or "", self._generation, log)
        if since == current:
            return Changes(current)
        if since == meta.get("follows") and token_stamp(since, self._collection_name or "") is None:
            return Changes(current, complete=False)  # a full rebuild after the access step `since` already holds
        stamp = token_stamp(since, self._collection_name or "")
        deleted = log.deleted_since(stamp) if log is not None and stamp is not None else None
        if stamp is None or deleted is None:
            return None
        result = self._get(where=changed_filter(stamp), include=["metadatas"])
        rows = () if result is None else tuple(
            decode_row(i, m) for i, m in zip(result["ids"], result["metadatas"], strict=True) if is_whole("", m))
        return Changes(current, rows, deleted - {row.chunk.id for row in rows})


class ChromaWriter:
    """Writes into one collection; `commit()` makes a fresh collection live. Implements `protocols.StoreWriter`."""

    def __init__(self, store: ChromaStore, collection: Any, manifest: Manifest, *, switch: bool, stamp: int) -> None:
        self._store = store
        self._collection = collection
        self._manifest = manifest
        self._switch = switch
        self._stamp = stamp  # every row written carries it; the generation published next is stamped with it
        self._deleted: list[str] = []  # deleted since the last published generation, logged with it

    @property
    def is_fresh(self) -> bool:
        return self._switch

    def upsert(self, chunks: Sequence[Chunk], vectors: Sequence[Sequence[float]]) -> None:
        """Write chunks with their vectors, replacing whatever was stored under the same ids."""
        if len(chunks) != len(vectors):
            raise ValueError(f"upsert needs one vector per chunk, got {len(chunks)} chunks and {len(vectors)} vectors")
        for start in range(0, len(chunks), _BATCH):
            batch = chunks[start : start + _BATCH]
            self._store._call(
                "upsert",
                self._collection.upsert,
                ids=[c.id for c in batch],
                embeddings=[list(v) for v in vectors[start : start + _BATCH]],
                documents=[c.text for c in batch],
                metadatas=self._replacing(batch),
            )

    def update_metadata(self, chunks: Sequence[Chunk]) -> None:
        """New metadata for chunks whose text and vector are unchanged (moved lines, new access)."""
        for start in range(0, len(chunks), _BATCH):
            batch = chunks[start : start + _BATCH]
            self._store._call(
                "update",
                self._collection.update,
                ids=[c.id for c in batch],
                metadatas=self._replacing(batch),  # no documents: Chroma would try to re-embed them
            )

    def _replacing(self, batch: Sequence[Chunk]) -> list[Metadata]:
        """Metadata that replaces the stored record instead of merging into it.

        Chroma merges metadata on upsert and update, so a key the chunk no
        longer has (an `acl_<group>` of a group that lost access) would survive
        and keep matching the access filter; sending None deletes it.
        """
        old: dict[str, Any] = {}
        if not self._switch:  # a fresh collection (a full rebuild) has no stored record to replace
            stored = self._store._call("get", self._collection.get, ids=[c.id for c in batch], include=["metadatas"])
            old = dict(zip(stored["ids"], stored["metadatas"], strict=True))
        metas = []
        for chunk in batch:
            meta = stamped_metadata(chunk, self._stamp)
            meta.update({key: None for key in (old.get(chunk.id) or {}) if key not in meta})
            metas.append(meta)
        return metas

    def delete(self, ids: Sequence[str]) -> None:
        self._deleted.extend(ids)
        for start in range(0, len(ids), _BATCH):
            self._store._call("delete", self._collection.delete, ids=list(ids[start : start + _BATCH]))

    def commit(self) -> None:
        """Record the manifest; for a fresh collection, switch the live pointer to it."""
        self._store._activate(self._collection.name, self._manifest, self._stamp, self._deleted)
        self._switch, self._stamp, self._deleted = False, self._stamp + 1, []

    def mark_changed(self) -> None:
        """Tell readers (in this process and others) that the live index changed: a new generation."""
        if not self._switch:
            self._store._bump(self._stamp, self._deleted)
            self._stamp, self._deleted = self._stamp + 1, []
