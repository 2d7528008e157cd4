"""Faults lose nothing and show no stack trace: a dead Chroma server, a failing LLM, a broken audit store, a burst of load.

Each fault is real: the `chroma run` server is killed with SIGKILL and started
again on the same port and data folder; the LLM is a scripted
OpenAI-compatible server answering 500, 429, slowly or with garbage; the
audit database is locked by another connection or cannot be created.
"""

from __future__ import annotations

import json
import logging
import resource
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from answer.generate import ExtractiveGenerator
from answer.llm.client import LiteLLMGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.services import open_retriever
from retrieval.store import ChromaStore
from tests.chroma_server import chroma_binary, free_port, heartbeat, write_site
from tests.conftest import CONTENT, REPO, require
from tests.scripted_llm import Reply, ScriptedLLM
from web.app import create_app
from web.failures import FIX_INDEX_DOWN, UNAVAILABLE
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

QUESTION = "How many times does Ferrydeck retry a failed delivery?"
SMOKE = REPO / "test-artifacts" / "load-smoke.json"


def no_trace(response: httpx.Response) -> str:
    text = response.text
    assert "Traceback" not in text and 'File "' not in text, text[:400]
    return text


@contextmanager
def chroma_process(path: Path, port: int) -> Iterator[subprocess.Popen]:
    """`chroma run` on a fixed port, so the app's configured URL stays valid across a restart."""
    binary = chroma_binary()
    require(binary is not None, "the chroma CLI is not installed")
    with (path.parent / f"chroma-{port}.log").open("ab") as log:
        process = subprocess.Popen([binary, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
                                   stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while not heartbeat(f"http://127.0.0.1:{port}"):
                assert process.poll() is None and time.monotonic() < deadline, "chroma server did not start"
                time.sleep(0.1)
            yield process
        finally:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=10)


def test_a_killed_chroma_server_is_a_clear_503_and_the_app_recovers(tmp_path, real_embedder):
    site = write_site(tmp_path / "site")
    port, data = free_port(), tmp_path / "chroma"
    url = f"http://127.0.0.1:{port}"
    settings = Settings(content_dir=site, data_dir=tmp_path / "data", chroma_url=url)
    with chroma_process(data, port) as first:
        store = ChromaStore(url=url)
        sync_index(load_corpus(site), store, real_embedder)
        answerer = Answerer(open_retriever(settings, store=store, embedder=real_embedder), ExtractiveGenerator(real_embedder),
                            audit=SQLiteAnswerLog(settings.audit_path))
        app = create_app(settings, answerer=answerer, store=store)
        with serve(app) as base, httpx.Client(base_url=base, timeout=60) as client:
            assert client.post("/api/ask", json={"question": QUESTION}).json()["state"] == "answered"
            assert client.get("/readyz").status_code == 200
            first.kill()  # SIGKILL: no goodbye to the client
            first.wait()

            api = client.post("/api/ask", json={"question": QUESTION})
            assert api.status_code == 503 and api.json() == {"error": UNAVAILABLE}
            page = client.post("/ask", data={"question": QUESTION})
            assert page.status_code == 503 and UNAVAILABLE in no_trace(page)
            streamed = client.get("/ask/stream", params={"question": QUESTION})
            assert streamed.status_code == 200 and UNAVAILABLE in no_trace(streamed).rsplit("event: done", 1)[1]
            assert client.get("/healthz").json() == {"status": "alive"}  # alive, not ready: out of rotation, not restarted
            health = client.get("/readyz")
            assert health.status_code == 503 and health.json()["error"] == UNAVAILABLE
            assert health.json()["checks"]["index"] == {"status": "failing", "problem": UNAVAILABLE, "fix": FIX_INDEX_DOWN}
            no_trace(api)

            with chroma_process(data, port):  # back on the same port with the same data
                answer = client.post("/api/ask", json={"question": QUESTION})
                assert answer.status_code == 200 and answer.json()["state"] == "answered"
                assert "8 times" in json.dumps(answer.json()["claims"])  # the index survived the kill
                assert client.get("/readyz").json()["chunks"] == store.count(groups=["public"]) > 0  # what a visitor may read
                smoke(client)


def smoke(client: httpx.Client, requests: int = 30) -> None:
    """A bounded burst: every request succeeds; memory growth is recorded, never asserted."""
    questions = [QUESTION, "How long do dead letters stay?", "Can annual plans be refunded?", "How long is the backoff?"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    with ThreadPoolExecutor(requests) as pool:
        responses = list(pool.map(lambda n: client.post("/api/ask", json={"question": questions[n % len(questions)]}),
                                  range(requests)))
    elapsed = time.perf_counter() - started
    assert [r.status_code for r in responses] == [200] * requests
    assert all(r.json()["state"] in ("answered", "refused") for r in responses)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    SMOKE.parent.mkdir(parents=True, exist_ok=True)
    SMOKE.write_text(json.dumps({"requests": requests, "concurrency": requests, "errors": 0, "seconds": round(elapsed, 2),
                                 "max_rss_kb_before": before, "max_rss_kb_after": after}, indent=2) + "\n")


# -- the LLM fails: bounded retries, then the degrade path, never a stack trace ----------------------

@pytest.fixture(scope="module")
def llm_app(content_index, real_embedder, tmp_path_factory):
    """The real index behind a litellm generator that talks to a scripted server (2 retries, tiny backoff)."""
    settings = Settings(content_dir=CONTENT, data_dir=tmp_path_factory.mktemp("llm-faults"))
    with ScriptedLLM().running() as llm:
        generator = LiteLLMGenerator("openai/scripted", api_base=llm.url, api_key="x", timeout=1.5, max_retries=2, backoff=0.01)
        answerer = Answerer(open_retriever(settings, store=content_index, embedder=real_embedder), generator,
                            audit=SQLiteAnswerLog(settings.audit_path))
        with serve(create_app(settings, answerer=answerer, store=content_index)) as base, \
                httpx.Client(base_url=base, timeout=60) as client:
            yield client, llm


@pytest.mark.parametrize("name, replies, requests", [
    ("500 every time", [Reply.error(500)] * 3, 3),
    ("429 every time", [Reply.error(429)] * 3, 3),
    ("503 every time", [Reply.error(503)] * 3, 3),
    ("slower than the timeout", [Reply.sleep(5)] * 3, 3),
    ("malformed JSON twice", ["this is not json {", '{"refused": "maybe", "claims": 7}'], 2),
    ("an empty reply twice", ["", "   "], 2),
])
def test_llm_failures_degrade_to_an_unverified_answer_after_bounded_retries(llm_app, name, replies, requests):
    client, llm = llm_app
    for route in ("api", "page"):
        llm.replies.clear()
        llm.push(*replies)
        seen = len(llm.requests)
        if route == "api":
            response = client.post("/api/ask", json={"question": QUESTION})
            assert response.status_code == 200, name
            data = response.json()
            assert data["state"] == "unverified" and data["claims"] == [] and data["degraded"], name
            assert data["retrieved"], name  # the sections looked at are still listed
        else:
            response = client.post("/ask", data={"question": QUESTION})
            assert response.status_code == 200 and 'data-state="unverified"' in response.text, name
        shown = no_trace(response) if route == "page" else json.dumps({k: v for k, v in data.items() if k != "generator"})
        for leaked in ("InternalServerError", "RateLimitError", "Timeout", "litellm", "scripted HTTP", "GeneratorError", "JSON"):
            assert leaked not in shown, (name, leaked)  # the error's details are for the audit log, not the visitor
        assert len(llm.requests) - seen == requests, name  # bounded: retries stop, and nothing is asked twice over


def test_a_transient_llm_error_is_retried_and_the_reply_is_used(llm_app):
    client, llm = llm_app
    llm.replies.clear()
    llm.push(Reply.error(429), Reply.error(500), json.dumps({"refused": True, "claims": []}))
    seen = len(llm.requests)
    answer = client.post("/api/ask", json={"question": QUESTION}).json()
    assert answer["state"] == "refused" and not answer["degraded"]  # the model's own refusal, not the degrade path
    assert len(llm.requests) - seen == 3


# -- the audit store fails: the answer still shows, the failure is logged, nothing corrupts -------------

@pytest.fixture
def audited(content_index, real_embedder, tmp_path):
    def make(audit: SQLiteAnswerLog):
        settings = Settings(content_dir=CONTENT, data_dir=tmp_path)
        answerer = Answerer(open_retriever(settings, store=content_index, embedder=real_embedder),
                            ExtractiveGenerator(real_embedder), audit=audit)
        return serve(create_app(settings, answerer=answerer, store=content_index))
    return make


def test_an_unwritable_audit_store_still_shows_the_answer(audited, tmp_path, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the audit folder should be")
    with audited(SQLiteAnswerLog(blocker / "answers.sqlite3")) as base, caplog.at_level(logging.ERROR):
        api = httpx.post(f"{base}/api/ask", json={"question": "Which TLS versions does the API accept?"}, timeout=60)
        page = httpx.post(f"{base}/ask", data={"question": "Which TLS versions does the API accept?"}, timeout=60)
    assert api.status_code == 200 and api.json()["state"] == "answered"
    assert page.status_code == 200 and 'data-state="verified"' in no_trace(page)
    assert any("could not write answer" in r.getMessage() for r in caplog.records)


def test_a_locked_audit_store_still_shows_the_answer_and_stays_intact(audited, tmp_path, caplog):
    path = tmp_path / "answers.sqlite3"
    audit = SQLiteAnswerLog(path, timeout=0.05)
    question = "Which TLS versions does the API accept?"
    with audited(audit) as base:
        before = httpx.post(f"{base}/api/ask", json={"question": question}, timeout=60).json()
        holder = sqlite3.connect(path, timeout=0.05)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with caplog.at_level(logging.ERROR):
                locked = httpx.post(f"{base}/api/ask", json={"question": question}, timeout=60)
        finally:
            holder.rollback()
            holder.close()
        after = httpx.post(f"{base}/api/ask", json={"question": question}, timeout=60).json()
    assert locked.status_code == 200 and locked.json()["state"] == "answered"
    assert any("could not write answer" in r.getMessage() for r in caplog.records)
    assert audit.get(before["answer_id"]) and audit.get(after["answer_id"])  # written before and after the lock
    assert audit.get(locked.json()["answer_id"]) is None  # and the failure was not hidden
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
