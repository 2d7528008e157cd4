"""Abuse bounds through the real HTTP server (issue 26, items 4, 5, 8 and 10).

A small site indexed with the real model into an embedded Chroma, served by
uvicorn as `python -m web` serves it (the header deadline protocol
included). Clients are told apart by a trusted X-Forwarded-For, so each test
spends its own budget. Slow clients use raw sockets: what matters is what
the server does with bytes that arrive late or never.
"""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from answer.contract.draft import Draft
from answer.generate import ExtractiveGenerator
from answer.log.ratelimit import Rate
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.search import DenseRetriever
from retrieval.services import open_retriever
from retrieval.store import ChromaStore
from tests.chroma_server import write_site
from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.server import server_options
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

GROUPS, PROXY = "X-Groups", "X-Forwarded-For"
WIDGET = "https://docs.example.com"
QUESTION = "How many times is a failed delivery retried?"
LIMIT = 4


@pytest.fixture(scope="module")
def site(tmp_path_factory, real_embedder):
    root = write_site(tmp_path_factory.mktemp("site"))
    data = tmp_path_factory.mktemp("data")
    store = ChromaStore(path=str(data / "chroma"))
    sync_index(load_corpus(root), store, real_embedder)
    settings = Settings(content_dir=root, data_dir=data, identity_header=GROUPS, cors_origins=WIDGET,
                        rate_limit=Rate(LIMIT, 60.0), trusted_proxy_header=PROXY)

    def app():  # noqa: ANN202 — one more server process over the same DATA_DIR, as a second worker is
        answerer = Answerer(open_retriever(settings, store=store, embedder=real_embedder),
                            ExtractiveGenerator(real_embedder), audit=SQLiteAnswerLog(settings.audit_path))
        return create_app(settings, answerer=answerer, store=store)

    with serve(app(), **server_options(settings)) as url, serve(app(), **server_options(settings)) as second:
        yield {"url": url, "second": second, "audit": SQLiteAnswerLog(settings.audit_path)}


def client_of(url: str, address: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=60, headers={PROXY: address})


def logged(site) -> int:
    return len(site["audit"].search(limit=100_000))


# -- item 4: answer-creating requests have a per-client budget -----------------------------------------

def test_past_its_budget_a_client_gets_429_with_retry_after_and_others_are_unaffected(site):
    with client_of(site["url"], "203.0.113.1") as client:
        for _ in range(LIMIT):
            assert client.post("/api/ask", json={"question": QUESTION}).status_code == 200
        refused = client.post("/api/ask", json={"question": QUESTION})
        assert refused.status_code == 429, refused.text[:200]
        assert int(refused.headers["retry-after"]) >= 1
        assert "the limit is 4/minute" in refused.json()["error"]
        # A forged entry left of the proxy's own does not make a new client.
        forged = client.post("/api/ask", json={"question": QUESTION}, headers={PROXY: "198.51.100.1, 203.0.113.1"})
        assert forged.status_code == 429
    with client_of(site["url"], "203.0.113.2") as other:
        assert other.post("/api/ask", json={"question": QUESTION}).status_code == 200


def test_two_servers_over_one_data_dir_draw_from_one_budget(site):
    clients = [client_of(site["url"], "203.0.113.3"), client_of(site["second"], "203.0.113.3")]
    try:
        statuses = [clients[n % 2].post("/api/ask", json={"question": QUESTION}).status_code for n in range(LIMIT + 2)]
    finally:
        for client in clients:
            client.close()
    assert statuses == [200] * LIMIT + [429, 429]


def test_the_page_the_stream_and_htmx_say_why_in_words(site):
    with client_of(site["url"], "203.0.113.4") as client:
        before = logged(site)
        shell = client.post("/ask", data={"question": QUESTION}, headers={"HX-Request": "true"})
        assert shell.status_code == 200 and logged(site) == before  # the shell only opens the stream: not counted
        for _ in range(LIMIT):
            assert client.post("/api/ask", json={"question": QUESTION}).status_code == 200
        page = client.post("/ask", data={"question": QUESTION})
        assert page.status_code == 429 and "Too many questions from your address" in page.text and "<html" in page.text
        htmx = client.post("/ask", data={"question": QUESTION}, headers={"HX-Request": "true"})
        assert htmx.status_code == 429 and htmx.headers["hx-retarget"] == "#ask-error"
        assert "Please try again in" in htmx.text and "<html" not in htmx.text
        stream = client.get("/ask/stream", params={"question": QUESTION, "turn": "t1", "thread": "new"})
        assert stream.status_code == 429 and stream.headers["retry-after"]
        assert "event: done" in stream.text and "Too many questions" in stream.text and 'id="turn-t1"' in stream.text
        # A browser's EventSource reads no body but a 200's: it gets the failed turn as the stream's one event.
        browser = client.get("/ask/stream", params={"question": QUESTION, "turn": "t1", "thread": "new"},
                             headers={"Accept": "text/event-stream"})
        assert browser.status_code == 200 and browser.headers["retry-after"]
        assert browser.text.startswith("id: 1\nevent: done\n") and 'data-state="failed"' in browser.text
        assert "Too many questions" in browser.text
        assert logged(site) == before + LIMIT


def test_feedback_has_its_own_budget(site):
    with client_of(site["url"], "203.0.113.5") as client:
        answer_id = client.post("/api/ask", json={"question": QUESTION}).json()["answer_id"]
        statuses = [client.post(f"/api/answers/{answer_id}/feedback", json={"rating": "down", "reason": "x" * 500}).status_code
                    for _ in range(LIMIT + 1)]
        assert statuses == [201] * LIMIT + [429]
        assert len(site["audit"].feedback(answer_id)) == LIMIT


# -- item 8: no cross-site write -----------------------------------------------------------------------

def test_a_cross_site_form_post_with_a_staff_identity_is_refused_and_logs_nothing(site):
    before = logged(site)
    with client_of(site["url"], "203.0.113.6") as client:
        attack = client.post("/ask", data={"question": QUESTION},
                             headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", GROUPS: "staff"})
        assert attack.status_code == 403 and "may not ask this assistant" in attack.text
        api = client.post("/api/ask", json={"question": QUESTION}, headers={"Origin": "https://evil.example"})
        assert api.status_code == 403 and "CORS_ORIGINS" in api.json()["error"]
        sibling = client.post("/ask", data={"question": QUESTION}, headers={"Origin": "https://other.docs.example.com"})
        assert sibling.status_code == 403
    assert logged(site) == before


def test_a_cross_site_get_of_the_stream_creates_no_answer(site):
    before = logged(site)
    params = {"question": QUESTION, "turn": "t2", "thread": "new"}
    with client_of(site["url"], "203.0.113.7") as client:
        image = client.get("/ask/stream", params=params, headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"})
        assert image.status_code == 403 and "event: done" in image.text
        foreign = client.get("/ask/stream", params=params, headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403
        null = client.get("/ask/stream", params=params, headers={"Origin": "null"})
        assert null.status_code == 403
    assert logged(site) == before


def test_this_site_the_widget_and_curl_still_ask(site):
    url = site["url"]
    with client_of(url, "203.0.113.8") as client:
        page = client.post("/ask", data={"question": QUESTION}, headers={"Origin": url, "Sec-Fetch-Site": "same-origin"})
        assert page.status_code == 200 and "8 times" in page.text
        widget = client.get("/ask/stream", params={"question": QUESTION, "turn": "t3", "thread": "new"},
                            headers={"Origin": WIDGET, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"})
        assert widget.status_code == 200 and widget.headers["access-control-allow-origin"] == WIDGET
        assert "event: done" in widget.text and "8 times" in widget.text
        assert client.post("/api/ask", json={"question": QUESTION}).status_code == 200  # no Origin, no Sec-Fetch-*


# -- item 10: 64 named groups ------------------------------------------------------------------------

def test_a_reader_in_64_named_groups_is_answered_and_65_is_a_clear_400(site):
    named = [f"team_{n}" for n in range(64)]
    with client_of(site["url"], "203.0.113.9") as client:
        assert client.post("/api/ask", json={"question": QUESTION}, headers={GROUPS: ",".join(named)}).status_code == 200
        refused = client.post("/api/ask", json={"question": QUESTION}, headers={GROUPS: ",".join([*named, "team_64"])})
        assert refused.status_code == 400 and "65 groups besides public; the limit is 64" in refused.json()["error"]


# -- item 5: slow clients are closed -----------------------------------------------------------------

class SlowGenerator(ScriptedGenerator):
    """A model that takes longer than the read timeout: the answer stream must outlive it."""

    def draft(self, question: str, rset, *, feedback=()) -> Draft:  # noqa: ANN001
        time.sleep(READ_TIMEOUT * 3)
        return super().draft(question, rset, feedback=feedback)


READ_TIMEOUT = 0.5
GIVE_UP = 15.0  # far past the timeout: a connection still open then is one the server holds forever


@pytest.fixture(scope="module")
def slow_site():
    embedder = HashEmbedder()
    quote = "Refunds are available within 14 days of the charge."
    good = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": quote}], "claim": quote}]})
    answerer = Answerer(DenseRetriever(MemoryIndex(embedder, [REFUNDS]), embedder, floor=-1.0), SlowGenerator(*[good] * 5))
    settings = Settings(read_timeout=READ_TIMEOUT)
    with serve(create_app(settings, answerer=answerer, store=answerer.retriever.store), **server_options(settings)) as url:
        host, port = url.removeprefix("http://").split(":")
        yield {"url": url, "address": (host, int(port))}


def trickle(address: tuple[str, int], head: bytes, drip: bytes) -> tuple[bytes, bool]:
    """Send `head`, then one byte of `drip` every 0.2 s; what the server sent, and whether it closed the connection."""
    reply = b""
    with socket.create_connection(address, timeout=GIVE_UP) as sock:
        sock.settimeout(0.2)
        if head:
            sock.sendall(head)
        deadline = time.monotonic() + GIVE_UP
        while time.monotonic() < deadline:
            try:
                part = sock.recv(65536)
            except TimeoutError:
                try:
                    if drip:
                        sock.sendall(drip[:1])
                        drip = drip[1:] or drip
                except OSError:
                    return reply, True
                continue
            except OSError:
                return reply, True
            if not part:
                return reply, True
            reply += part
    return reply, False


def test_a_client_sending_its_headers_a_byte_at_a_time_is_closed(slow_site):
    reply, closed = trickle(slow_site["address"], b"GET /healthz HTTP/1.1\r\nHost: a\r\nX-Slow: ", b"aaaaaaaa")
    assert closed, "the server still held the connection"
    assert reply.startswith(b"HTTP/1.1 408")


def test_a_client_that_connects_and_sends_nothing_is_closed(slow_site):
    reply, closed = trickle(slow_site["address"], b"", b"")
    assert closed and reply.startswith(b"HTTP/1.1 408")


def test_a_client_trickling_its_body_gets_a_408_and_is_closed(slow_site):
    head = b"POST /api/ask HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"
    reply, closed = trickle(slow_site["address"], head, b'"question": "refunds?"' * 10)
    assert closed and reply.startswith(b"HTTP/1.1 408")
    assert b"did not arrive within 0.5 s" in reply


def test_a_client_still_uploading_when_refused_reads_the_refusal_without_a_reset(slow_site):
    """The server closes by lingering: the rest of a refused upload is drained, not answered with a TCP reset. A
    reset fails the client's send, and a client that stops there (most do) never reads the 413 that explains it."""
    head = b"POST /api/ask HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n"
    with socket.create_connection(slow_site["address"], timeout=GIVE_UP) as sock:
        sock.sendall(head)
        for _ in range(400):
            sock.sendall(b"x" * 10_000)  # raises ConnectionResetError if the server reset the connection
        reply = b""
        while part := sock.recv(65536):
            reply += part
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]


def test_normal_clients_and_idle_kept_alive_connections_are_unaffected(slow_site):
    request = b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
    with socket.create_connection(slow_site["address"], timeout=GIVE_UP) as sock:
        sock.sendall(request)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        time.sleep(READ_TIMEOUT * 2)  # idle past the header deadline, within uvicorn's keep-alive
        sock.sendall(request)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")


def test_an_answer_stream_longer_than_the_read_timeout_is_not_cut(slow_site):
    with httpx.Client(base_url=slow_site["url"], timeout=GIVE_UP) as client:
        response = client.post("/api/ask", json={"question": "How long are refunds available?"})
        assert response.status_code == 200 and response.json()["state"] == "answered"
        stream = client.get("/ask/stream", params={"question": "How long are refunds available?", "turn": "t9", "thread": "new"})
    assert stream.status_code == 200
    assert "event: done" in stream.text and "14 days" in stream.text


def test_a_forged_x_forwarded_for_never_buys_a_fresh_budget_when_no_proxy_header_is_trusted(tmp_path, real_embedder):
    """With TRUSTED_PROXY_HEADER unset, uvicorn used to take the client's address from X-Forwarded-For whenever the
    peer was 127.0.0.1: rotating the header gave 40 of 40 questions past a spent budget."""
    root = write_site(tmp_path / "site")
    store = ChromaStore(path=str(tmp_path / "data" / "chroma"))
    sync_index(load_corpus(root), store, real_embedder)
    settings = Settings(content_dir=root, data_dir=tmp_path / "data", rate_limit=Rate(LIMIT, 60.0))
    answerer = Answerer(open_retriever(settings, store=store, embedder=real_embedder), ExtractiveGenerator(real_embedder),
                        audit=SQLiteAnswerLog(settings.audit_path))
    with serve(create_app(settings, answerer=answerer, store=store), **server_options(settings)) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        codes = [client.post("/api/ask", json={"question": QUESTION}, headers={PROXY: f"198.51.100.{n}"}).status_code
                 for n in range(LIMIT + 6)]
    assert codes[:LIMIT] == [200] * LIMIT and set(codes[LIMIT:]) == {429}, codes
