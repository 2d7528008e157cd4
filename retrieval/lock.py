"""One ingest at a time: a second run waits or exits with a clear message, never interleaves writes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from .errors import IndexBusyError

__all__ = ["IndexBusyError", "index_lock"]


@contextmanager
def index_lock(data_dir: Path, *, wait: bool = False) -> Iterator[None]:
    """Hold `DATA_DIR/ingest.lock` for the duration of a build."""
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(data_dir / "ingest.lock"))
    try:
        lock.acquire(timeout=-1 if wait else 0)
    except Timeout as exc:
        raise IndexBusyError(
            f"another ingest is running (lock {data_dir / 'ingest.lock'}); wait for it or pass --wait"
        ) from exc
    try:
        yield
    finally:
        lock.release()
