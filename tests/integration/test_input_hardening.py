"""Hostile input through the real HTTP server: group names, the identity header, sizes, /healthz and the CSP.

One small site with team pages is indexed with the real model into an embedded
Chroma and served by uvicorn with a trusted identity header. Each test is a
visitor sending what the hostile test sent (issue 14, items 3, 4, 5 and 7).
"""

from __future__ import annotations

import re
import socket

import httpx
import pytest

from answer.generate import ExtractiveGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.records import acl_key
from retrieval.services import open_retriever
from retrieval.store import ChromaStore
from tests.chroma_server import SITE_PAGES, write_site
from web.app import create_app
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

HEADER = "X-Groups"
TEAM_A = """---
title: Team A handbook
access: [team_a]
---

# Team A handbook

## Deploy freeze

Team A freezes deploys every Thursday from 16:00 UTC on cluster kestrel-7.
"""
DOTTED = """---
title: Dotted team
access: [team.a]
---

# Dotted team

## Escalation

The dotted team escalates to the pager rotation named heron-3.
"""
QUESTION = "When does Team A freeze deploys?"


@pytest.fixture(scope="module")
def site(tmp_path_factory, real_embedder):
    root = write_site(tmp_path_factory.mktemp("site"), SITE_PAGES | {"teams/alpha.mdx": TEAM_A, "teams/dotted.mdx": DOTTED})
    data = tmp_path_factory.mktemp("data")
    store = ChromaStore(path=str(data / "chroma"))
    report = sync_index(load_corpus(root), store, real_embedder)
    settings = Settings(content_dir=root, data_dir=data, identity_header=HEADER)
    answerer = Answerer(open_retriever(settings, store=store, embedder=real_embedder), ExtractiveGenerator(real_embedder),
                        audit=SQLiteAnswerLog(settings.audit_path))
    with serve(create_app(settings, answerer=answerer, store=store)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield {"client": client, "store": store, "report": report, "url": url}


def answer_text(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text[:300]
    return str(response.json())


def raw_request(url: str, data: bytes) -> bytes:
    """Send bytes as they are and read the reply (a client library would refuse to under-send a body)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        reply = b""
        while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
            part = sock.recv(65536)
            if not part:
                break
            reply += part
        return reply


def alive(client: httpx.Client) -> None:
    assert client.get("/healthz").status_code == 200


# -- item 3: group names are an exact, injective encoding ---------------------------------------------

def test_a_group_name_outside_the_alphabet_fails_its_page_with_file_and_line(site):
    failures = site["report"].failures
    assert any(f.startswith("teams/dotted.mdx:3: group name 'team.a'") for f in failures), failures
    assert "heron-3" not in str(site["store"].chunks())  # never indexed under any key


def test_group_keys_never_collide():
    names = ["team_a", "team-a", "teamA", "TEAM_A", "team_a_", "a", "a-", "a_"]
    assert len({acl_key(n) for n in names}) == len(names)
    for bad in ("team.a", "tëam", "staff\xa0", "\x85staff", " staff", "", "-x"):
        with pytest.raises(ValueError, match="not allowed"):
            acl_key(bad)


def test_only_the_exact_group_reads_a_team_page(site):
    client = site["client"]
    assert "kestrel-7" in answer_text(client.post("/api/ask", json={"question": QUESTION}, headers={HEADER: "team_a"}))
    for lookalike in ("team-a", "teamA", "TEAM_A", "team_a_"):
        assert "kestrel-7" not in answer_text(client.post("/api/ask", json={"question": QUESTION}, headers={HEADER: lookalike}))
        assert client.get("/docs/teams/alpha", headers={HEADER: lookalike}).status_code == 404
    assert client.get("/docs/teams/alpha", headers={HEADER: "team_a"}).status_code == 200
    response = client.post("/api/ask", json={"question": QUESTION}, headers={HEADER: "team.a"})
    assert response.status_code == 400 and "outside the alphabet" in response.json()["error"]


# -- item 4: the identity header is exact ASCII tokens, sent once --------------------------------------

SURFACES = [("POST", "/api/ask", {"json": {"question": "refunds?"}}), ("POST", "/ask", {"data": {"question": "refunds?"}}),
            ("GET", "/ask/stream?question=refunds", {}), ("GET", "/docs/internal/overrides", {}),
            ("GET", "/answers", {}), ("GET", "/readyz", {}), ("GET", "/metrics", {}), ("GET", "/docs/search?q=overrides", {})]


@pytest.mark.parametrize("raw", [b"staff\xa0", b"staff\xc2\xa0", b"\x85staff", b"\xc2\x85staff",
                                 b"st\xe2\x80\x8baff", b"public,staff\xa0", b"st aff", b"staff;x"])
def test_a_header_that_only_looks_like_staff_is_a_400_everywhere(site, raw):
    client = site["client"]
    for method, path, kwargs in SURFACES:
        response = client.request(method, path, headers=[(HEADER.encode(), raw)], **kwargs)
        assert response.status_code == 400, (raw, path, response.status_code)
        assert "Refund overrides" not in response.text and "90 days" not in response.text


def test_two_identity_headers_are_a_400_not_first_one_wins(site):
    client = site["client"]
    for method, path, kwargs in SURFACES:
        response = client.request(method, path, headers=[(b"X-Groups", b"staff"), (b"x-groups", b"public")], **kwargs)
        assert response.status_code == 400 and "appears 2 times" in response.text, (path, response.text[:200])


def test_exact_tokens_with_ascii_blanks_still_work(site):
    client = site["client"]
    assert client.get("/docs/internal/overrides", headers={HEADER: "staff ,\tteam_a,,public"}).status_code == 200
    assert client.get("/docs/internal/overrides", headers={HEADER: "public"}).status_code == 404
    assert client.get("/docs/internal/overrides").status_code == 404


# -- item 5: bounded input; nothing a request sends crashes the process ------------------------------

@pytest.mark.parametrize("count", [65, 1_000, 5_000])
def test_too_many_groups_is_a_clear_400(site, count):
    client = site["client"]
    groups = ",".join(f"g{n}" for n in range(count))
    response = client.post("/api/ask", json={"question": "refunds?"}, headers={HEADER: groups})
    assert response.status_code in (400, 431), response.text[:200]
    if response.status_code == 400:
        assert "the limit is 64" in response.json()["error"]
    alive(client)
    assert client.post("/api/ask", json={"question": "refunds?"}, headers={HEADER: ",".join(f"g{n}" for n in range(63))}).status_code == 200


def test_ten_thousand_groups_cannot_kill_the_server(site):
    client = site["client"]
    groups = ",".join(f"group{n}" for n in range(10_000))  # ~58 KB: segfaulted Chroma's native code
    for method, path, kwargs in SURFACES:
        response = client.request(method, path, headers={HEADER: groups}, **kwargs)
        assert response.status_code in (400, 431), (path, response.status_code)
    alive(client)


def test_a_huge_body_is_a_413_before_it_is_read(site):
    client = site["client"]
    announced = raw_request(site["url"], b"POST /api/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                         b"Content-Length: 419430400\r\n\r\n{\"question\": ")  # 400 MB announced, never sent
    assert announced.startswith(b"HTTP/1.1 413") and b"at most 65,536 bytes" in announced
    padding = b" " * (1024 * 1024)
    sized = client.post("/api/ask", content=b'{"question": "refunds?"' + padding + b"}", headers={"content-type": "application/json"})
    assert sized.status_code == 413

    def chunks():  # no Content-Length: chunked transfer, discovered while reading
        yield b'{"question": "refunds?"'
        for _ in range(64):
            yield b" " * 16_384
        yield b"}"

    chunked = client.post("/api/ask", content=chunks(), headers={"content-type": "application/json"})
    assert chunked.status_code == 413
    form = client.post("/ask", data={"question": "refunds?", "pad": "x" * 200_000})
    assert form.status_code == 413
    alive(client)
    assert client.post("/api/ask", json={"question": "refunds?"}).status_code == 200


def test_megabyte_headers_are_refused(site):
    client = site["client"]
    for headers in ({"X-Junk": "x" * (1024 * 1024)}, {f"X-Pad-{n}": "y" * 1000 for n in range(40)}):
        try:
            response = client.get("/healthz", headers=headers)
        except httpx.HTTPError:  # the server may also drop such a request outright; what matters is that it lives on
            response = None
        assert response is None or response.status_code in (400, 413, 431)
    alive(client)


# -- item 7: /readyz counts only what the caller may read; a CSP fits the UI ---------------------------

def test_readyz_reports_only_what_the_caller_may_read(site):
    client, store = site["client"], site["store"]
    public = client.get("/readyz").json()["chunks"]
    staff = client.get("/readyz", headers={HEADER: "staff"}).json()["chunks"]
    assert public == store.count(groups=["public"]) < staff < store.count()
    assert staff == store.count(groups=["public", "staff"])


def test_every_page_carries_a_csp_the_ui_fits(site):
    client = site["client"]
    for path in ("/", "/docs/guides/retries", "/docs/search?q=retry", "/healthz", "/static/app.js", "/nope"):
        policy = client.get(path).headers["content-security-policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["script-src"] == "'self'" and "unsafe" not in policy
        assert directives["frame-ancestors"] == "'self'" and directives["object-src"] == "'none'"
    page = client.post("/ask", data={"question": "How often are failed deliveries retried?"}).text
    home = client.get("/").text
    for html in (page, home):
        assert not re.search(r"<script(?![^>]*\bsrc=)", html), "inline script would be blocked"
        assert not re.search(r"\son[a-z]+=|\shx-on|javascript:|\sstyle=", html, re.IGNORECASE), "inline handler/style"
        for src in re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html):
            assert src.startswith(("/static/", "data:image/")), src
