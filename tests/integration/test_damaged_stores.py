"""A damaged store is visible and recoverable: the real server, `make ingest` and embedded Chroma over damaged files.

Issue 26, item 9. The answer log damaged while the server runs: answers go on,
/readyz is a 503 naming the log and the fix, /answers is a clean 503 page,
the server log says so once; a restart moves the file aside and starts a
fresh log. The Chroma index damaged: `python -m web --ingest` (`make serve`)
stops with the fix instead of a traceback, `make ingest` names the fix, and
`make ingest FULL=1` moves the damaged folder aside and rebuilds from content.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ingest.corpus import load_corpus
from retrieval.errors import IndexDamagedError
from retrieval.indexer import sync_index
from retrieval.store import ChromaStore
from tests.chroma_server import write_site
from tests.fakes import HashEmbedder
from tests.live_server import HEADER, environment, link_models, make_ingest, web_server
from web.failures import FIX_LOG_DAMAGED, LOG_DAMAGED

pytestmark = pytest.mark.integration

QUESTION = "How many times does Ferrydeck retry a failed delivery?"


def damage_header(path: Path) -> None:
    """Overwrite the 100-byte SQLite header, as a bad copy or a disk fault would."""
    data = bytearray(path.read_bytes())
    data[0:100] = b"\xab" * 100
    path.write_bytes(bytes(data))


def no_trace(text: str) -> str:
    assert "Traceback" not in text and "PanicException" not in text and 'File "' not in text, text[-2000:]
    return text


@pytest.fixture
def site_env(tmp_path, model_dir) -> tuple[dict[str, str], Path]:
    data = tmp_path / "data"
    link_models(data, model_dir)
    return environment(write_site(tmp_path / "site"), data), data


def test_a_damaged_answer_log_is_reported_while_serving_and_set_aside_on_restart(site_env, tmp_path):
    env, data = site_env
    log = data / "answers.sqlite3"
    with web_server(env, tmp_path / "web.log") as url, httpx.Client(base_url=url, timeout=120) as client:
        assert client.post("/api/ask", json={"question": QUESTION}).json()["state"] == "answered"
        damage_header(log)
        answers = [client.post("/api/ask", json={"question": QUESTION}) for _ in range(3)]
        assert [a.status_code for a in answers] == [200] * 3  # visitors still get answers
        assert {a.json()["state"] for a in answers} == {"answered"}
        health = client.get("/readyz")
        assert health.status_code == 503
        checks = health.json()["checks"]
        assert checks["answer_log"] == {"status": "failing", "problem": LOG_DAMAGED, "fix": FIX_LOG_DAMAGED}
        assert checks["index"] == {"status": "ok"} and health.json()["chunks"] > 0
        page = client.get("/answers", headers={HEADER: "staff"})
        assert page.status_code == 503 and LOG_DAMAGED in page.text and FIX_LOG_DAMAGED in no_trace(page.text)
    served = no_trace((tmp_path / "web.log").read_text())
    assert served.count("is damaged") == 1, served[-3000:]  # once, not once per request
    assert str(log) in served

    with web_server(env, tmp_path / "web-again.log") as url, httpx.Client(base_url=url, timeout=120) as client:
        health = client.get("/readyz")
        assert health.status_code == 200 and health.json()["checks"]["answer_log"] == {"status": "ok"}
        answer = client.post("/api/ask", json={"question": QUESTION}).json()
        listed = client.get("/answers", headers={HEADER: "staff"})
        assert listed.status_code == 200 and answer["answer_id"] in listed.text  # a fresh log records again
    restarted = no_trace((tmp_path / "web-again.log").read_text())
    moved = sorted(data.glob("answers.sqlite3.damaged-*"))
    assert [m.name for m in moved if not m.name.endswith(("-wal", "-shm"))] == [moved[0].name], moved
    assert moved[0].read_bytes()[:100] == b"\xab" * 100  # kept as it was, never deleted
    assert f"moved it to {moved[0]}" in restarted


def test_a_damaged_index_stops_serve_with_the_fix_and_a_full_ingest_rebuilds_it(site_env, tmp_path):
    env, data = site_env
    built = make_ingest(env).wait()
    assert built.returncode == 0, built.lines
    damage_header(data / "chroma" / "chroma.sqlite3")

    serve = subprocess.run([sys.executable, "-m", "web", "--ingest"], env=env, cwd=tmp_path, capture_output=True,
                           timeout=600)
    said = no_trace(serve.stdout.decode(errors="replace") + serve.stderr.decode(errors="replace"))
    assert serve.returncode == 2 and "is damaged" in said and "make ingest FULL=1" in said, said[-2000:]

    plain = make_ingest(env).wait()
    printed = no_trace("\n".join(plain.lines))
    assert plain.returncode == 2 and "make ingest FULL=1" in printed, printed

    full = make_ingest(env, "FULL=1").wait()
    printed = no_trace("\n".join(full.lines))
    assert full.returncode == 0 and "moved the damaged index to" in printed, printed
    aside = list(data.glob("chroma.damaged-*"))
    assert len(aside) == 1 and (aside[0] / "chroma.sqlite3").read_bytes()[:100] == b"\xab" * 100  # kept, not deleted

    with web_server(env, tmp_path / "web.log") as url, httpx.Client(base_url=url, timeout=120) as client:
        health = client.get("/readyz")
        assert health.status_code == 200 and health.json()["chunks"] > 0
        assert client.post("/api/ask", json={"question": QUESTION}).json()["state"] == "answered"


def test_a_damaged_page_in_the_middle_of_the_index_is_a_damaged_index_and_set_aside_rebuilds(tmp_path):
    path = tmp_path / "chroma"
    corpus = load_corpus(write_site(tmp_path / "site"))
    store = ChromaStore(path=str(path))
    sync_index(corpus, store, HashEmbedder())
    chunks = store.count()
    store.close()  # as a process that stops: what it read is not kept over the file it damages next
    sqlite_file = path / "chroma.sqlite3"
    with sqlite3.connect(sqlite_file) as connection:  # the page holding the chunks' metadata, not the header
        (root,) = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'embedding_metadata'").fetchone()
        (size,) = connection.execute("PRAGMA page_size").fetchone()
    data = bytearray(sqlite_file.read_bytes())
    data[(root - 1) * size : root * size] = b"\xab" * size
    sqlite_file.write_bytes(bytes(data))

    damaged = ChromaStore(path=str(path))
    with pytest.raises(IndexDamagedError, match="make ingest FULL=1"):
        damaged.rows()
    moved = damaged.set_aside()
    kept = (moved / "chroma.sqlite3").read_bytes()  # moved, never deleted; opening it may bump the header's counter
    assert len(kept) >= len(data) and kept[(root - 1) * size : root * size] == b"\xab" * size
    sync_index(corpus, damaged, HashEmbedder(), full=True)  # the same handle, now on a fresh folder
    assert damaged.count() == chunks and len(damaged.rows()) == chunks


def test_an_index_damaged_while_serving_makes_answers_and_the_viewer_503_with_the_fix(site_env, tmp_path):
    """Answers and the docs viewer read a snapshot in memory and kept answering 200 after the files under it were
    damaged, though /readyz said 503 and the docs promise 503s (N8)."""
    env, data = site_env
    with web_server(env, tmp_path / "web.log") as url, httpx.Client(base_url=url, timeout=120) as client:
        assert client.post("/api/ask", json={"question": QUESTION}).status_code == 200
        assert client.get("/docs/guides/retries").status_code == 200
        damage_header(data / "chroma" / "chroma.sqlite3")
        assert client.get("/readyz").status_code == 503
        deadline = time.monotonic() + 30  # the index is asked at most every few seconds
        while client.post("/api/ask", json={"question": QUESTION}).status_code != 503 and time.monotonic() < deadline:
            time.sleep(0.5)
        asked = client.post("/api/ask", json={"question": QUESTION})
        assert asked.status_code == 503 and "index is unavailable" in asked.json()["error"]  # the fix is the operator's
        assert client.post("/ask", data={"question": QUESTION}).status_code == 503
        stream = client.get("/ask/stream", params={"question": QUESTION, "turn": "t1"})
        assert "index is unavailable" in stream.text and "event: done" in stream.text
        assert client.get("/docs/guides/retries").status_code == 503
        assert client.get("/docs/search", params={"q": "retry"}).status_code == 503
