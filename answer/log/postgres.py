"""The answer log in PostgreSQL (DATABASE_URL): what several replicas on several machines share.

The same records, threads, feedback, content-gap vectors, rate-limit budgets
and thread secret as the SQLite log (`audit`), with the same rules: every
write is one short transaction on a pooled connection, an answer's retention
pruning takes its turns, feedback and vector along in the same transaction,
and an answer holds at most MAX_RATINGS_PER_ANSWER ratings. What SQLite got
from having one writer at a time is asked for explicitly here: a thread's next
position and an answer's rating count are taken under an advisory lock on
that thread or answer, so two replicas never collide on either.

The schema is migrated on first use (`postgres_schema`), so a replica's first
request, or its first /readyz, brings an empty database up to date. A
database that cannot be reached is an AuditUnreachableError naming
DATABASE_URL: answers are still served, and /readyz says what to fix.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from ..contract.record import REFUSED, UNVERIFIED, AnswerRecord, from_json
from ..contract.result import Answer
from ..errors import AnswerLogError, AuditUnreachableError, SecretError
from . import queries
from .postgres_schema import migrate
from .protocol import (
    MAX_RATINGS_PER_ANSWER,
    MAX_REASON_CHARS,
    RELATED_RECORDS,
    GapIndex,
    GapRow,
    LogRow,
    Rating,
    TurnRow,
    check_rating,
    gap_rows_of,
    gap_vector,
)
from .ratelimit import PostgresLimiter
from .retention import DEFAULT_RETENTION, PRUNE_EVERY, Retention

log = logging.getLogger(__name__)
Connection = psycopg.Connection[tuple[Any, ...]]
TURN_LOCKS = 0x7475  # advisory-lock namespaces ("tu", "fb"): one lock per thread, one per rated answer
FEEDBACK_LOCKS = 0x6662


def shown_url(url: str) -> str:
    """A database URL fit for a message or a log line: the password replaced by ***."""
    return re.sub(r"^([a-z][a-z0-9+.-]*://[^:/@]*):[^@/]*@", r"\1:***@", url, flags=re.IGNORECASE)


class PostgresAnswerLog:
    """Answers keyed by id in a PostgreSQL database; connections come from a small pool opened on first use."""

    def __init__(self, url: str, *, retention: Retention = DEFAULT_RETENTION, timeout: float = 5.0,
                 max_connections: int = 8) -> None:
        self.url = url
        self.timeout = timeout  # how long a call waits for a connection before the log counts as unreachable
        self.retention = retention
        self.max_connections = max_connections
        self._pool: ConnectionPool[Connection] | None = None
        self._opening = threading.Lock()
        self._migrated = False
        self._writes = 0  # answers written by this process; every PRUNE_EVERY-th write prunes (the first one too)
        self._counting = threading.Lock()
        self._gap_index: GapIndex | None = None

    @property
    def where(self) -> str:
        return f"the database DATABASE_URL={shown_url(self.url)}"

    @property
    def damaged(self) -> bool:
        return False  # the server keeps its own files whole; what fails is reaching it, reported per call

    def index_gaps(self, index: GapIndex | None) -> None:
        """Store the content-gap report's vector of each question it will group as the answer is written."""
        self._gap_index = index

    def limiter(self) -> PostgresLimiter:
        return PostgresLimiter(self)

    def secrets(self) -> PostgresSecrets:
        return PostgresSecrets(self)

    def close(self) -> None:
        """Close the pool's connections (a stopping process, or a test dropping its database)."""
        with self._opening:
            pool, self._pool, self._migrated = self._pool, None, False
        if pool is not None:
            pool.close()

    # -- connections ------------------------------------------------------------------------------------

    def _connections(self) -> ConnectionPool[Connection]:
        with self._opening:
            if self._pool is None:
                # Connections are made in the pool's own threads; a call waits at most `timeout` for one.
                self._pool = ConnectionPool(self.url, min_size=1, max_size=self.max_connections, open=True,
                                            timeout=self.timeout, name="answer-log",
                                            kwargs={"connect_timeout": max(1, round(self.timeout))})
            if not self._migrated:
                with self._pool.connection() as connection:
                    applied = migrate(connection)
                if applied:
                    log.info("answer log %s: applied schema migrations %s", self.where, applied)
                self._migrated = True
            return self._pool

    @contextmanager
    def connection(self, failed: str) -> Iterator[Connection]:
        """A pooled connection whose block is one transaction (committed on success); failures name the fix."""
        try:
            with self._connections().connection() as connection:
                yield connection
        except (PoolTimeout, psycopg.OperationalError) as exc:
            raise AuditUnreachableError(f"{failed}: cannot reach {self.where} within {self.timeout:g} s ({exc}); "
                                        "check that the server is running and DATABASE_URL is right") from exc
        except psycopg.Error as exc:
            raise AnswerLogError(f"{failed}: {exc}") from exc

    def check(self) -> None:
        """Raise AnswerLogError when the database cannot take answers: reachable, migrated, answering a query."""
        with self.connection("the answer log cannot be used") as connection:
            connection.execute("SELECT count(*) FROM schema_migrations").fetchone()

    # -- answers ----------------------------------------------------------------------------------------

    def record(self, answer: Answer) -> None:
        data = answer.to_dict(include_chunks=True)
        # Embedded before a connection is taken: other writers never wait on the model.
        vector = gap_vector(self._gap_index, answer.id, answer.question) if answer.state in (REFUSED, UNVERIFIED) else None
        with self._counting:
            prune_now, self._writes = self._writes % PRUNE_EVERY == 0, self._writes + 1
        with self.connection(f"cannot write answer {answer.id}") as connection:
            connection.execute(
                "INSERT INTO answers (id, created, question, groups, state, degraded, generator, record)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET created = EXCLUDED.created,"
                " question = EXCLUDED.question, groups = EXCLUDED.groups, state = EXCLUDED.state,"
                " degraded = EXCLUDED.degraded, generator = EXCLUDED.generator, record = EXCLUDED.record",
                (answer.id, answer.created, answer.question, ",".join(sorted(answer.retrieval.viewer.groups)),
                 answer.state, answer.degraded, answer.generator, json.dumps(data, ensure_ascii=False)))
            if vector is not None:
                _keep_vectors(connection, vector[0], [(answer.id, vector[1], vector[2])])
            if prune_now:
                _prune(connection, self.retention, time.time())

    def prune(self, now: float | None = None) -> int:
        """Apply the retention now (writes do it every PRUNE_EVERY answers): how many answers were removed."""
        with self.connection("cannot prune the answer log") as connection:
            return _prune(connection, self.retention, time.time() if now is None else now)

    def get(self, answer_id: str) -> AnswerRecord | None:
        if names_nothing(answer_id):
            return None
        with self.connection(f"cannot read answer {answer_id!r}") as connection:
            row = connection.execute("SELECT record FROM answers WHERE id = %s", (answer_id,)).fetchone()
        return from_json(json.loads(row[0])) if row else None

    def search(self, text: str = "", state: str = "", limit: int = 50, feedback: str = "",
               ids: Sequence[str] = ()) -> list[LogRow]:
        """Recent answers, newest first, filtered as `SQLiteAnswerLog.search` filters them (text case-blind, as there)."""
        if names_nothing(text) or (ids and all(names_nothing(i) for i in ids)):
            return []  # no question and no id holds a NUL
        query, args = queries.search(queries.POSTGRES, text=text, state=state, limit=limit, feedback=feedback,
                                     ids=[i for i in ids if not names_nothing(i)])
        with self.connection("cannot search the answer log") as connection:
            return queries.log_rows(connection.execute(query.encode(), args).fetchall())

    # -- the content-gap report -------------------------------------------------------------------------

    def gap_rows(self, since: float) -> list[GapRow]:
        """Answers since `since` that were refused, unverified, only Related passages or rated down, newest first,
        with their feedback (`RELATED_RECORDS` matches the outcome as the record's JSON spells it)."""
        with self.connection("cannot read the content gaps") as connection:
            rows = connection.execute(
                "SELECT id, record FROM answers WHERE created >= %s AND (state IN ('refused', 'unverified')"
                " OR record LIKE %s OR EXISTS"
                " (SELECT 1 FROM feedback f WHERE f.answer_id = answers.id AND f.rating = 'down'))"
                " ORDER BY created DESC, id", (since, RELATED_RECORDS)).fetchall()
            down = connection.execute(
                "SELECT f.answer_id, f.reason FROM feedback f JOIN answers a ON a.id = f.answer_id"
                " WHERE f.rating = 'down' AND a.created >= %s ORDER BY f.id", (since,)).fetchall()
        return gap_rows_of(rows, down)

    def question_vectors(self, model: str, ids: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        if not ids:
            return {}
        with self.connection("cannot read question vectors") as connection:
            rows = connection.execute("SELECT answer_id, text_hash, vector FROM question_vectors"
                                      " WHERE model = %s AND answer_id = ANY(%s)", (model, list(ids))).fetchall()
        return {i: (h, bytes(v)) for i, h, v in rows}

    def keep_question_vectors(self, model: str, rows: Sequence[tuple[str, str, bytes]]) -> None:
        if not rows:
            return
        with self.connection("cannot cache question vectors") as connection:
            _keep_vectors(connection, model, rows)

    def _missing_gap_vector(self, answer_id: str) -> tuple[str, str, bytes] | None:
        """The report's vector of a stored answer's question when the log holds none of its current text."""
        index = self._gap_index
        if index is None:
            return None
        try:
            with self.connection(f"cannot read answer {answer_id}") as connection:
                row = connection.execute(
                    "SELECT a.question, v.text_hash FROM answers a LEFT JOIN question_vectors v"
                    " ON v.answer_id = a.id AND v.model = %s WHERE a.id = %s", (index.model, answer_id)).fetchone()
            if row is None or row[1] == index.digest(row[0]):
                return None
        except AnswerLogError:
            return None  # the feedback's own write reports what is wrong with the log
        except Exception:
            log.warning("question of answer %s not embedded for the content-gap report", answer_id, exc_info=True)
            return None
        return gap_vector(index, answer_id, row[0])

    # -- threads ---------------------------------------------------------------------------------------

    def add_turn(self, thread_id: str, answer_id: str, asked: str, question: str, groups: frozenset[str],
                 owner: str | None = None) -> None:
        """Append an answer to a thread at its next free position (taken under the thread's lock: replicas never collide)."""
        with self.connection(f"cannot add answer {answer_id} to thread {thread_id}") as connection:
            connection.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (TURN_LOCKS, thread_id))
            connection.execute(
                "INSERT INTO turns (thread_id, position, answer_id, asked, question, groups, created, owner)"
                " SELECT %s, COALESCE(MAX(position), 0) + 1, %s, %s, %s, %s, extract(epoch FROM now()), %s"
                " FROM turns WHERE thread_id = %s",
                (thread_id, answer_id, asked, question, ",".join(sorted(groups)), owner, thread_id))

    def thread(self, thread_id: str) -> list[TurnRow]:
        if names_nothing(thread_id):
            return []
        with self.connection(f"cannot read thread {thread_id!r}") as connection:
            rows = connection.execute("SELECT answer_id, asked, question, groups, owner FROM turns"
                                      " WHERE thread_id = %s ORDER BY position", (thread_id,)).fetchall()
        return [TurnRow(a, q, s, frozenset(g.split(",")) if g else frozenset(), o) for a, q, s, g, o in rows]

    def asked(self, answer_id: str) -> str | None:
        if names_nothing(answer_id):
            return None
        with self.connection(f"cannot read the turn of answer {answer_id!r}") as connection:
            row = connection.execute("SELECT asked FROM turns WHERE answer_id = %s LIMIT 1", (answer_id,)).fetchone()
        return row[0] if row else None

    # -- feedback --------------------------------------------------------------------------------------

    def add_feedback(self, answer_id: str, rating: str, reason: str, groups: frozenset[str]) -> bool:
        """Store a visitor's thumbs up or down; False, and nothing stored, once the answer holds its cap of ratings."""
        check_rating(rating)
        vector = self._missing_gap_vector(answer_id) if rating == "down" else None
        with self.connection(f"cannot store feedback on answer {answer_id}") as connection:
            connection.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (FEEDBACK_LOCKS, answer_id))
            row = connection.execute("SELECT count(*) FROM feedback WHERE answer_id = %s", (answer_id,)).fetchone()
            if row is not None and row[0] >= MAX_RATINGS_PER_ANSWER:
                return False
            connection.execute("INSERT INTO feedback (answer_id, rating, reason, groups, created)"
                               " VALUES (%s, %s, %s, %s, extract(epoch FROM now()))",
                               (answer_id, rating, reason[:MAX_REASON_CHARS], ",".join(sorted(groups))))
            if vector is not None:
                _keep_vectors(connection, vector[0], [(answer_id, vector[1], vector[2])])
            return True

    def feedback(self, answer_id: str) -> list[Rating]:
        if names_nothing(answer_id):
            return []
        with self.connection(f"cannot read feedback on answer {answer_id!r}") as connection:
            rows = connection.execute("SELECT rating, reason, groups, created FROM feedback WHERE answer_id = %s"
                                      " ORDER BY id", (answer_id,)).fetchall()
        return [Rating(r, why, g, float(c)) for r, why, g, c in rows]


def names_nothing(key: str) -> bool:
    """True for an id no row can have: PostgreSQL text holds no NUL, and sent one it fails the whole statement.

    SQLite compares such an id and finds nothing; here the lookup must find nothing too, not break the
    connection and answer a visitor's mistyped link with "the answer log cannot be read".
    """
    return "\x00" in key


def _keep_vectors(connection: Connection, model: str, rows: Sequence[tuple[str, str, bytes]]) -> None:
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO question_vectors (answer_id, model, text_hash, vector) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (answer_id, model) DO UPDATE SET text_hash = EXCLUDED.text_hash, vector = EXCLUDED.vector",
            [(i, model, h, v) for i, h, v in rows])


def _prune(connection: Connection, retention: Retention, now: float) -> int:
    """Answers past the retention, with their turns, feedback and vectors (queries.py); how many."""
    delete = queries.past_retention(queries.POSTGRES, retention, now)
    if delete is None:
        return 0
    gone = [row[0] for row in connection.execute(delete[0].encode(), delete[1]).fetchall()]
    if gone:
        for table in queries.DEPENDENT_TABLES:
            connection.execute(f"DELETE FROM {table} WHERE answer_id = ANY(%s)".encode(), (gone,))
    return len(gone)


class PostgresSecrets:
    """Secrets in the shared database's `secrets` table: the first replica's INSERT wins, every replica reads it."""

    def __init__(self, answer_log: PostgresAnswerLog) -> None:
        self._log = answer_log

    def location(self, name: str) -> str:
        return f"the secrets table ({name!r}) of {self._log.where}"

    def secret(self, name: str) -> str:
        try:
            with self._log.connection(f"cannot read or create the secret {name!r}") as connection:
                connection.execute("INSERT INTO secrets (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                                   (name, secrets.token_hex(32)))
                row = connection.execute("SELECT value FROM secrets WHERE name = %s", (name,)).fetchone()
        except AnswerLogError as exc:
            raise SecretError(str(exc)) from exc
        assert row is not None  # inserted above, or by whoever won; rows are never deleted
        return str(row[0])
