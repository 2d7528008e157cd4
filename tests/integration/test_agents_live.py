"""A real MCP client (the SDK's own streamable-HTTP client) against the real app under uvicorn.

A small site with a staff-only page, indexed with the real model into an
embedded Chroma and answered by the hybrid retriever and the extractive
generator, as `make serve` answers. Each test is its own client address
(a trusted X-Forwarded-For), so each spends its own question budget.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from answer.generate import ExtractiveGenerator
from answer.log.ratelimit import Rate
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.services import open_retriever
from retrieval.store import ChromaStore
from tests.chroma_server import write_site
from web.app import create_app
from web.server import server_options
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

GROUPS, PROXY = "X-Groups", "X-Forwarded-For"
LIMIT = 3
QUESTION = "How many times is a failed delivery retried?"
STAFF_QUESTION = "Who may approve refunds up to 90 days after purchase?"
STAFF_TEXT = "Support leads may approve refunds up to 90 days after purchase."


@pytest.fixture(scope="module")
def site(tmp_path_factory, real_embedder):
    root = write_site(tmp_path_factory.mktemp("site"))  # has internal/overrides.mdx, `access: [staff]`
    data = tmp_path_factory.mktemp("data")
    store = ChromaStore(path=str(data / "chroma"))
    sync_index(load_corpus(root), store, real_embedder)
    settings = Settings(content_dir=root, data_dir=data, identity_header=GROUPS, rate_limit=Rate(LIMIT, 60.0),
                        trusted_proxy_header=PROXY)
    answerer = Answerer(open_retriever(settings, store=store, embedder=real_embedder),
                        ExtractiveGenerator(real_embedder), audit=SQLiteAnswerLog(settings.audit_path))
    with serve(create_app(settings, answerer=answerer, store=store), **server_options(settings)) as url:
        yield url


async def session(url: str, address: str, groups: str, work: Any) -> Any:
    """Run `work(client)` with the SDK's client connected to `url`/mcp as client `address` with `groups`."""
    headers = {PROXY: address} | ({GROUPS: groups} if groups else {})
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http, \
            Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
        return await work(client)


def run(url: str, address: str, work: Any, groups: str = "") -> Any:
    # On a thread of its own: the browser tests' sync Playwright leaves an event loop running on this one
    # for the rest of the session, and asyncio.run refuses to start a second.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, session(url, address, groups, work)).result()


def result(called: Any) -> tuple[bool, Any]:
    """(is_error, the structured result or the error's text)."""
    if called.is_error:
        return True, called.content[0].text
    return False, called.structured_content


def test_the_sdk_client_lists_the_three_tools_and_gets_a_verified_answer_with_deep_links(site):
    async def work(client: Client) -> Any:
        tools = await client.list_tools()
        return [t.name for t in tools.tools], result(await client.call_tool("ask_docs", {"question": QUESTION}))

    names, (failed, answer) = run(site, "203.0.113.10", work)
    assert sorted(names) == ["ask_docs", "read_section", "search_docs"]
    assert not failed, answer
    assert answer["outcome"] == "answer", answer
    cites = [c for claim in answer["claims"] for c in claim["citations"]]
    assert any("8 times" in c["quote"] for c in cites)
    first = next(c for c in cites if "8 times" in c["quote"])
    assert first["url"].startswith(f"{site}/docs/guides/retries#retry-schedule:~:text=")
    assert first["title"] == "Retries" and first["heading_path"][-1] == "Retry schedule"
    assert first["chunk_id"] == "doc:guides/retries#retry-schedule"
    # The deep link lands on the heading the viewer renders, and the cited section reads back in full.
    page = httpx.get(first["page_url"].split("#")[0], timeout=30).text
    assert 'id="retry-schedule"' in page

    async def follow(client: Client) -> Any:
        return result(await client.call_tool("read_section", {"id": first["chunk_id"]}))

    failed, section = run(site, "203.0.113.10", follow)
    assert not failed and first["quote"] in section["text"] and section["next"] == "doc:guides/retries#backoff"


def test_a_staff_only_section_is_in_no_tool_result_for_an_anonymous_client(site):
    async def work(client: Client) -> Any:
        asked = result(await client.call_tool("ask_docs", {"question": STAFF_QUESTION}))
        found = result(await client.call_tool("search_docs", {"query": "refund overrides support leads", "limit": 20}))
        read = result(await client.call_tool("read_section", {"id": "doc:internal/overrides#refund-overrides"}))
        return asked, found, read

    (_, asked), (_, found), (read_failed, read) = run(site, "203.0.113.11", work)
    assert asked["outcome"] in ("refused", "related", "answer")
    shown = json.dumps([asked, found])
    for leak in ("Support leads", "Refund overrides", "internal/overrides", "90 days after purchase."):
        assert leak not in shown, leak
    assert read_failed and "no section with id" in read and "Support leads" not in read

    staff_found = run(site, "203.0.113.12", lambda c: c.call_tool(
        "search_docs", {"query": "refund overrides support leads", "limit": 20}), groups="staff")
    assert "doc:internal/overrides#refund-overrides" in [s["id"] for s in result(staff_found)[1]["sections"]]
    staff_read = run(site, "203.0.113.12", lambda c: c.call_tool(
        "read_section", {"id": "doc:internal/overrides#refund-overrides"}), groups="staff")
    assert STAFF_TEXT in result(staff_read)[1]["text"]


def test_the_rate_limit_applies_to_ask_docs(site):
    async def work(client: Client) -> Any:
        answers = [result(await client.call_tool("ask_docs", {"question": QUESTION})) for _ in range(LIMIT + 1)]
        listed = await client.list_tools()
        return answers, len(listed.tools)

    answers, tools = run(site, "203.0.113.13", work)
    assert [failed for failed, _ in answers] == [False] * LIMIT + [True]
    assert "Too many questions from your address: the limit is 3/minute." in answers[-1][1]
    assert tools == 3  # listing the tools costs nothing
    with httpx.Client(base_url=site, headers={PROXY: "203.0.113.13"}, timeout=60) as http:
        assert http.post("/api/ask", json={"question": QUESTION}).status_code == 429  # one budget for both


def test_llms_txt_lists_public_pages_only(site):
    listing = httpx.get(f"{site}/llms.txt", timeout=30)
    assert listing.status_code == 200
    assert f"- [Retries]({site}/docs/guides/retries.md)" in listing.text
    assert f"- [Refunds]({site}/docs/billing/refunds.md)" in listing.text
    assert "Refund overrides" not in listing.text and "internal" not in listing.text
    assert f"{site}/mcp" in listing.text
    assert httpx.get(f"{site}/docs/internal/overrides.md", timeout=30).status_code == 404
    assert STAFF_TEXT not in httpx.get(f"{site}/llms-full.txt", timeout=30).text
    staff = httpx.get(f"{site}/docs/internal/overrides.md", headers={GROUPS: "staff"}, timeout=30)
    assert staff.status_code == 404 and STAFF_TEXT not in staff.text  # public pages only, whoever asks
    assert "Refund overrides" not in httpx.get(f"{site}/llms.txt", headers={GROUPS: "staff"}, timeout=30).text


def test_llms_txt_parses_as_the_format_says(site):
    """llmstxt.org: one H1, a blockquote summary, then H2 sections whose items are Markdown links."""
    lines = [line for line in httpx.get(f"{site}/llms.txt", timeout=30).text.splitlines() if line.strip()]
    assert lines[0].startswith("# ") and lines[1].startswith("> ")
    assert sum(line.startswith("# ") for line in lines) == 1
    first_section = next(n for n, line in enumerate(lines) if line.startswith("## "))
    assert all(not line.startswith(("- ", "## ")) for line in lines[2:first_section])  # prose before the sections
    items = [line for line in lines[first_section:] if not line.startswith("## ")]
    assert items and all(re.fullmatch(r"- \[[^\]]+\]\(https?://[^)\s]+\.md\)(: .+)?", line) for line in items), items
    for line in items:
        url = re.search(r"\((https?://[^)]+)\)", line).group(1)
        assert httpx.get(url, timeout=30).status_code == 200, url
