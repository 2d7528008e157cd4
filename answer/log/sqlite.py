"""The audit trail: every answer, with everything needed to check it later, in SQLite.

Support staff open a past answer and see the question, the viewer's groups,
the whole retrieval set (ids, versions, hashes, text), the raw drafts, the
verified claims and why anything was dropped. Comparing the stored chunk
hashes with the live index tells them when a cited source changed since.
The same database holds the conversation threads (which answers, in which
order, what the visitor typed and what was searched) and visitors' feedback,
so a bad answer reaches staff together with everything needed to judge it.

A damaged file (`answer.log.damage`) is reported once, in the server log, and
from then on every call fails at once with AnswerLogDamagedError instead of
writing into it: visitors keep getting answers, and the health check and the
staff pages say what is wrong until the file is moved aside.

The log bounds itself (`retention`): old answers go, with their turns and feedback.

Given the content-gap report's question index (`index_gaps`), the log stores
the report's vector of a refused or unverified answer's question in the same
transaction as the answer, and that of a rated-down answer with its first
thumbs-down, so the report itself embeds nothing in the steady state.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..contract.record import REFUSED, UNVERIFIED, AnswerRecord, from_json
from ..contract.result import Answer
from ..errors import AnswerLogDamagedError, AnswerLogError
from . import queries
from .damage import is_damage, scan
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
from .ratelimit import SQLiteLimiter
from .retention import DEFAULT_RETENTION, PRUNE_EVERY, Retention
from .secret_file import FileSecrets
from .sqlite_schema import migrate

RECHECK_SECONDS = 30.0  # how often the health check scans the whole file (a 160 MB log takes ~0.2 s)
log = logging.getLogger(__name__)


class SQLiteAnswerLog:
    """Answers keyed by id in one file; writes are short transactions so a reader never sees half an answer."""

    def __init__(self, path: Path, *, timeout: float = 2.0, recheck: float = RECHECK_SECONDS,
                 retention: Retention = DEFAULT_RETENTION) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.recheck = recheck
        self.retention = retention
        self._lock = threading.Lock()
        self._state = threading.Lock()  # guards the damage flag (taken inside writes, which hold _lock)
        self._ready = False
        self._writes = 0  # answers written by this process; every PRUNE_EVERY-th write prunes (the first one too)
        self._damage: AnswerLogDamagedError | None = None  # sticky: a damaged file stays damaged until moved aside
        self._failing: AnswerLogError | None = None  # the last write's failure (a lock, a read-only disk), until one succeeds
        self._scanned = -RECHECK_SECONDS - 1.0
        self._gap_index: GapIndex | None = None

    def index_gaps(self, index: GapIndex | None) -> None:
        """Store the content-gap report's vector of each question it will group as the answer is written.

        The embedding model arrives after the log (the health check opens the log first), hence not a
        constructor argument; None stops it, and the report embeds what is missing itself.
        """
        self._gap_index = index

    @property
    def where(self) -> str:
        return str(self.path)

    @property
    def damaged(self) -> bool:
        return self._damage is not None

    def limiter(self) -> SQLiteLimiter:
        """Budgets in a table of this file, which every worker of this machine opens."""
        return SQLiteLimiter(self.path, timeout=self.timeout)

    def secrets(self) -> FileSecrets:
        """Secrets in files beside this one (DATA_DIR/thread_secret)."""
        return FileSecrets(self.path.parent)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection that commits on success and is always closed (sqlite3's own `with` only commits)."""
        if self._damage is not None:
            raise AnswerLogDamagedError(str(self._damage))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=self.timeout)
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                if not self._ready:
                    migrate(connection)
                    self._ready = True
                with connection:
                    yield connection
            finally:
                connection.close()
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise self._damaged(str(exc)) from exc
            raise

    @contextmanager
    def _write(self, failed: str) -> Iterator[sqlite3.Connection]:
        """A write transaction; a failure is an AnswerLogError saying `failed`, and stays the log's state until one succeeds."""
        try:
            with self._lock, self._connect() as connection:
                yield connection
        except (sqlite3.Error, OSError) as exc:  # locked, read-only or missing directory
            self._failing = AnswerLogError(f"{failed}: {exc}")
            raise self._failing from exc
        self._failing = None

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read; a failure other than damage (a lock, a missing directory) is an AnswerLogError naming the file."""
        try:
            with self._connect() as connection:
                yield connection
        except (sqlite3.Error, OSError) as exc:
            raise AnswerLogError(f"cannot read the answer log {self.path}: {exc}") from exc

    def _damaged(self, problem: str) -> AnswerLogDamagedError:
        """The log's damage as an error, reported in the server log the first time only (not once per request)."""
        error = AnswerLogDamagedError(
            f"the answer log {self.path} is damaged ({problem}); answers are still served but not recorded. "
            "Move the file aside (the web server does so itself when it starts) and a fresh log is started")
        with self._state:
            first, self._damage = self._damage is None, self._damage or error
        if first:
            log.error("%s", error)
        return self._damage

    def check(self) -> None:
        """Raise AnswerLogError when the log cannot take answers: what the health check reports.

        Damage found by any call is reported at once; the whole file is scanned
        at most every `recheck` seconds, since a damaged page can sit where no
        recent call has looked.
        """
        if self._damage is not None:
            raise AnswerLogDamagedError(str(self._damage))
        if self._failing is not None:
            raise AnswerLogError(str(self._failing))
        if not self.path.exists() or time.monotonic() - self._scanned < self.recheck:
            return
        try:
            problem = scan(self.path, self.timeout)
        except (sqlite3.Error, OSError) as exc:
            raise AnswerLogError(f"cannot read the answer log {self.path}: {exc}") from exc
        self._scanned = time.monotonic()
        if problem is not None:
            raise self._damaged(problem)

    def record(self, answer: Answer) -> None:
        data = answer.to_dict(include_chunks=True)
        # Embedded before the write lock is taken: other writers never wait on the model.
        vector = self._gap_vector(answer.id, answer.question) if answer.state in (REFUSED, UNVERIFIED) else None
        with self._write(f"cannot write answer {answer.id} to {self.path}") as connection:
            connection.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    answer.id,
                    answer.created,
                    answer.question,
                    ",".join(sorted(answer.retrieval.viewer.groups)),
                    answer.state,
                    int(answer.degraded),
                    answer.generator,
                    json.dumps(data, ensure_ascii=False),
                ),
            )
            if vector is not None:
                _keep_vector(connection, answer.id, vector)
            if self._writes % PRUNE_EVERY == 0:
                _prune(connection, self.retention, time.time())
            self._writes += 1

    def _gap_vector(self, answer_id: str, question: str) -> tuple[str, str, bytes] | None:
        return gap_vector(self._gap_index, answer_id, question)

    def _missing_gap_vector(self, answer_id: str) -> tuple[str, str, bytes] | None:
        """The report's vector of a stored answer's question when the log holds none of its current text."""
        index = self._gap_index
        if index is None or not self.path.exists():
            return None
        try:
            with self._read() as connection:
                row = connection.execute(
                    "SELECT a.question, v.text_hash FROM answers a LEFT JOIN question_vectors v"
                    " ON v.answer_id = a.id AND v.model = ? WHERE a.id = ?", (index.model, answer_id)).fetchone()
            if row is None or row[1] == index.digest(row[0]):
                return None
        except AnswerLogError:
            return None  # the feedback's own write reports what is wrong with the log
        except Exception:
            log.warning("question of answer %s not embedded for the content-gap report", answer_id, exc_info=True)
            return None
        return self._gap_vector(answer_id, row[0])

    def prune(self, now: float | None = None) -> int:
        """Apply the retention now (writes do it every PRUNE_EVERY answers): how many answers were removed."""
        with self._lock, self._connect() as connection:
            return _prune(connection, self.retention, time.time() if now is None else now)

    def get(self, answer_id: str) -> AnswerRecord | None:
        """The stored record of one answer (in whichever shape it was written), or None."""
        if not self.path.exists():
            return None
        with self._read() as connection:
            row = connection.execute("SELECT record FROM answers WHERE id = ?", (answer_id,)).fetchone()
        return from_json(json.loads(row[0])) if row else None

    def search(self, text: str = "", state: str = "", limit: int = 50, feedback: str = "",
               ids: Sequence[str] = ()) -> list[LogRow]:
        """Recent answers, newest first, filtered by question text, state, feedback ("up", "down", "any") and ids.

        Each row carries its thumbs-up and thumbs-down counts; with `feedback="down"` the list is the
        bad-answers queue, most recently answered first. `ids` (a content-gap group's answers) keeps those only.
        """
        if not self.path.exists():
            return []
        query, args = queries.search(queries.SQLITE, text=text, state=state, limit=limit, feedback=feedback, ids=ids)
        with self._read() as connection:
            return queries.log_rows(connection.execute(query, args).fetchall())

    # -- the content-gap report -------------------------------------------------------------------------

    def gap_rows(self, since: float) -> list[GapRow]:
        """Answers since `since` that were refused, unverified, only Related passages or rated down, newest first,
        with their feedback (`RELATED_RECORDS` matches the outcome as the record's JSON spells it)."""
        if not self.path.exists():
            return []
        with self._read() as connection:
            rows = connection.execute(
                "SELECT id, record FROM answers WHERE created >= ? AND (state IN ('refused', 'unverified')"
                " OR record LIKE ? OR EXISTS"
                " (SELECT 1 FROM feedback f WHERE f.answer_id = answers.id AND f.rating = 'down'))"
                " ORDER BY created DESC, id", (since, RELATED_RECORDS)).fetchall()
            down = connection.execute(
                "SELECT f.answer_id, f.reason FROM feedback f JOIN answers a ON a.id = f.answer_id"
                " WHERE f.rating = 'down' AND a.created >= ? ORDER BY f.rowid", (since,)).fetchall()
        return gap_rows_of(rows, down)

    def question_vectors(self, model: str, ids: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        """answer id → (hash of the text embedded, float32 vector bytes) cached for `model`, for those it holds."""
        if not ids or not self.path.exists():
            return {}
        found: dict[str, tuple[str, bytes]] = {}
        with self._read() as connection:
            for start in range(0, len(ids), 500):  # SQLite caps the number of parameters of one statement
                batch = list(ids[start:start + 500])
                found.update((i, (h, bytes(v))) for i, h, v in connection.execute(
                    f"SELECT answer_id, text_hash, vector FROM question_vectors WHERE model = ? AND answer_id IN"
                    f" ({', '.join('?' * len(batch))})", [model, *batch]))
        return found

    def keep_question_vectors(self, model: str, rows: Sequence[tuple[str, str, bytes]]) -> None:
        """Cache (answer id, text hash, vector bytes) for `model`, replacing what was kept for those answers."""
        if not rows:
            return
        with self._write(f"cannot cache question vectors in {self.path}") as connection:
            connection.executemany("INSERT OR REPLACE INTO question_vectors VALUES (?, ?, ?, ?)",
                                   [(i, model, h, v) for i, h, v in rows])

    # -- threads ---------------------------------------------------------------------------------------

    def add_turn(self, thread_id: str, answer_id: str, asked: str, question: str, groups: frozenset[str],
                 owner: str | None = None) -> None:
        """Append an answer to a thread (the position is the next free one, so concurrent turns never collide)."""
        with self._write(f"cannot add answer {answer_id} to thread {thread_id} in {self.path}") as connection:
            connection.execute(
                "INSERT INTO turns (thread_id, position, answer_id, asked, question, groups, created, owner)"
                " SELECT ?, COALESCE(MAX(position), 0) + 1, ?, ?, ?, ?, strftime('%s','now'), ?"
                " FROM turns WHERE thread_id = ?",
                (thread_id, answer_id, asked, question, ",".join(sorted(groups)), owner, thread_id))

    def thread(self, thread_id: str) -> list[TurnRow]:
        """The turns of a thread in order: answer id, what was typed, what was searched, the asker's groups and owner."""
        if not self.path.exists():
            return []
        with self._read() as connection:
            rows = connection.execute("SELECT answer_id, asked, question, groups, owner FROM turns WHERE thread_id = ?"
                                      " ORDER BY position", (thread_id,)).fetchall()
        return [TurnRow(a, q, s, frozenset(g.split(",")) if g else frozenset(), o) for a, q, s, g, o in rows]

    def asked(self, answer_id: str) -> str | None:
        if not self.path.exists():
            return None
        with self._read() as connection:
            row = connection.execute("SELECT asked FROM turns WHERE answer_id = ? LIMIT 1", (answer_id,)).fetchone()
        return row[0] if row else None

    # -- feedback --------------------------------------------------------------------------------------

    def add_feedback(self, answer_id: str, rating: str, reason: str, groups: frozenset[str]) -> bool:
        """Store a visitor's thumbs up or down (and optional reason) beside the answer it is about.

        False, and nothing stored, once the answer holds MAX_RATINGS_PER_ANSWER ratings.
        """
        check_rating(rating)
        # A thumbs-down puts an answered answer in the content-gap report: its vector comes with it.
        vector = self._missing_gap_vector(answer_id) if rating == "down" else None
        with self._write(f"cannot store feedback on answer {answer_id} in {self.path}") as connection:
            (held,) = connection.execute("SELECT COUNT(*) FROM feedback WHERE answer_id = ?", (answer_id,)).fetchone()
            if held >= MAX_RATINGS_PER_ANSWER:
                return False
            connection.execute("INSERT INTO feedback VALUES (?, ?, ?, ?, strftime('%s','now'))",
                               (answer_id, rating, reason[:MAX_REASON_CHARS], ",".join(sorted(groups))))
            if vector is not None:
                _keep_vector(connection, answer_id, vector)
            return True

    def feedback(self, answer_id: str) -> list[Rating]:
        """Every feedback entry on one answer, oldest first."""
        if not self.path.exists():
            return []
        with self._read() as connection:
            rows = connection.execute("SELECT rating, reason, groups, created FROM feedback WHERE answer_id = ?"
                                      " ORDER BY rowid", (answer_id,)).fetchall()
        return [Rating(r, why, g, float(c)) for r, why, g, c in rows]


def _keep_vector(connection: sqlite3.Connection, answer_id: str, vector: tuple[str, str, bytes]) -> None:
    model, digest, data = vector
    connection.execute("INSERT OR REPLACE INTO question_vectors VALUES (?, ?, ?, ?)", (answer_id, model, digest, data))


def _prune(connection: sqlite3.Connection, retention: Retention, now: float) -> int:
    """Answers past the retention, with their turns, feedback and vectors (queries.py), in the caller's
    transaction; how many."""
    delete = queries.past_retention(queries.SQLITE, retention, now)
    if delete is None:
        return 0
    gone = [(row[0],) for row in connection.execute(*delete)]
    for table in queries.DEPENDENT_TABLES:
        connection.executemany(f"DELETE FROM {table} WHERE answer_id = ?", gone)
    return len(gone)
