"""`python -m answer log copy --from sqlite:///…/answers.sqlite3 --to postgresql://…`: a single server's log, moved.

Going from one process to several replicas should not lose the answers,
threads, feedback and content-gap vectors staff already rely on. The copy
reads the SQLite file read-only and writes only what the database lacks, so
running it twice (or again after the replicas have started writing) copies
nothing twice: answers, turns and vectors by their keys, feedback (which has
no key) by counting identical ratings on each side. Rate-limit budgets and the
thread secret are not copied: budgets refill, and threads signed with the old
file's secret keep working only if THREAD_SECRET is set to its contents.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AnswerLogError
from .postgres import Connection, PostgresAnswerLog

BATCH = 500
TABLES = ("answers", "turns", "feedback", "question_vectors")


@dataclass(frozen=True)
class CopyReport:
    """Rows per table: copied now, and found already in the target."""

    copied: dict[str, int]
    present: dict[str, int]

    def summary(self) -> str:
        return "\n".join(f"{table}: {self.copied[table]} copied, {self.present[table]} already there" for table in TABLES)


def sqlite_path(url: str) -> Path:
    """The file a `sqlite:///absolute/path` URL names (as file:// URLs do: three slashes, then the absolute path)."""
    if not url.startswith("sqlite:///"):
        raise ValueError(f"--from must be a SQLite log as sqlite:///absolute/path/answers.sqlite3, got {url!r}")
    path = Path(url.removeprefix("sqlite://"))
    if not path.is_file():
        raise ValueError(f"--from names {path}, which is not a file: give the SQLite answer log "
                         "(DATA_DIR/answers.sqlite3) of the server being moved")
    return path


def copy_log(source: Path, target: PostgresAnswerLog) -> CopyReport:
    """Copy every answer, turn, rating and question vector the target lacks, in one transaction (all or nothing)."""
    copied, present = dict.fromkeys(TABLES, 0), dict.fromkeys(TABLES, 0)
    db = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
    try:
        with target.connection(f"cannot copy {source} into the answer log") as pg:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            for table, rows in (("answers", _answers), ("turns", _turns), ("feedback", _feedback),
                                ("question_vectors", _vectors)):
                if table not in tables:  # a log from before that table: nothing of it to copy
                    continue
                for was_there in rows(db, pg):
                    (present if was_there else copied)[table] += 1
    except sqlite3.Error as exc:
        raise AnswerLogError(f"cannot read the SQLite answer log {source}: {exc}") from exc
    finally:
        db.close()
    return CopyReport(copied, present)


def _batches(db: sqlite3.Connection, query: str) -> Iterator[list[tuple[Any, ...]]]:
    cursor = db.execute(query)
    while batch := cursor.fetchmany(BATCH):
        yield batch


def _answers(db: sqlite3.Connection, pg: Connection) -> Iterator[bool]:
    for batch in _batches(db, "SELECT id, created, question, groups, state, degraded, generator, record FROM answers"):
        held = {r[0] for r in pg.execute("SELECT id FROM answers WHERE id = ANY(%s)", ([r[0] for r in batch],))}
        fresh = [(*r[:5], bool(r[5]), *r[6:]) for r in batch if r[0] not in held]
        with pg.cursor() as cursor:
            cursor.executemany("INSERT INTO answers (id, created, question, groups, state, degraded, generator, record)"
                               " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING", fresh)
        yield from (r[0] in held for r in batch)


def _turns(db: sqlite3.Connection, pg: Connection) -> Iterator[bool]:
    columns = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
    owner = "owner" if "owner" in columns else "NULL"  # a log from before thread owners
    query = f"SELECT thread_id, position, answer_id, asked, question, groups, created, {owner} FROM turns"
    for batch in _batches(db, query):
        held = set(pg.execute("SELECT thread_id, position FROM turns WHERE thread_id = ANY(%s)",
                              (list({r[0] for r in batch}),)).fetchall())
        fresh = [r for r in batch if (r[0], r[1]) not in held]
        with pg.cursor() as cursor:
            cursor.executemany("INSERT INTO turns (thread_id, position, answer_id, asked, question, groups, created,"
                               " owner) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING", fresh)
        yield from ((r[0], r[1]) in held for r in batch)


def _feedback(db: sqlite3.Connection, pg: Connection) -> Iterator[bool]:
    """Ratings have no key: per answer, copy as many of each identical rating as the target is short of."""
    for batch in _batches(db, "SELECT answer_id, rating, reason, groups, created FROM feedback ORDER BY rowid"):
        held = Counter(tuple(r) for r in pg.execute(
            "SELECT answer_id, rating, reason, groups, created FROM feedback WHERE answer_id = ANY(%s)",
            (list({r[0] for r in batch}),)).fetchall())
        fresh, was_there = [], []
        for r in batch:
            row = (r[0], r[1], r[2], r[3], float(r[4]))
            was_there.append(held[row] > 0)
            if held[row] > 0:
                held[row] -= 1
            else:
                fresh.append(row)
        with pg.cursor() as cursor:
            cursor.executemany("INSERT INTO feedback (answer_id, rating, reason, groups, created)"
                               " VALUES (%s, %s, %s, %s, %s)", fresh)
        yield from was_there


def _vectors(db: sqlite3.Connection, pg: Connection) -> Iterator[bool]:
    for batch in _batches(db, "SELECT answer_id, model, text_hash, vector FROM question_vectors"):
        held = set(pg.execute("SELECT answer_id, model FROM question_vectors WHERE answer_id = ANY(%s)",
                              (list({r[0] for r in batch}),)).fetchall())
        fresh = [(r[0], r[1], r[2], bytes(r[3])) for r in batch if (r[0], r[1]) not in held]
        with pg.cursor() as cursor:
            cursor.executemany("INSERT INTO question_vectors (answer_id, model, text_hash, vector)"
                               " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING", fresh)
        yield from ((r[0], r[1]) in held for r in batch)
