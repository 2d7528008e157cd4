"""One writer across machines: a lease held in the Chroma server that every replica and ingest shares.

`lock.index_lock` serialises the writers of one `DATA_DIR`; replicas on
other machines have their own, so against a Chroma server the lock must live
in the server. Creating a collection there is atomic (a second create of the
same name fails with "already exists"), which makes a small collection
`<index>-writer` a mutex. The holder records who it is and until when; it
renews that while it writes, so a holder killed mid-build (kill -9, a lost
machine) blocks the others for at most `TTL` seconds before its lease is
taken over. Three replicas started at once against an empty server: one
builds the index, the other two wait, then find nothing left to embed.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .errors import IndexBusyError

TTL = 30.0  # seconds a lease lasts unless renewed; a dead holder blocks the others this long at most
POLL = 0.5  # seconds between two attempts of a waiting writer
log = logging.getLogger(__name__)


def lease_name(index: str) -> str:
    """The lease collection of index `index` (beside its pointer `<index>-active`)."""
    return f"{index}-writer"


class Lease:
    """The writer lease of one index on a Chroma server (`client` is a chromadb client)."""

    def __init__(self, client: Any, name: str, *, ttl: float = TTL, clock: Callable[[], float] = time.time,
                 call: Callable[..., Any] | None = None) -> None:
        self.client = client
        # How a Chroma call is run: the index's own wrapper, so an unreachable server is a StoreUnavailableError.
        self.call: Callable[..., Any] = call or (lambda what, fn, *args, **kwargs: fn(*args, **kwargs))
        self.name = lease_name(name)
        self.ttl = ttl
        self.clock = clock

    @contextmanager
    def held(self, *, wait: bool, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the lease for the block: wait for another holder (or raise IndexBusyError when `wait` is off)."""
        token = uuid.uuid4().hex
        told = False
        while (holder := self._take(token)) is not None:
            if not wait:
                raise IndexBusyError(f"another ingest is writing this index ({holder}); wait for it or pass --wait")
            if not told and on_wait is not None:
                on_wait(holder)
                told = True
            time.sleep(POLL)
        stop = threading.Event()
        renewer = threading.Thread(target=self._renew, args=(token, stop), name="index-lease", daemon=True)
        renewer.start()
        try:
            yield
        finally:
            stop.set()
            renewer.join()
            self._release(token)

    def _metadata(self, token: str) -> dict[str, Any]:
        return {"token": token, "holder": f"{socket.gethostname()} pid {os.getpid()}", "expires": self.clock() + self.ttl}

    def _take(self, token: str) -> str | None:
        """None once this token holds the lease; else who holds it."""
        def create() -> bool:
            try:
                self.client.create_collection(self.name, metadata=self._metadata(token), embedding_function=None)
                return True
            except Exception as exc:
                if "already exists" not in str(exc).lower():
                    raise
                return False

        if self.call("take the writer lease", create):
            return None
        current = self._current()
        if current is None:
            return "a writer that just finished"  # released between our create and our read: try again
        if float(current.get("expires", 0)) < self.clock():
            log.warning("index lease of %s expired (holder gone): taking it over", current.get("holder"))
            self._drop(str(current.get("token", "")))
            return "an expired writer"
        return str(current.get("holder", "another writer"))

    def _current(self) -> dict[str, Any] | None:
        def lookup() -> dict[str, Any] | None:
            try:
                return dict(self.client.get_collection(self.name, embedding_function=None).metadata or {})
            except Exception as exc:
                if _missing(exc):
                    return None
                raise

        result: dict[str, Any] | None = self.call("read the writer lease", lookup)
        return result

    def _drop(self, token: str) -> None:
        """Delete the lease if `token` still holds it (a holder never deletes a lease taken over from it)."""
        current = self._current()
        if current is None or current.get("token") != token:
            return

        def delete() -> None:
            try:
                self.client.delete_collection(self.name)
            except Exception as exc:
                if not _missing(exc):
                    raise

        self.call("release the writer lease", delete)

    def _renew(self, token: str, stop: threading.Event) -> None:
        while not stop.wait(self.ttl / 4):
            try:
                collection = self.client.get_collection(self.name, embedding_function=None)
                if (collection.metadata or {}).get("token") != token:
                    log.error("the index lease was taken over while this writer held it (it stopped renewing for "
                              "over %.0f s); another writer may now be writing too", self.ttl)
                    return
                collection.modify(metadata=self._metadata(token))
            except Exception as exc:  # a blip: the next renewal tries again well before the lease runs out
                log.warning("could not renew the index lease: %s", exc)

    def _release(self, token: str) -> None:
        try:
            self._drop(token)
        except Exception as exc:  # the lease then expires by itself within TTL
            log.warning("could not release the index lease (it expires within %.0f s): %s", self.ttl, exc)


def _missing(exc: Exception) -> bool:
    """Chroma's way of saying a collection does not exist (its type differs between client and server)."""
    return type(exc).__name__ == "NotFoundError" or "does not exist" in str(exc).lower()
