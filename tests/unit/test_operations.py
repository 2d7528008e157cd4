"""What an operator reads: /metrics counts what was sent, /healthz and /readyz differ, every request has one id.

The app is the real one (starlette, the real answer pipeline and verifier, a
real SQLite answer log) over an in-memory index and a scripted generator, so
each count below is caused by a request this test made.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever
from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator
from tests.memory_index import MemoryIndex
from tests.unit.test_web import GOOD, PHANTOM, TAXES
from web import logs
from web.app import create_app
from web.settings import Settings

TOKEN = "scrape-token-0123456789"
QUESTION = "How long are refunds available?"


def app(tmp_path: Path, *replies: str, **settings: object) -> tuple[TestClient, SQLiteAnswerLog]:
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS, TAXES])
    audit = SQLiteAnswerLog(tmp_path / "answers.sqlite3")
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), ScriptedGenerator(*replies), audit=audit)
    config = Settings(data_dir=tmp_path, metrics_token=TOKEN, identity_header="X-Groups", **settings)  # type: ignore[arg-type]
    return TestClient(create_app(config, answerer=answerer, store=store)), audit


def scrape(client: TestClient) -> dict[str, float]:
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    samples = {}
    for line in response.text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def test_metrics_count_the_answers_findings_and_requests_that_were_sent(tmp_path):
    client, _ = app(tmp_path, GOOD, GOOD, PHANTOM, PHANTOM)  # two answers, then a phantom twice (first try and retry)
    before = scrape(client)
    assert before['docs_answers_total{state="answered"}'] == 0 and before["docs_index_chunks"] == 2
    assert before["docs_index_up"] == 1
    for _ in range(2):
        assert client.post("/api/ask", json={"question": QUESTION}).json()["state"] == "answered"
    assert client.post("/api/ask", json={"question": "Are refunds instant?"}).json()["state"] != "answered"
    client.get("/docs/billing/refunds")
    client.get("/docs/billing/taxes")

    after = scrape(client)
    assert after['docs_answers_total{state="answered"}'] == 2
    assert after['docs_answers_total{state="refused"}'] + after['docs_answers_total{state="unverified"}'] == 1
    assert after['docs_verifier_findings_total{kind="phantom"}'] == 2  # the draft and its retry each named c9
    assert after['docs_http_requests_total{method="POST",route="/api/ask",status="200"}'] == 3
    assert after["docs_answer_seconds_count"] == 3 and after["docs_retrieval_seconds_count"] == 3
    assert after["docs_generation_seconds_count"] == 4  # an attempt each, and the phantom's retry
    docs = [k for k in after if k.startswith("docs_http_requests_total") and "/docs" in k]
    assert docs and all('route="/docs/{path:path}"' in k for k in docs)  # the template, never the path asked


def test_metrics_are_for_operators_only(tmp_path):
    client, _ = app(tmp_path)
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
    assert "METRICS_TOKEN" in client.get("/metrics").text
    assert client.get("/metrics", headers={"X-Groups": "staff"}).status_code == 200


def test_a_request_id_is_on_the_response_the_log_lines_and_the_answer_record(tmp_path):
    client, audit = app(tmp_path, GOOD, GOOD, GOOD)
    kept = client.post("/api/ask", json={"question": QUESTION}, headers={"X-Request-ID": "lb-7f3a9c21"})
    assert kept.headers["x-request-id"] == "lb-7f3a9c21"  # the load balancer's id follows the request
    assert audit.get(kept.json()["answer_id"]).request_id == "lb-7f3a9c21"

    for hostile in (b"short", "a\u00e9b".encode() * 10, b"x" * 500, b"id with spaces in it"):
        made = client.post("/api/ask", json={"question": QUESTION}, headers={"X-Request-ID": hostile})
        assert re.fullmatch(r"[0-9a-f]{32}", made.headers["x-request-id"])  # replaced, never echoed
    streamed = client.get("/ask/stream", params={"question": QUESTION})
    rid = streamed.headers["x-request-id"]
    answer_id = re.search(r'data-answer-id="([0-9a-f]+)"', streamed.text) or re.search(r"/answers/([0-9a-f]{16})", streamed.text)
    assert answer_id is not None, streamed.text[-500:]
    assert audit.get(answer_id.group(1)).request_id == rid  # carried through the stream's worker threads


@contextlib.contextmanager
def server_log(monkeypatch, log_format: str):  # noqa: ANN001, ANN201
    """What the server writes to stderr, configured as `python -m web` does; the root logger restored after."""
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        logs.configure(log_format)
        yield stream
    finally:
        root.handlers[:], _ = saved[0], root.setLevel(saved[1])


def test_json_log_lines_carry_the_request_id(tmp_path, monkeypatch):
    with server_log(monkeypatch, "json") as stream:
        client, _ = app(tmp_path, GOOD)
        ask = client.post("/api/ask", json={"question": QUESTION}, headers={"X-Request-ID": "req-000111222"})
        logging.getLogger("web.test").warning("outside any request")
        lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    assert ask.status_code == 200
    assert all(set(line) >= {"time", "level", "logger", "message", "request_id"} for line in lines)
    assert lines[-1]["message"] == "outside any request" and lines[-1]["request_id"] == "-"
    with pytest.raises(ValueError, match="LOG_FORMAT"):
        logs.configure("xml")
    with pytest.raises(ValueError, match="LOG_FORMAT"):
        Settings.from_env({"LOG_FORMAT": "yaml"}, dotenv=False)


def test_an_access_line_keeps_the_query_names_but_never_what_the_visitor_typed(monkeypatch):
    with server_log(monkeypatch, "text") as stream:
        logs.configure("text")  # configured twice (a worker after its parent): one filter, not two
        access = logging.getLogger("uvicorn.access")
        # the call uvicorn makes for each response (uvicorn/protocols/http/*_impl.py)
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5050", "GET",
                    "/ask/stream?question=my%20key%20fd_live_4f9a%20leaked%2C%20jane%40example.com&thread=t1", "1.1", 200)
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5050", "GET", "/healthz", "1.1", 200)
        chatty = logging.getLogger("a.library")
        chatty.setLevel(logging.DEBUG)  # as bm25s does: its debug lines are not the operator's
        chatty.debug("Building index from tokens")
    first, second = stream.getvalue().splitlines()
    assert '"GET /ask/stream?question=&thread= HTTP/1.1" 200' in first
    assert "fd_live" not in first and "example" not in first and "t1" not in first
    assert '"GET /healthz HTTP/1.1" 200' in second
    filters = logging.getLogger("uvicorn.access").filters  # a library may add its own (litellm does)
    assert sum(isinstance(f, logs.QueryValuesDropped) for f in filters) == 1


def test_each_answer_logs_one_line_with_its_id_outcome_and_time_but_not_the_question(tmp_path, monkeypatch):
    with server_log(monkeypatch, "json") as stream:
        client, _ = app(tmp_path, GOOD)
        body = client.post("/api/ask", json={"question": QUESTION}, headers={"X-Request-ID": "req-424242"}).json()
    [line] = [json.loads(x) for x in stream.getvalue().splitlines() if '"web.answers"' in x]
    said = line["message"]
    assert said.startswith(f"answer {body['answer_id']}: {body['outcome']}, {body['state']}, ") and said.endswith(" s")
    assert QUESTION not in said and line["request_id"] == "req-424242"  # the request's id, from the answer's thread


def test_healthz_is_alive_while_readyz_waits_for_the_models(tmp_path, monkeypatch):
    built = []

    def slow_components(settings, *, store, audit):  # noqa: ANN001, ANN202
        time.sleep(0.5)
        from answer.services import components_for

        embedder = HashEmbedder()
        answerer = Answerer(DenseRetriever(MemoryIndex(embedder, [REFUNDS]), embedder, floor=-1.0), ScriptedGenerator(GOOD),
                            audit=audit)
        built.append(answerer)
        return components_for(answerer)

    monkeypatch.setattr("answer.services.build_components", slow_components)
    client = TestClient(create_app(Settings(data_dir=tmp_path)))  # a real (empty) embedded index; models built lazily
    assert client.get("/healthz").json() == {"status": "alive"}
    first = client.get("/readyz")
    assert first.status_code == 503 and first.json()["checks"]["models"] == {"status": "loading"}
    deadline = time.monotonic() + 20
    while client.get("/readyz").status_code != 200:  # the probe started the load; nothing else asked
        assert time.monotonic() < deadline, "the models never finished loading"
        time.sleep(0.1)
    assert len(built) == 1 and client.get("/readyz").json()["checks"]["models"] == {"status": "ok"}
