"""A broken store is never silent: /readyz names each failing dependency, the damaged answer log is reported once.

The answer log is a real SQLite file, damaged the way a disk or a careless
copy damages one: bytes overwritten in its header, or in a page in the middle.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from answer.log.damage import set_aside_if_damaged
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from retrieval.chroma import ChromaIndex
from retrieval.errors import IndexDamagedError
from retrieval.search import DenseRetriever
from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator
from tests.memory_index import MemoryIndex
from tests.unit.test_web import GOOD
from web.app import create_app
from web.failures import FIX_LOG_DAMAGED, LOG_DAMAGED
from web.settings import Settings

QUESTION = "How long are refunds available?"
STAFF = {"X-Groups": "staff"}


def app(path: Path, *, recheck: float = 0.0) -> TestClient:
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS])
    audit = SQLiteAnswerLog(path, recheck=recheck)
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(*[GOOD] * 50), audit=audit)
    settings = Settings(data_dir=path.parent, identity_header="X-Groups")
    return TestClient(create_app(settings, answerer=answerer, store=store), raise_server_exceptions=False)


def damage(path: Path, where: str) -> None:
    """Overwrite bytes of the file: its 100-byte header, or the b-tree page of the answers table."""
    data = bytearray(path.read_bytes())
    if where == "header":
        data[0:100] = b"\xab" * 100
    else:
        with sqlite3.connect(path) as connection:
            (root,) = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'answers'").fetchone()
            (size,) = connection.execute("PRAGMA page_size").fetchone()
        start = (root - 1) * size
        data[start : start + size] = b"\xab" * size
    path.write_bytes(bytes(data))
    assert not sound(path)  # the premise: SQLite itself finds the file damaged


def sound(path: Path) -> bool:
    connection = sqlite3.connect(path)
    try:
        return connection.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    except sqlite3.DatabaseError:
        return False
    finally:
        connection.close()


def test_readyz_reports_each_dependency_when_all_is_well(tmp_path):
    client = app(tmp_path / "answers.sqlite3")
    client.post("/api/ask", json={"question": QUESTION})
    health = client.get("/readyz")
    assert health.status_code == 200
    assert health.json() == {"status": "ok", "chunks": 1,
                             "checks": {"index": {"status": "ok"}, "answer_log": {"status": "ok"},
                                        "models": {"status": "ok"}}}


@pytest.mark.parametrize("where", ["header", "middle"])
def test_a_damaged_answer_log_fails_readyz_naming_it_and_the_fix(tmp_path, where):
    path = tmp_path / "answers.sqlite3"
    client = app(path)
    assert client.post("/api/ask", json={"question": QUESTION}).json()["state"] == "answered"
    damage(path, where)
    assert client.get("/healthz").status_code == 200  # alive: restarting it would not mend the file
    health = client.get("/readyz")
    assert health.status_code == 503
    body = health.json()
    assert body["status"] == "failing" and body["chunks"] == 1  # the index still answers, and says so
    assert body["checks"]["index"] == {"status": "ok"}
    assert body["checks"]["answer_log"] == {"status": "failing", "problem": LOG_DAMAGED, "fix": FIX_LOG_DAMAGED}
    assert body["error"] == LOG_DAMAGED
    assert "moves the damaged file" in FIX_LOG_DAMAGED and str(path) not in health.text  # no server paths to the public


@pytest.mark.parametrize("where", ["header", "middle"])
def test_a_damaged_answer_log_still_answers_and_is_reported_once(tmp_path, where, caplog):
    path = tmp_path / "answers.sqlite3"
    client = app(path)
    client.post("/api/ask", json={"question": QUESTION})
    damage(path, where)
    with caplog.at_level(logging.ERROR):
        client.get("/answers", headers=STAFF)  # where a damaged page in the middle is first read
        answers = [client.post("/api/ask", json={"question": QUESTION}) for _ in range(3)]
        client.get("/readyz")
    assert [a.status_code for a in answers] == [200] * 3
    assert {a.json()["state"] for a in answers} == {"answered"}
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert "is damaged" in errors[0].getMessage() and str(path) in errors[0].getMessage()


def test_the_staff_answer_log_page_is_a_503_naming_the_problem_and_the_fix(tmp_path):
    path = tmp_path / "answers.sqlite3"
    client = app(path)
    client.post("/api/ask", json={"question": QUESTION})
    damage(path, "middle")
    page = client.get("/answers", headers=STAFF)
    assert page.status_code == 503 and "<html" in page.text
    assert LOG_DAMAGED in page.text and FIX_LOG_DAMAGED in page.text
    assert "Traceback" not in page.text and "Internal" not in page.text


def test_a_damaged_log_is_moved_aside_with_its_wal_and_a_sound_one_is_left_alone(tmp_path):
    path = tmp_path / "answers.sqlite3"
    client = app(path)
    client.post("/api/ask", json={"question": QUESTION})
    assert set_aside_if_damaged(path) is None and path.exists()
    damage(path, "header")
    wal = path.with_name(path.name + "-wal")
    wal.write_bytes(b"last writes")
    moved, problem = set_aside_if_damaged(path)
    assert not path.exists() and not wal.exists()  # a fresh log starts in their place
    assert moved.name.startswith("answers.sqlite3.damaged-") and "not a database" in problem
    assert moved.with_name(moved.name + "-wal").read_bytes() == b"last writes"  # nothing deleted, nothing split up


class PanicException(BaseException):
    """What pyo3 raises when Chroma's Rust core panics: a BaseException, so `except Exception` misses it."""


def test_a_panic_in_chroma_is_a_damaged_index_and_an_interrupt_is_not(tmp_path):
    index = ChromaIndex(path=str(tmp_path / "chroma"))

    def panics() -> None:
        raise PanicException("called `Result::unwrap()` on an `Err` value: Corruption")

    with pytest.raises(IndexDamagedError, match="make ingest FULL=1"):
        index._call("query", panics)

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index._call("query", interrupted)
