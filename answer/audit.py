"""The audit trail: every answer, with everything needed to check it later, in SQLite.

Support staff open a past answer and see the question, the viewer's groups,
the whole retrieval set (ids, versions, hashes, text), the raw drafts, the
verified claims and why anything was dropped. Comparing the stored chunk
hashes with the live index tells them when a cited source changed since.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import AuditError
from .pipeline import Answer

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    question TEXT NOT NULL,
    groups TEXT NOT NULL,
    state TEXT NOT NULL,
    degraded INTEGER NOT NULL,
    generator TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_created ON answers (created DESC);
"""


class SQLiteAuditLog:
    """Answers keyed by id; writes are short transactions so a reader never sees half an answer."""

    def __init__(self, path: Path, *, timeout: float = 2.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._ready = False

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection that commits on success and is always closed (sqlite3's own `with` only commits)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=self.timeout)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            if not self._ready:
                connection.executescript(_SCHEMA)
                self._ready = True
            with connection:
                yield connection
        finally:
            connection.close()

    def record(self, answer: Answer) -> None:
        data = answer.to_dict(include_chunks=True)
        try:
            with self._lock, self._connect() as connection:
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
        except (sqlite3.Error, OSError) as exc:  # locked, read-only or missing directory
            raise AuditError(f"cannot write answer {answer.id} to {self.path}: {exc}") from exc

    def get(self, answer_id: str) -> dict[str, Any] | None:
        """The stored record of one answer, or None."""
        if not self.path.exists():
            return None
        with self._connect() as connection:
            row = connection.execute("SELECT record FROM answers WHERE id = ?", (answer_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def search(self, text: str = "", state: str = "", limit: int = 50) -> list[dict[str, Any]]:
        """Recent answers, newest first, filtered by question text and state."""
        if not self.path.exists():
            return []
        query = "SELECT id, created, question, groups, state, degraded FROM answers WHERE 1=1"
        args: list[Any] = []
        if text:
            query += " AND question LIKE ? ESCAPE '\\'"
            args.append("%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if state:
            query += " AND state = ?"
            args.append(state)
        query += " ORDER BY created DESC LIMIT ?"
        args.append(limit)
        with self._connect() as connection:
            rows = connection.execute(query, args).fetchall()
        keys = ("id", "created", "question", "groups", "state", "degraded")
        return [dict(zip(keys, row)) for row in rows]
