"""One writer: one ingest at a time, and one process that owns the index while a server runs.

`index_lock` serialises builds: a second run waits or exits with a clear
message, never interleaves writes. Against a Chroma server it also holds the
server's writer lease (`lease`), so writers on other machines (replicas
starting at once, a docs team's CI job) take turns as well. `owner_lock` is held by a running server
for its whole life: embedded Chroma cannot be shared between processes (a
second writer's new ids are invisible to the server's in-memory index, and
every answer then fails with "Error finding id"), so a CLI that finds the
owner lock taken hands its run to the server instead of writing itself.
Both are OS file locks, released when their process dies, even by kill -9.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from .errors import IndexBusyError
from .lease import Lease

__all__ = ["IndexBusyError", "index_lock", "owner_lock"]


@contextmanager
def index_lock(data_dir: Path, *, wait: bool = False, lease: Lease | None = None,
               on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold `DATA_DIR/ingest.lock`, and the server's writer lease when given one, for the duration of a build."""
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(data_dir / "ingest.lock"))
    try:
        lock.acquire(timeout=-1 if wait else 0)
    except Timeout as exc:
        raise IndexBusyError(
            f"another ingest is running (lock {data_dir / 'ingest.lock'}); wait for it or pass --wait"
        ) from exc
    try:
        with lease.held(wait=wait, on_wait=on_wait) if lease is not None else contextlib.nullcontext():
            yield
    finally:
        lock.release()


@contextmanager
def owner_lock(data_dir: Path, *, wait: bool = True, on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold `DATA_DIR/server.lock`; yields False (holding nothing) when `wait` is off and another process owns it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(data_dir / "server.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if not wait:
            yield False
            return
        if on_wait:
            on_wait()
        lock.acquire(timeout=-1)
    try:
        yield True
    finally:
        lock.release()
