"""Per-client request budgets that hold across worker processes: kept in the answer log's database.

A budget is a rate (`30/minute`) with a burst of the same size, counted with
the generic cell rate algorithm: one row per client holding the time its
budget is next fully spent ("theoretical arrival time"), moved forward by
one interval per request in a single UPSERT, so two workers taking from one
client's budget at once never both get the last request. Rows of clients
whose budget has refilled are deleted now and then. This module holds the
SQLite table every worker of one machine shares (`SQLiteLimiter`) and the
PostgreSQL one several replicas share (`PostgresLimiter`): one algorithm, each
database's spelling of its single statement.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import AnswerLogError
from .sqlite_schema import migrate

if TYPE_CHECKING:
    from .postgres import PostgresAnswerLog

log = logging.getLogger(__name__)
PERIODS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86_400.0}
EPSILON = 1e-6  # seconds: float rounding must not refuse the last request of a burst
CLEAN_EVERY = 1000  # takes between two deletions of refilled budgets
_RATE = re.compile(r"^(\d+)\s*/\s*(second|minute|hour|day)s?$")


@dataclass(frozen=True)
class Rate:
    """`limit` requests per `period` seconds, `limit` of them at once at most."""

    limit: int
    period: float

    @property
    def interval(self) -> float:
        return self.period / self.limit

    def __str__(self) -> str:
        unit = next((name for name, seconds in PERIODS.items() if seconds == self.period), None)
        return f"{self.limit}/{unit}" if unit else f"{self.limit}/{self.period:g}s"


def parse_rate(text: str) -> Rate | None:
    """`30/minute` (per second, minute, hour or day) or `off` (None: no limit)."""
    value = text.strip().lower()
    if value in ("off", "none", "0"):
        return None
    match = _RATE.match(value)
    if match is None or int(match.group(1)) == 0:
        raise ValueError(f"RATE_LIMIT must be requests per second, minute, hour or day like '30/minute', or 'off'; "
                         f"got {text!r}")
    return Rate(int(match.group(1)), PERIODS[match.group(2)])


class Limiter(Protocol):
    """Takes one request from a client's budget."""

    def take(self, key: str, rate: Rate, now: float, *, consume: bool = True) -> float:
        """0 when the request may go ahead (counted unless `consume` is False), else the seconds until it may."""
        ...


def wait_for(tat: float, rate: Rate, now: float) -> float:
    """Seconds until a budget whose arrival time is `tat` has room for one more request (0: it has now)."""
    wait = tat - (rate.period - rate.interval) - now
    return wait if wait > EPSILON else 0.0


class SQLiteLimiter:
    """Budgets in a SQLite table every worker sharing the database reads (WAL, busy timeout)."""

    def __init__(self, path: Path, *, timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.timeout = timeout  # a budget is one short write: waiting on a busy machine beats counting nothing
        self._takes = 0
        self._ready = False
        self._setup = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        if not self._ready:  # WAL is a property of the file: set once, not on every request's connection
            with self._setup:
                if not self._ready:
                    try:
                        self._prepare(connection)
                    except sqlite3.Error:
                        connection.close()
                        raise
                    self._ready = True
        return connection

    def _prepare(self, connection: sqlite3.Connection) -> None:
        """WAL and the table. Switching the journal mode does not wait out the busy timeout: a worker starting
        beside another would get "database is locked" at once and let its first requests through uncounted,
        so it retries until the timeout instead."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                migrate(connection)  # the log's own schema (sqlite_schema.py), its rate_limits table included
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def take(self, key: str, rate: Rate, now: float, *, consume: bool = True) -> float:
        try:
            connection = self._connect()
        except (sqlite3.Error, OSError) as exc:  # the answer log's own write reports the outage; do not add a 500
            log.error("rate limit not checked, %s cannot be opened: %s", self.path, exc)
            return 0.0
        try:
            self._takes += consume
            return _take(connection, _SQLITE, key, rate, now, consume=consume, clean=self._takes % CLEAN_EVERY == 0)
        except sqlite3.Error as exc:
            log.error("rate limit not checked for %s in %s: %s", key, self.path, exc)
            return 0.0
        finally:
            connection.close()


class MemoryLimiter:
    """The same budgets in this process's memory, for a server without an answer log (one process only)."""

    def __init__(self) -> None:
        self._tats: dict[str, float] = {}
        self._lock = threading.Lock()

    def take(self, key: str, rate: Rate, now: float, *, consume: bool = True) -> float:
        with self._lock:
            tat = max(self._tats.get(key, now), now)
            wait = wait_for(tat, rate, now)
            if wait == 0.0 and consume:
                if len(self._tats) > 100_000:
                    self._tats = {k: t for k, t in self._tats.items() if t >= now}
                self._tats[key] = tat + rate.interval
            return wait


class PostgresLimiter:
    """Per-client budgets in the shared database: the same cell-rate algorithm as `SQLiteLimiter`, one UPSERT a take."""

    def __init__(self, answer_log: PostgresAnswerLog) -> None:
        self._log = answer_log
        self._takes = 0

    def take(self, key: str, rate: Rate, now: float, *, consume: bool = True) -> float:
        try:
            with self._log.connection(f"cannot check the rate limit of {key}") as connection:
                self._takes += consume
                return _take(connection, _POSTGRES, key, rate, now, consume=consume,
                             clean=self._takes % CLEAN_EVERY == 0)
        except AnswerLogError as exc:  # the answer log's own write reports the outage; do not add a 500
            log.error("rate limit not checked: %s", exc)
            return 0.0


@dataclass(frozen=True)
class _Statements:
    """A database's spelling of the three statements a budget needs."""

    read: str  # the client's row
    clean: str  # rows of budgets that have refilled
    take: str  # one request taken, only if the budget allows it: the check and the count in one statement


_SQLITE = _Statements(
    "SELECT tat FROM rate_limits WHERE key = ?", "DELETE FROM rate_limits WHERE tat < ?",
    "INSERT INTO rate_limits (key, tat) VALUES (:key, :now + :interval) ON CONFLICT (key) DO UPDATE"
    " SET tat = MAX(tat, :now) + :interval WHERE MAX(tat, :now) - :now <= :period - :interval + :epsilon RETURNING tat")
_POSTGRES = _Statements(  # the row is locked by the update: atomic across replicas
    "SELECT tat FROM rate_limits WHERE key = %s", "DELETE FROM rate_limits WHERE tat < %s",
    "INSERT INTO rate_limits AS r (key, tat) VALUES (%(key)s, %(now)s + %(interval)s)"
    " ON CONFLICT (key) DO UPDATE SET tat = GREATEST(r.tat, %(now)s) + %(interval)s"
    " WHERE GREATEST(r.tat, %(now)s) - %(now)s <= %(period)s - %(interval)s + %(epsilon)s RETURNING tat")


def _take(connection: Any, sql: _Statements, key: str, rate: Rate, now: float, *, consume: bool, clean: bool) -> float:
    """The cell-rate algorithm on a database connection (either kind): 0 when the request may go, else the wait."""
    if not consume:
        row = connection.execute(sql.read, (key,)).fetchone()
        return wait_for(row[0], rate, now) if row else 0.0
    if clean:
        connection.execute(sql.clean, (now,))
    taken = connection.execute(sql.take, {"key": key, "now": now, "interval": rate.interval, "period": rate.period,
                                          "epsilon": EPSILON}).fetchone()
    if taken is not None:
        return 0.0
    row = connection.execute(sql.read, (key,)).fetchone()
    return max(wait_for(row[0], rate, now), 0.001) if row else 0.0
