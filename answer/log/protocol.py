"""The answer log as callers see it: one Protocol, whichever database holds it.

One process keeps its log in SQLite under DATA_DIR (`sqlite.SQLiteAnswerLog`);
several replicas on several machines share one PostgreSQL database
(`postgres.PostgresAnswerLog`, DATABASE_URL). Callers name `AnswerLog`
and never the implementation: what only one of them can do (a SQLite file's
damage, moved aside when the server starts) stays inside it, and what a
caller used to build beside the log from its file (the rate-limit budgets, the
thread secret) the log hands out itself, kept in the same database.

The rows it returns and the limits it applies are the same for both, so they live here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..contract.record import AnswerRecord, State, from_json
from ..contract.result import Answer
from .ratelimit import Limiter

RATINGS = ("up", "down")
MAX_REASON_CHARS = 500
# Ratings kept per answer. Visitors are anonymous, so a script could otherwise grow the log without
# bound through one answer id; real feedback on one answer never comes close.
MAX_RATINGS_PER_ANSWER = 50
# The stored records (`record.to_json`, written with json.dumps' default separators) of answers that showed only
# Related passages: the content-gap report takes them with the refusals, in both databases alike.
RELATED_RECORDS = '%"outcome": "related"%'
log = logging.getLogger(__name__)


class GapIndex(Protocol):
    """How the content-gap report embeds a question (`answer.reports.gap_index.QuestionIndex`), for the log to store it."""

    @property
    def model(self) -> str: ...

    def digest(self, question: str) -> str: ...

    def vector(self, question: str) -> tuple[str, bytes]: ...


@dataclass(frozen=True)
class LogRow:
    """One answer in the staff's list: enough to pick it, with its feedback counts."""

    id: str
    created: float
    question: str
    groups: str  # the asker's groups, comma-separated
    state: State
    degraded: bool
    up: int
    down: int


@dataclass(frozen=True)
class GapRow:
    """An answer the content-gap report considers: the stored record, its thumbs-down count and their reasons."""

    record: AnswerRecord
    down: int
    reasons: tuple[str, ...]  # visitors' own words, as typed: redact before showing them to anyone else


@dataclass(frozen=True)
class TurnRow:
    """One turn of a stored thread: which answer, what was typed, what was searched, the asker's groups and owner."""

    answer_id: str
    asked: str
    question: str
    groups: frozenset[str]
    owner: str | None = None  # the hash of the asking browser's owner token; None in a log from before owners


@dataclass(frozen=True)
class Rating:
    """A visitor's thumbs up or down on an answer."""

    rating: str
    reason: str
    groups: str
    created: float


class SecretStore(Protocol):
    """Secrets every process sharing the log must agree on (the thread-signing one), created once by the first."""

    def secret(self, name: str) -> str:
        """The secret called `name`, made now (random) if nobody has; raises SecretError when it cannot be read or made."""
        ...

    def location(self, name: str) -> str:
        """Where the secret is kept, for an error message that names what to fix."""
        ...


@runtime_checkable
class AnswerLog(Protocol):
    """Answers, threads, feedback and the content-gap report's vectors; writes are short transactions."""

    @property
    def where(self) -> str:
        """The file or the database (password left out), for messages that say which log."""
        ...

    @property
    def damaged(self) -> bool:
        """True once the log's storage is known to be damaged: threads then carry on in memory."""
        ...

    def index_gaps(self, index: GapIndex | None) -> None: ...

    def check(self) -> None:
        """Raise AnswerLogError when the log cannot take answers: what /readyz reports."""
        ...

    def record(self, answer: Answer) -> None: ...

    def prune(self, now: float | None = None) -> int: ...

    def get(self, answer_id: str) -> AnswerRecord | None: ...

    def search(self, text: str = "", state: str = "", limit: int = 50, feedback: str = "",
               ids: Sequence[str] = ()) -> list[LogRow]: ...

    def gap_rows(self, since: float) -> list[GapRow]: ...

    def question_vectors(self, model: str, ids: Sequence[str]) -> dict[str, tuple[str, bytes]]: ...

    def keep_question_vectors(self, model: str, rows: Sequence[tuple[str, str, bytes]]) -> None: ...

    def add_turn(self, thread_id: str, answer_id: str, asked: str, question: str, groups: frozenset[str],
                 owner: str | None = None) -> None: ...

    def thread(self, thread_id: str) -> list[TurnRow]: ...

    def asked(self, answer_id: str) -> str | None:
        """What the visitor typed for this answer, when it was a turn of a thread (None otherwise): the record
        holds the question as searched, which for a follow-up is the rewrite."""
        ...

    def add_feedback(self, answer_id: str, rating: str, reason: str, groups: frozenset[str]) -> bool: ...

    def feedback(self, answer_id: str) -> list[Rating]: ...

    def limiter(self) -> Limiter:
        """Per-client request budgets kept where this log is, so every process sharing it shares them."""
        ...

    def secrets(self) -> SecretStore:
        """Secrets kept where this log is, so every process sharing it signs alike."""
        ...


def gap_vector(index: GapIndex | None, answer_id: str, question: str) -> tuple[str, str, bytes] | None:
    """(model, text hash, vector) of a question for the content-gap report, or None without an index.

    A model that fails here costs the report one embedding later, never the answer or the feedback.
    """
    if index is None:
        return None
    try:
        return (index.model, *index.vector(question))
    except Exception:
        log.warning("question of answer %s not embedded for the content-gap report", answer_id, exc_info=True)
        return None


def gap_rows_of(answers: Sequence[tuple[str, str]], reasons: Sequence[tuple[str, str]]) -> list[GapRow]:
    """The gap report's rows from (answer id, stored record JSON) and each thumbs-down's (answer id, reason)."""
    given: dict[str, list[str]] = {}
    for answer_id, reason in reasons:
        given.setdefault(answer_id, []).append(reason)
    return [GapRow(from_json(json.loads(record)), len(given.get(i, ())), tuple(r for r in given.get(i, ()) if r))
            for i, record in answers]


def check_rating(rating: str) -> None:
    if rating not in RATINGS:
        raise ValueError(f"rating must be one of {RATINGS}, got {rating!r}")


def like_pattern(text: str) -> str:
    """`text` anywhere in a question, for LIKE … ESCAPE '\\': its own %, _ and \\ match literally."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
