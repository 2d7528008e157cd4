"""A damaged answer log told apart from a busy or unwritable one, and moved aside when the server starts.

SQLite reports a damaged file as SQLITE_NOTADB (the header is not SQLite's)
or SQLITE_CORRUPT (a malformed page): neither goes away by retrying, unlike
a lock. A write may still succeed into a file whose other pages are damaged,
so only a scan (`PRAGMA quick_check`) says the whole file is sound.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from retrieval.quarantine import set_aside

SQLITE_FILES = ("-wal", "-shm")  # what SQLite keeps beside the file: moved with it, so its last writes stay readable


def is_damage(exc: BaseException) -> bool:
    """True when SQLite says the file itself is damaged (not locked, missing or read-only)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return isinstance(exc, sqlite3.DatabaseError) and name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


def scan(path: Path, timeout: float = 2.0) -> str | None:
    """What `PRAGMA quick_check` finds wrong with the file at `path`, or None when it is sound (or absent)."""
    if not path.exists():
        return None
    # Read-only: SQLite opening a file with a damaged header read-write deletes its -wal, the last writes with it.
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout)
    try:
        found = [str(row[0]) for row in connection.execute("PRAGMA quick_check(3)").fetchall()]
    except sqlite3.DatabaseError as exc:
        if is_damage(exc):
            return str(exc)
        raise
    finally:
        connection.close()
    return None if found == ["ok"] else "; ".join(found)


def set_aside_if_damaged(path: Path) -> tuple[Path, str] | None:
    """Move a damaged log (with its -wal and -shm) to `<name>.damaged-<time>`: where it went and what was wrong."""
    problem = scan(path)
    if problem is None:
        return None
    return set_aside(path, companions=SQLITE_FILES), problem
