"""The Chroma connection and the index pointer: which collection is live, and what built it.

chromadb is imported here and nowhere else. The index records what built it
(format, embedder id, dimension, site config hash) in a small pointer
collection that also names the active chunk collection. A full rebuild writes
a fresh collection and only then moves the pointer, so a failed rebuild leaves
the old index serving. The reads and the writer are in `retrieval.store`.

Damaged files of an embedded index (Chroma says "database disk image is
malformed" or "file is not a database", or its Rust core panics, which
Python sees as a BaseException) become IndexDamagedError, whose fix is a full
rebuild into a fresh folder once the damaged one is moved aside (`set_aside`).
"""

from __future__ import annotations

import contextlib
import re
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .errors import IndexDamagedError, IndexMismatchError, StoreUnavailableError
from .lease import Lease
from .quarantine import set_aside
from .records import ChangeLog, Manifest, generation_token

POINTER_TTL = 1.0
_BUILD_SUFFIX = re.compile(r"-\d{14}-[0-9a-f]{6}")  # what `_new_build` appends to the store name
# What Chroma's embedded SQLite says when its file is damaged (the header, a page, a row).
_DAMAGE = ("database disk image is malformed", "file is not a database", "error occurred while decoding column",
           "failed to pull logs from the log store")


class ChromaIndex:
    """One named index in Chroma: embedded (`path`) or a Chroma server (`url`), same code either way."""

    def __init__(self, *, path: str | None = None, url: str | None = None, name: str = "docs") -> None:
        if bool(path) == bool(url):
            raise ValueError("ChromaStore needs exactly one of path= (embedded) or url= (server)")
        self._path = path
        self._url = url
        self.name = name  # its pointer is `<name>-active`, its builds `<name>-<time>-<hex>`
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
            except BaseException as exc:  # chromadb raises bare exceptions for connection failures
                if not isinstance(exc, Exception) and not _is_panic(exc):
                    raise
                if self._path:
                    self._forget()  # a failed start leaves a half-built client cached for this path
                    if _is_damage(exc):
                        raise self._damaged("open", exc) from exc
                raise StoreUnavailableError(f"cannot reach Chroma at {self.location}: {exc}") from exc
        return self._client

    def _forget(self) -> None:
        """Drop chromadb's cached client system for this path, so the next connection starts from the files.

        chromadb shares one system per path and keeps it even when starting it
        failed; every later client then fails with an unrelated AttributeError.
        """
        from chromadb.api.shared_system_client import SharedSystemClient

        system = SharedSystemClient._identifier_to_system.pop(self._path or "", None)
        SharedSystemClient._identifier_to_refcount.pop(self._path or "", None)
        if system is not None:
            with contextlib.suppress(Exception):
                system.stop()
        self._client, self._collection = None, None

    def close(self) -> None:
        """Let go of the index's files: the next call on this handle (or a new one) reads them afresh.

        chromadb keeps one system per folder for the life of the process, and
        SQLite trusts its page cache while the file header is unchanged, so
        without this a handle opened later in the same process can be served
        pages that are no longer what the files hold. A server index has no
        files here; closing only drops the connection.
        """
        if self.embedded:
            self._forget()
        else:
            self._client, self._collection = None, None

    def _damaged(self, what: str, exc: BaseException) -> IndexDamagedError:
        return IndexDamagedError(
            f"the index at {self._path} is damaged ({what}: {type(exc).__name__}: {str(exc)[:200]}); stop the server "
            "and run `make ingest FULL=1`: it moves the damaged folder aside and rebuilds the index from the content")

    def set_aside(self) -> Path:
        """Move a damaged embedded index to `<folder>.damaged-<time>` (never deleted); the next use starts empty."""
        if not self.embedded:
            raise ValueError(f"only an embedded index can be moved aside; Chroma at {self._url} keeps its own files")
        self._forget()
        return set_aside(Path(self._path or ""))

    def writer_lease(self) -> Lease | None:
        """The lease every writer of a Chroma server's index takes, on any machine; None for an embedded index,
        which one process owns (its folder's file lock, `lock.index_lock`, is all the serialising it needs)."""
        if self.embedded:
            return None
        return Lease(self._connect(), self.name, call=self._call)

    @property
    def embedded(self) -> bool:
        """True for an index in a folder this process opens itself (not a Chroma server's)."""
        return bool(self._path)

    @property
    def location(self) -> str:
        return self._path or self._url or ""

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a Chroma call; connection failures become StoreUnavailableError."""
        try:
            return fn(*args, **kwargs)
        except (IndexMismatchError, StoreUnavailableError):
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception) and not _is_panic(exc):
                raise  # KeyboardInterrupt, SystemExit
            if self._path and _is_damage(exc):
                self._collection = None
                raise self._damaged(what, exc) from exc
            if not isinstance(exc, Exception):
                raise StoreUnavailableError(f"Chroma at {self.location} failed ({what}): {exc}") from exc
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
        return f"{self.name}-active"

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
            site=meta.get("site", ""),
            site_name=meta.get("site_name", ""),
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
        (the chunk table, BM25, the docs the viewer serves) compare it to go
        stale. It carries the change stamp (see `records.ChangeLog`) so a
        reader can later ask what changed since it (`ChromaStore.changes`).
        """
        meta = self._pointer_state()
        if meta is None:
            return ":"
        return generation_token(self._collection_name or "", self._generation, ChangeLog.of(meta))

    def _pointer_state(self) -> dict[str, Any] | None:
        """The pointer's metadata, one round trip; the live collection handle follows it when a rebuild switched."""
        pointer = self._pointer()
        if pointer is None:
            return None
        meta = dict(pointer.metadata or {})
        name, self._generation = meta.get("collection"), str(meta.get("generation", ""))
        if name != self._collection_name:
            self._collection, self._live_checked = None, 0.0  # a full rebuild switched collections: follow it now
            self._live()
        return meta

    def next_stamp(self) -> int:
        """The change stamp a writer into the live collection writes its rows with: one past the pointer's."""
        meta = self._pointer_state()
        log = ChangeLog.of(meta) if meta is not None else None
        return (log.stamp if log is not None else 0) + 1

    def _bump(self, stamp: int, deleted: Sequence[str] = ()) -> None:
        """A new generation, stamped `stamp` (the rows just written carry it), logging the ids just deleted."""
        pointer = self._pointer()
        if pointer is None:
            return
        meta = dict(pointer.metadata or {})
        generation = uuid.uuid4().hex[:12]
        log = ChangeLog.of(meta) or ChangeLog.start(stamp - 1, generation)  # an index from before stamps starts a chain
        meta |= {"generation": generation} | log.advance(stamp, generation, deleted).metadata()
        self._call("mark pointer", pointer.modify, metadata=meta)
        self._generation = generation

    def _new_build(self) -> Any:
        """A new, empty chunk collection for a full rebuild; served only once `_activate` points at it."""
        name = f"{self.name}-{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:6]}"
        return self._call(
            "create collection",
            self._connect().create_collection,
            name,
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )

    def _activate(self, collection_name: str, manifest: Manifest, stamp: int = 1, deleted: Sequence[str] = ()) -> None:
        """Point at `collection_name`, stamped `stamp`: the same collection continues its change chain, a new one starts
        one, and records the generation it follows, whose readers already hold the rebuild's access step."""
        client = self._connect()
        old = self._pointer()
        old_meta = dict(old.metadata or {}) if old is not None else {}
        old_name = old_meta.get("collection")
        generation = uuid.uuid4().hex[:12]
        old_log = ChangeLog.of(old_meta)
        if old_name == collection_name and old_log is not None:
            log = old_log.advance(stamp, generation, deleted)
        else:
            log = ChangeLog.start(stamp, generation)
        meta = {
            "collection": collection_name,
            "embedder": manifest.embedder,
            "dimension": manifest.dimension,
            "format": manifest.format,
            "site": manifest.site,
            "site_name": manifest.site_name,
            "generation": generation,
            "follows": generation_token(str(old_name or ""), str(old_meta.get("generation", "")), old_log),
        } | log.metadata()
        if old is None:
            try:
                self._call("create pointer", client.create_collection, self._pointer_name, metadata=meta,
                           embedding_function=None)
            except Exception as exc:  # another writer created it meanwhile (writers without the lease): move it
                if "already exists" not in str(exc).lower():
                    raise
                old = self._pointer()
                old_name = (old.metadata or {}).get("collection") if old is not None else None
        if old is not None:
            self._call("move pointer", old.modify, metadata=meta)
        self._collection = None
        self._generation = generation
        if old_name and old_name != collection_name and old_name in self.collections():
            self._call("drop old collection", client.delete_collection, old_name)
        self._drop_orphans(keep=collection_name)

    def _is_build(self, name: str) -> bool:
        """True for a chunk collection of this store (not one of another store whose name shares a prefix)."""
        return name.startswith(self.name) and bool(_BUILD_SUFFIX.fullmatch(name[len(self.name) :]))

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

    def _read(self, what: str, op: Callable[..., Any]) -> Any:
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


def _is_panic(exc: BaseException) -> bool:
    """A panic in Chroma's Rust core (pyo3's PanicException derives from BaseException, not Exception)."""
    return type(exc).__name__ == "PanicException"


def _is_damage(exc: BaseException) -> bool:
    text = f"{exc} {exc.__cause__ or ''}".lower()
    return _is_panic(exc) or any(sign in text for sign in _DAMAGE)


def _is_connection_error(exc: Exception) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return any(word in text for word in ("connect", "timeout", "timed out", "unreachable", "refused", "could not connect"))
