"""The answer log's queries, written once for both logs: the staff's answer list and the retention's delete.

SQLite and PostgreSQL differ here only in how a query is spelled: the
parameter mark, the case-blind LIKE, a list parameter, and OFFSET without a
LIMIT. A `Dialect` names those; the filters, their order and the columns are
this module's alone, so a filter added for one log is in the other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .protocol import RATINGS, LogRow, like_pattern
from .retention import DAY, Retention

# What belongs to an answer and goes with it when the retention removes it.
DEPENDENT_TABLES = ("turns", "feedback", "question_vectors")


@dataclass(frozen=True)
class Dialect:
    mark: str  # a parameter
    like: str  # case-blind LIKE (SQLite's LIKE is, for ASCII)
    offset_all: str  # OFFSET with no limit
    among: Callable[[Sequence[str]], tuple[str, list[object]]]  # "<column> is one of these" and its parameters


SQLITE = Dialect("?", "LIKE", "LIMIT -1 OFFSET", lambda ids: (f"IN ({', '.join('?' * len(ids))})", list(ids)))
POSTGRES = Dialect("%s", "ILIKE", "OFFSET", lambda ids: ("= ANY(%s)", [list(ids)]))


def search(dialect: Dialect, *, text: str, state: str, limit: int, feedback: str,
           ids: Sequence[str]) -> tuple[str, list[object]]:
    """Recent answers, newest first, with their feedback counts, filtered (see `AnswerLog.search`)."""
    m = dialect.mark
    query = ("SELECT id, created, question, groups, state, degraded,"
             " (SELECT count(*) FROM feedback f WHERE f.answer_id = answers.id AND f.rating = 'up'),"
             " (SELECT count(*) FROM feedback f WHERE f.answer_id = answers.id AND f.rating = 'down')"
             " FROM answers WHERE 1 = 1")
    args: list[object] = []
    if feedback in RATINGS:
        query += f" AND EXISTS (SELECT 1 FROM feedback f WHERE f.answer_id = answers.id AND f.rating = {m})"
        args.append(feedback)
    elif feedback == "any":
        query += " AND EXISTS (SELECT 1 FROM feedback f WHERE f.answer_id = answers.id)"
    if text:
        query += f" AND question {dialect.like} {m} ESCAPE '\\'"
        args.append(like_pattern(text))
    if state:
        query += f" AND state = {m}"
        args.append(state)
    if ids:
        clause, values = dialect.among(ids)
        query += f" AND id {clause}"
        args.extend(values)
    query += f" ORDER BY created DESC LIMIT {m}"
    args.append(limit)
    return query, args


def log_rows(rows: Sequence[Sequence[Any]]) -> list[LogRow]:
    """`search`'s rows as the staff's list reads them."""
    return [LogRow(i, float(c), q, g, s, bool(d), int(up), int(down)) for i, c, q, g, s, d, up, down in rows]


def past_retention(dialect: Dialect, retention: Retention, now: float) -> tuple[str, list[object]] | None:
    """The DELETE of every answer past the retention, returning their ids; None when nothing is ever pruned."""
    m = dialect.mark
    conditions: list[str] = []
    args: list[object] = []
    if retention.days is not None:
        conditions.append(f"created < {m}")
        args.append(now - retention.days * DAY)
    if retention.answers is not None:
        conditions.append(f"id IN (SELECT id FROM answers ORDER BY created DESC {dialect.offset_all} {m})")
        args.append(retention.answers)
    if not conditions:
        return None
    return f"DELETE FROM answers WHERE {' OR '.join(conditions)} RETURNING id", args
