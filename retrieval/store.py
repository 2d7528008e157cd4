"""The vector store: chunks and their vectors in Chroma. chromadb is imported here and nowhere else.

Access control lives in the query: every chunk carries one boolean metadata
key per group that may read it (`acl_public`, `acl_staff`), and every query
filters on the viewer's groups with a Chroma `where`, so a restricted chunk is
never scored for a viewer who may not read it.

The index records what built it (format, embedder id, dimension, content root,
site config hash) in a small pointer collection that also names the active
chunk collection. A full rebuild writes a fresh collection and only then moves
the pointer, so a failed rebuild leaves the old index serving.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ingest.documents import GROUP_RULE, Chunk, SourceSpan, is_group_name

from .errors import IndexMismatchError, QueryError, StoreUnavailableError
from .table import Record

INDEX_FORMAT = 1
_ACL_PREFIX = "acl_"
_BATCH = 256
_PAGE = 5_000  # records per read when loading the whole index into the chunk table
POINTER_TTL = 1.0
_BUILD_SUFFIX = re.compile(r"-\d{14}-[0-9a-f]{6}")  # what open_for_write appends to the store name


@dataclass(frozen=True)
class Manifest:
    """What built an index; a reader with a different embedder must not use it."""

    embedder: str
    dimension: int
    format: int = INDEX_FORMAT
    content_root: str = ""
    site: str = ""

    def check_embedder(self, embedder: str) -> None:
        """Raise when this index was built by another embedder (needs no model load: ids only)."""
        if self.embedder != embedder:
            raise IndexMismatchError(
                f"index was built with embedder {self.embedder!r} but {embedder!r} is configured; "
                "run `make ingest FULL=1` to rebuild"
            )

    def check(self, embedder: str, dimension: int) -> None:
        """Raise when this index cannot be read with the given embedder."""
        if self.format != INDEX_FORMAT:
            raise IndexMismatchError(
                f"index format {self.format} is not the supported format {INDEX_FORMAT}; "
                "rebuild it with `make ingest FULL=1`"
            )
        if (self.embedder, self.dimension) != (embedder, dimension):
            raise IndexMismatchError(
                f"index was built with embedder {self.embedder!r} ({self.dimension} dims) but "
                f"{embedder!r} ({dimension} dims) is configured; run `make ingest FULL=1` to rebuild"
            )


class VectorStore(Protocol):
    """What retrieval needs from a store: nearest chunks among those the groups may read."""

    def query(self, vector: Sequence[float], k: int, groups: Iterable[str]) -> list[tuple[Chunk, float]]: ...


MAX_GROUPS = 64  # Chroma's filter depth: ~1,000 `$or` clauses fail, ~10,000 crash its native code


def acl_key(group: str) -> str:
    """The metadata key marking a chunk readable by `group`: the name itself, so distinct names never share a key.

    Only names in the group alphabet have a key; anything else is an error
    rather than an escaped form that could meet another name's key.
    """
    if not is_group_name(group):
        raise ValueError(f"group name {group!r} is not allowed: use {GROUP_RULE}")
    return _ACL_PREFIX + group


def acl_filter(groups: Iterable[str]) -> dict[str, Any]:
    """A Chroma `where` that admits only chunks one of `groups` may read."""
    names = sorted(set(groups))
    if len(names) > MAX_GROUPS:
        raise QueryError(f"a reader may be in at most {MAX_GROUPS} groups, got {len(names)}")
    clauses = [{acl_key(g): True} for g in names]
    if not clauses:
        raise ValueError("a query needs at least one reader group")
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "doc_id": chunk.doc_id,
        "anchor": chunk.anchor,
        "url": chunk.url,
        "title": chunk.title,
        "heading_path": json.dumps(list(chunk.heading_path), ensure_ascii=False),
        "source": chunk.source,
        "line_start": chunk.span.line_start,
        "line_end": chunk.span.line_end,
        "span_start": chunk.span.start,
        "span_end": chunk.span.end,
        "doc_version": chunk.doc_version,
        "hash": chunk.hash,
        "access": ",".join(chunk.access),
    }
    meta.update({acl_key(group): True for group in chunk.access})
    return meta


def readers_of(meta: dict[str, Any]) -> frozenset[str]:
    """The groups whose access key is set on a stored record: who the store's `where` admits."""
    return frozenset(key[len(_ACL_PREFIX):] for key, value in meta.items() if key.startswith(_ACL_PREFIX) and value is True)


def chunk_from_record(chunk_id: str, text: str, meta: dict[str, Any]) -> Chunk:
    return Chunk(
        id=chunk_id,
        doc_id=meta["doc_id"],
        anchor=meta["anchor"],
        url=meta["url"],
        title=meta["title"],
        heading_path=tuple(json.loads(meta["heading_path"])),
        text=text,
        source=meta["source"],
        span=SourceSpan(meta["line_start"], meta["line_end"], meta["span_start"], meta["span_end"]),
        doc_version=meta["doc_version"],
        hash=meta["hash"],
        access=tuple(meta["access"].split(",")),
    )


class ChromaStore:
    """Chunks in Chroma: embedded (`path`) or a Chroma server (`url`), same code either way."""

    def __init__(self, *, path: str | None = None, url: str | None = None, name: str = "docs") -> None:
        if bool(path) == bool(url):
            raise ValueError("ChromaStore needs exactly one of path= (embedded) or url= (server)")
        self._path = path
        self._url = url
        self._name = name
        self._client: Any = None
        self._collection: Any = None
        self._collection_name: str | None = None
        self._live_checked = 0.0  # monotonic time the pointer was last read for a query
        self._generation = ""  # changes whenever a writer changes the live index (see generation())

    # -- connection -------------------------------------------------------

    def _connect(self) -> Any:
        if self._client is None:
            import chromadb
            from chromadb.config import Settings

            settings = Settings(anonymized_telemetry=False)
            try:
                if self._path:
                    self._client = chromadb.PersistentClient(path=self._path, settings=settings)
                else:
                    from urllib.parse import urlparse

                    parsed = urlparse(self._url or "")
                    self._client = chromadb.HttpClient(
                        host=parsed.hostname or "127.0.0.1",
                        port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                        ssl=parsed.scheme == "https",
                        settings=settings,
                    )
            except Exception as exc:  # chromadb raises bare exceptions for connection failures
                raise StoreUnavailableError(f"cannot reach Chroma at {self.location}: {exc}") from exc
        return self._client

    @property
    def location(self) -> str:
        return self._path or self._url or ""

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """Run a Chroma call; connection failures become StoreUnavailableError."""
        try:
            return fn(*args, **kwargs)
        except (IndexMismatchError, StoreUnavailableError):
            raise
        except Exception as exc:
            if _is_connection_error(exc):
                self._client = None
                self._collection = None
                raise StoreUnavailableError(f"Chroma at {self.location} is unavailable ({what}): {exc}") from exc
            if self._collection is not None and "does not exist" in str(exc).lower():
                # A full rebuild switched collections under a cached handle: re-read the pointer next time.
                self._collection = None
                raise StoreUnavailableError(f"the index at {self.location} was just rebuilt ({what}); try again") from exc
            raise

    # -- the pointer: which collection is live, and what built it -----------

    @property
    def _pointer_name(self) -> str:
        return f"{self._name}-active"

    def manifest(self) -> Manifest | None:
        """The manifest of the live index, or None when nothing was ever built."""
        pointer = self._pointer()
        if pointer is None:
            return None
        meta = dict(pointer.metadata or {})
        return Manifest(
            embedder=meta["embedder"],
            dimension=int(meta["dimension"]),
            format=int(meta["format"]),
            content_root=meta.get("content_root", ""),
            site=meta.get("site", ""),
        )

    def _pointer(self) -> Any:
        """The pointer collection, or None: one round trip (a lookup, not a listing of every collection)."""
        client = self._connect()

        def lookup() -> Any:
            try:
                return client.get_collection(self._pointer_name, embedding_function=None)
            except Exception as exc:
                if type(exc).__name__ == "NotFoundError" or "does not exist" in str(exc).lower():
                    return None
                raise

        return self._call("open pointer", lookup)

    def _live(self) -> Any:
        """The active chunk collection; the pointer is re-read at most every POINTER_TTL seconds.

        Reading the pointer costs two Chroma round trips, which was a sixth of a
        query's time; a full rebuild's switch is picked up within the TTL.
        """
        if self._collection is not None and time.monotonic() - self._live_checked < POINTER_TTL:
            return self._collection
        self._live_checked = time.monotonic()
        pointer = self._pointer()
        if pointer is None:
            return None
        name = (pointer.metadata or {}).get("collection")
        self._generation = str((pointer.metadata or {}).get("generation", ""))
        if self._collection is None or self._collection_name != name:
            if name not in self.collections():
                raise IndexMismatchError(
                    f"the index pointer {self._pointer_name!r} names collection {name!r}, which does not exist "
                    f"in Chroma at {self.location}; run `make ingest FULL=1` to rebuild"
                )
            self._collection = self._call("open collection", self._connect().get_collection, name, embedding_function=None)
            self._collection_name = name
        return self._collection

    def generation(self) -> str:
        """A token that changes whenever the live index changes (a commit, or an ingest's access step).

        Read from the pointer on every call (one cheap round trip), so a
        writer in another process (a CLI against a Chroma server) is seen by
        the next query, like one in this process. Caches built from the index
        (the chunk table, BM25, the docs the viewer serves) compare it to go stale.
        """
        pointer = self._pointer()
        if pointer is None:
            return ":"
        meta = pointer.metadata or {}
        name, self._generation = meta.get("collection"), str(meta.get("generation", ""))
        if name != self._collection_name:
            self._collection, self._live_checked = None, 0.0  # a full rebuild switched collections: follow it now
            self._live()
        return f"{self._collection_name}:{self._generation}"

    def _bump(self) -> None:
        pointer = self._pointer()
        if pointer is None:
            return
        generation = uuid.uuid4().hex[:12]
        self._call("mark pointer", pointer.modify, metadata=dict(pointer.metadata or {}) | {"generation": generation})
        self._generation = generation

    def open_for_write(self, manifest: Manifest, *, fresh: bool = False) -> StoreWriter:
        """A writer into the live collection, or into a new one when `fresh` (a full rebuild).

        Raises IndexMismatchError when the live index was built differently and
        `fresh` is not set.
        """
        client = self._connect()
        current = self.manifest()
        if current is not None and not fresh:
            current.check(manifest.embedder, manifest.dimension)
            return StoreWriter(self, self._live(), manifest, switch=False)
        name = f"{self._name}-{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:6]}"
        collection = self._call(
            "create collection",
            client.create_collection,
            name,
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )
        return StoreWriter(self, collection, manifest, switch=True)

    def _activate(self, collection_name: str, manifest: Manifest) -> None:
        client = self._connect()
        old = self._pointer()
        old_name = (old.metadata or {}).get("collection") if old is not None else None
        meta = {
            "collection": collection_name,
            "embedder": manifest.embedder,
            "dimension": manifest.dimension,
            "format": manifest.format,
            "content_root": manifest.content_root,
            "site": manifest.site,
            "generation": uuid.uuid4().hex[:12],
        }
        if old is None:
            self._call("create pointer", client.create_collection, self._pointer_name, metadata=meta, embedding_function=None)
        else:
            self._call("move pointer", old.modify, metadata=meta)
        self._collection = None
        self._generation = str(meta["generation"])
        if old_name and old_name != collection_name and old_name in self.collections():
            self._call("drop old collection", client.delete_collection, old_name)
        self._drop_orphans(keep=collection_name)

    def _is_build(self, name: str) -> bool:
        """True for a chunk collection of this store (not one of another store whose name shares a prefix)."""
        return name.startswith(self._name) and bool(_BUILD_SUFFIX.fullmatch(name[len(self._name) :]))

    def _drop_orphans(self, keep: str) -> None:
        """Delete collections left by rebuilds that died before switching over."""
        client = self._connect()
        for name in self.collections():
            if self._is_build(name) and name != keep:
                self._call("drop orphan", client.delete_collection, name)

    def collections(self) -> list[str]:
        """Names of every collection in this Chroma (for checking that no rebuild left orphans)."""
        client = self._connect()
        return sorted(self._call("list collections", lambda: [c.name for c in client.list_collections()]))

    # -- reads --------------------------------------------------------------

    def _read(self, what: str, op: Any) -> Any:
        """Run `op(live collection)`; once more on a fresh handle when a full rebuild switched collections meanwhile."""
        for attempt in (1, 2):
            live = self._live()
            if live is None:
                return None
            try:
                return self._call(what, op, live)
            except Exception as exc:
                if attempt == 2 or "does not exist" not in f"{exc} {exc.__cause__}".lower():
                    raise
                self._collection, self._live_checked = None, 0.0
        return None

    def _get(self, *, ids: Sequence[str] | None = None, **kwargs: Any) -> dict[str, list[Any]] | None:
        """`collection.get` in pages of _PAGE records (or ids), merged.

        Chroma reads a whole get in one SQL statement, so an unpaged read of
        ~100k records fails ("too many SQL variables"); every read of the whole
        index, or of many ids, goes through here.
        """
        include = kwargs.get("include", [])
        merged: dict[str, list[Any]] = {"ids": [], **{key: [] for key in include}}

        def pages() -> Iterable[dict[str, Any]]:
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
            if _whole(d, m)
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
        return [Record(chunk_from_record(i, d, m), v, readers_of(m))
                for i, d, m, v in zip(result["ids"], result["documents"], result["metadatas"], result["embeddings"], strict=True)
                if _whole(d, m)]

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
                  if _whole(d, m)]
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

    def hashes(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Every stored chunk id → (content hash, metadata); what an incremental build diffs against."""
        result = self._get(include=["metadatas"])
        if result is None:
            return {}
        return {i: (m["hash"], m) for i, m in zip(result["ids"], result["metadatas"], strict=True) if _whole("", m)}


class StoreWriter:
    """Writes into one collection; `commit()` makes a fresh collection live."""

    def __init__(self, store: ChromaStore, collection: Any, manifest: Manifest, *, switch: bool) -> None:
        self._store = store
        self._collection = collection
        self._manifest = manifest
        self._switch = switch

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

    def _replacing(self, batch: Sequence[Chunk]) -> list[dict[str, Any]]:
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
            meta: dict[str, Any] = chunk_metadata(chunk)
            meta.update({key: None for key in (old.get(chunk.id) or {}) if key not in meta})
            metas.append(meta)
        return metas

    def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), _BATCH):
            self._store._call("delete", self._collection.delete, ids=list(ids[start : start + _BATCH]))

    def commit(self) -> None:
        """Record the manifest; for a fresh collection, switch the live pointer to it."""
        self._store._activate(self._collection.name, self._manifest)
        self._switch = False

    def mark_changed(self) -> None:
        """Tell readers (in this process and others) that the live index changed: a new generation."""
        if not self._switch:
            self._store._bump()


def _whole(document: Any, meta: Any) -> bool:
    """False for a record read while a writer deletes it: a Chroma server can return its id with no metadata.

    Such a record has no access keys to check, so it is never served (and never counted as stored).
    """
    return document is not None and isinstance(meta, dict) and "doc_id" in meta and "hash" in meta


def _is_connection_error(exc: Exception) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return any(word in text for word in ("connect", "timeout", "timed out", "unreachable", "refused", "could not connect"))
