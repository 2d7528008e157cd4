"""The PostgreSQL answer log's schema: numbered migrations, applied once, whichever replica starts first.

Each migration runs in a transaction of its own that first takes one advisory
lock (`pg_advisory_xact_lock`), then looks in `schema_migrations`: replicas
starting at the same moment queue on the lock, and the second finds the
version recorded by the first and skips it, so nothing is applied twice and no
`CREATE TABLE` races another. A migration that fails rolls back whole and is
tried again by the next start. Migrations are only ever appended.
"""

from __future__ import annotations

import psycopg

# An arbitrary constant: the advisory lock every replica of this app takes around a migration.
MIGRATION_LOCK = 0x616E_7377_6572_6C67  # "answerlg"
_TRACKING = ("CREATE TABLE IF NOT EXISTS schema_migrations ("
             " version INTEGER PRIMARY KEY, applied TIMESTAMPTZ NOT NULL DEFAULT now())")

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (1, (
        # The SQLite log's tables, typed for PostgreSQL: times are epoch seconds as there, vectors bytea.
        "CREATE TABLE answers (id TEXT PRIMARY KEY, created DOUBLE PRECISION NOT NULL, question TEXT NOT NULL,"
        " groups TEXT NOT NULL, state TEXT NOT NULL, degraded BOOLEAN NOT NULL, generator TEXT NOT NULL,"
        " record TEXT NOT NULL)",
        "CREATE INDEX answers_created ON answers (created DESC)",
        "CREATE TABLE turns (thread_id TEXT NOT NULL, position INTEGER NOT NULL, answer_id TEXT NOT NULL,"
        " asked TEXT NOT NULL, question TEXT NOT NULL, groups TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,"
        " owner TEXT, PRIMARY KEY (thread_id, position))",
        "CREATE INDEX turns_answer ON turns (answer_id)",
        # id orders an answer's ratings as SQLite's rowid does.
        "CREATE TABLE feedback (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, answer_id TEXT NOT NULL,"
        " rating TEXT NOT NULL, reason TEXT NOT NULL, groups TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX feedback_answer ON feedback (answer_id)",
        "CREATE TABLE question_vectors (answer_id TEXT NOT NULL, model TEXT NOT NULL, text_hash TEXT NOT NULL,"
        " vector BYTEA NOT NULL, PRIMARY KEY (answer_id, model))",
        "CREATE TABLE rate_limits (key TEXT PRIMARY KEY, tat DOUBLE PRECISION NOT NULL)",
        "CREATE TABLE secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL,"
        " created TIMESTAMPTZ NOT NULL DEFAULT now())",
    )),
)
LATEST = MIGRATIONS[-1][0]


def migrate(connection: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    """Apply the migrations this database lacks, each in its own locked transaction: the versions applied now."""
    applied: list[int] = []
    for version, statements in MIGRATIONS:
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            connection.execute(_TRACKING)
            if connection.execute("SELECT 1 FROM schema_migrations WHERE version = %s", (version,)).fetchone():
                continue
            for statement in statements:
                connection.execute(statement)
            connection.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
            applied.append(version)
    return applied
