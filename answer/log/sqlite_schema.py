"""The SQLite answer log's schema: numbered migrations, applied once, recorded in the file itself.

The same rule as the PostgreSQL log's (postgres_schema.py): a change to the
schema is a new numbered migration appended below, never an edit of one that
shipped. The file's `user_version` is the last migration applied; a worker
opening the file takes the write lock (`BEGIN IMMEDIATE`, so workers starting
together queue and the second finds the work done), applies what is missing
and records the new version in the same transaction, so a failed migration
leaves the file as it was.

Migration 1 is the schema as it stood when migrations were numbered; a log
written before then (version 0, tables present) is adopted by it: its tables
are kept, and the thread owners' column is added if the log predates it.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        "CREATE TABLE IF NOT EXISTS answers (id TEXT PRIMARY KEY, created REAL NOT NULL, question TEXT NOT NULL,"
        " groups TEXT NOT NULL, state TEXT NOT NULL, degraded INTEGER NOT NULL, generator TEXT NOT NULL,"
        " record TEXT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS answers_created ON answers (created DESC)",
        "CREATE TABLE IF NOT EXISTS turns (thread_id TEXT NOT NULL, position INTEGER NOT NULL,"
        " answer_id TEXT NOT NULL, asked TEXT NOT NULL, question TEXT NOT NULL, groups TEXT NOT NULL,"
        " created REAL NOT NULL, owner TEXT, PRIMARY KEY (thread_id, position))",
        "CREATE TABLE IF NOT EXISTS feedback (answer_id TEXT NOT NULL, rating TEXT NOT NULL, reason TEXT NOT NULL,"
        " groups TEXT NOT NULL, created REAL NOT NULL)",
        "CREATE INDEX IF NOT EXISTS feedback_answer ON feedback (answer_id)",
        "CREATE INDEX IF NOT EXISTS turns_answer ON turns (answer_id)",
        # The content-gap report's embedding of each question (float32, unit length), per embedding model and per
        # text embedded, so a report embeds only the answers written since the last one.
        "CREATE TABLE IF NOT EXISTS question_vectors (answer_id TEXT NOT NULL, model TEXT NOT NULL,"
        " text_hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (answer_id, model))",
        "CREATE TABLE IF NOT EXISTS rate_limits (key TEXT PRIMARY KEY, tat REAL NOT NULL)",
    )),
)
LATEST = MIGRATIONS[-1][0]


def version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def migrate(connection: sqlite3.Connection) -> list[int]:
    """Apply the migrations this file lacks in one write transaction: the versions applied now."""
    if version(connection) >= LATEST:
        return []
    connection.execute("BEGIN IMMEDIATE")
    try:
        current = version(connection)  # read again under the lock: another worker may have just done it
        applied = []
        for number, statements in MIGRATIONS:
            if number <= current:
                continue
            for statement in statements:
                connection.execute(statement)
            if number == 1:
                _adopt_owner_column(connection)
            applied.append(number)
        if applied:
            connection.execute(f"PRAGMA user_version = {LATEST:d}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:  # SQLite may have rolled back already (a full disk, an I/O error)
            connection.execute("ROLLBACK")
        raise
    return applied


def _adopt_owner_column(connection: sqlite3.Connection) -> None:
    """A log written before thread owners gets their column (empty: those threads are owned by nobody)."""
    if "owner" not in {row[1] for row in connection.execute("PRAGMA table_info(turns)")}:
        connection.execute("ALTER TABLE turns ADD COLUMN owner TEXT")
