"""Looking inside an answer log's own tables, whichever database holds it: for tests that check what is stored.

Only tests read the tables directly; the app goes through the `AnswerLog` methods.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from answer.log.protocol import AnswerLog


def raw(answer_log: AnswerLog, query: str) -> list[tuple[Any, ...]]:
    """The rows `query` (SQL both SQLite and PostgreSQL read alike) returns from the log's database."""
    from answer.log.sqlite import SQLiteAnswerLog

    if isinstance(answer_log, SQLiteAnswerLog):
        with sqlite3.connect(answer_log.path) as db:
            return [tuple(row) for row in db.execute(query).fetchall()]
    import psycopg

    with psycopg.connect(answer_log.url) as connection:  # type: ignore[attr-defined]
        return [tuple(row) for row in connection.execute(query.encode()).fetchall()]
