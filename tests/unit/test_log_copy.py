"""`python -m answer log copy`: a single server's SQLite log moved into the PostgreSQL database replicas share."""

from __future__ import annotations

import sqlite3
import time

import pytest

from answer.__main__ import main
from answer.log.postgres import PostgresAnswerLog
from answer.log.retention import NO_RETENTION
from answer.log.sqlite import SQLiteAnswerLog
from tests.fakes import REFUNDS
from tests.gap_seed import DAY, refusal, seed

NOW = time.time()


@pytest.fixture
def seeded(tmp_path):
    """A SQLite log holding answers, a thread, ratings (two of them identical) and question vectors."""
    path = tmp_path / "answers.sqlite3"
    audit = SQLiteAnswerLog(path, retention=NO_RETENTION)
    answers = [refusal(f"how do I set up saml for team {n}?", created=NOW - DAY + n, chunks=[REFUNDS],
                       groups=["staff"] if n % 2 else [], state="refused" if n < 3 else "answered") for n in range(6)]
    seed(audit, answers)
    for n, answer in enumerate(answers[:3]):
        audit.add_turn("thread-1", answer.id, f"asked {n}", f"searched {n}", answer.retrieval.viewer.groups,
                       "f" * 64 if n else None)
    for rating, reason in (("down", "did not say"), ("down", "did not say"), ("up", "")):
        assert audit.add_feedback(answers[3].id, rating, reason, frozenset({"public"}))
    audit.keep_question_vectors("hash-64", [(a.id, f"h{n}", bytes(range(n, 64))) for n, a in enumerate(answers[:3])])
    return path, audit, answers


def test_a_copy_brings_every_record_across_field_by_field_and_a_second_run_copies_nothing(seeded, postgres_url, capsys):
    path, source, answers = seeded
    assert main(["log", "copy", "--from", f"sqlite://{path}", "--to", postgres_url]) == 0
    out = capsys.readouterr().out
    assert "answers: 6 copied, 0 already there" in out and "turns: 3 copied" in out
    assert "feedback: 3 copied" in out and "question_vectors: 3 copied" in out
    target = PostgresAnswerLog(postgres_url, retention=NO_RETENTION)
    try:
        assert target.search(limit=100) == source.search(limit=100)  # ids, times, questions, groups, states, counts
        for answer in answers:
            assert target.get(answer.id) == source.get(answer.id)  # the whole record, every field typed
            assert target.feedback(answer.id) == source.feedback(answer.id)
        assert target.thread("thread-1") == source.thread("thread-1")
        ids = [a.id for a in answers]
        assert target.question_vectors("hash-64", ids) == source.question_vectors("hash-64", ids)
        assert target.gap_rows(NOW - 2 * DAY) == source.gap_rows(NOW - 2 * DAY)

        assert main(["log", "copy", "--from", f"sqlite://{path}", "--to", postgres_url]) == 0
        again = capsys.readouterr().out
        assert "answers: 0 copied, 6 already there" in again and "feedback: 0 copied, 3 already there" in again
        assert "turns: 0 copied, 3 already there" in again and "question_vectors: 0 copied, 3 already there" in again
        assert len(target.search(limit=100)) == 6 and len(target.feedback(answers[3].id)) == 3

        # One more identical rating in the source: exactly that one is copied, the two already there are not doubled.
        assert source.add_feedback(answers[3].id, "down", "did not say", frozenset({"public"}))
        with sqlite3.connect(path) as db:  # stamped like the first identical rating, so the two rows are identical
            db.execute("UPDATE feedback SET created = (SELECT created FROM feedback ORDER BY rowid LIMIT 1) "
                       "WHERE rowid = (SELECT MAX(rowid) FROM feedback)")  # only the new row: the copied ones keep theirs
        assert main(["log", "copy", "--from", f"sqlite://{path}", "--to", postgres_url]) == 0
        assert "feedback: 1 copied, 3 already there" in capsys.readouterr().out
    finally:
        target.close()


def test_a_copy_names_what_is_wrong_with_its_arguments(tmp_path, postgres_url, capsys):
    assert main(["log", "copy", "--from", str(tmp_path / "answers.sqlite3"), "--to", postgres_url]) == 2
    assert "--from must be a SQLite log as sqlite:///absolute/path" in capsys.readouterr().err
    assert main(["log", "copy", "--from", f"sqlite://{tmp_path}/missing.sqlite3", "--to", postgres_url]) == 2
    assert "which is not a file" in capsys.readouterr().err
    (tmp_path / "answers.sqlite3").touch()
    assert main(["log", "copy", "--from", f"sqlite://{tmp_path}/answers.sqlite3", "--to", "mysql://db/x"]) == 2
    assert "DATABASE_URL must be empty" in capsys.readouterr().err
