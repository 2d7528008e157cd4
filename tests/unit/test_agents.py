"""The MCP endpoint (`/mcp`) and the agents' docs (`/llms.txt`, `/llms-full.txt`, `/docs/<path>.md`) with fakes.

The app is the real one (`create_app`, its middleware and lifespan) over an
in-memory index and a scripted generator; MCP messages are posted as an agent
posts them. The real SDK client against the real server is in
tests/integration/test_agents_live.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from answer.log.ratelimit import Rate
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever
from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.settings import Settings

GROUPS = "X-Groups"
QUOTE = "Refunds are available within 14 days of the charge."
SECRET = "Support leads may approve refunds up to 90 days after purchase."
OVERRIDES = make_chunk("internal/overrides", "approval", SECRET, title="Refund overrides", heading="Approval",
                       access=("staff",))
STAFF_ID = "doc:internal/refund-overrides#approval-limits"  # a staff-only section of content/
MCP = {"accept": "application/json, text/event-stream", "content-type": "application/json",
       "mcp-protocol-version": "2025-06-18"}
LOCAL = "http://127.0.0.1:8000"


def good(handle: str = "c1", quote: str = QUOTE) -> str:
    return json.dumps({"refused": False, "claims": [{"quotes": [{"handle": handle, "quote": quote}],
                                                     "claim": "Refunds are available for 14 days after the charge."}]})


def app_client(*replies: str, chunks=(REFUNDS, OVERRIDES), base_url: str = LOCAL, **settings: Any) -> TestClient:  # noqa: ANN001
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, chunks)
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), ScriptedGenerator(*replies))
    return TestClient(create_app(Settings(**({"identity_header": GROUPS} | settings)), answerer=answerer, store=store),
                      base_url=base_url)


@pytest.fixture
def client():
    with app_client(good(), good(), good()) as c:  # `with`: the app's lifespan runs the MCP task group
        yield c


def rpc(client: TestClient, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
    response = client.post("/mcp", headers=MCP | headers, json={"jsonrpc": "2.0", "id": 1, "method": method,
                                                                 **({"params": params} if params else {})})
    assert response.status_code == 200, response.text
    return response.json()["result"]


def call(client: TestClient, tool: str, **arguments: Any) -> tuple[bool, Any]:
    """(is_error, the structured result or the error's text) of one tool call."""
    headers = arguments.pop("headers", {})
    result = rpc(client, "tools/call", {"name": tool, "arguments": arguments}, **headers)
    if result.get("isError"):
        return True, result["content"][0]["text"]
    return False, result["structuredContent"]


# -- the tools an agent sees --------------------------------------------------------------------------------

def test_the_three_tools_say_when_to_use_them(client):
    tools = {t["name"]: t for t in rpc(client, "tools/list")["tools"]}
    assert set(tools) == {"ask_docs", "search_docs", "read_section"}
    assert "Use this first" in tools["ask_docs"]["description"] and "thread_id" in tools["ask_docs"]["description"]
    assert "read_section" in tools["search_docs"]["description"]
    assert "doc:<page>#<anchor>" in tools["read_section"]["description"]
    assert tools["ask_docs"]["inputSchema"]["required"] == ["question"]
    assert tools["read_section"]["annotations"]["readOnlyHint"] is True


def test_ask_docs_gives_the_apis_verified_answer_with_absolute_deep_links_and_a_thread(client):
    failed, answer = call(client, "ask_docs", question="refund window?")
    assert not failed, answer
    assert answer["outcome"] == "answer" and "reason" not in answer
    cite = answer["claims"][0]["citations"][0]
    assert cite["quote"] == QUOTE and cite["chunk_id"] == REFUNDS.id and cite["title"] == "Refunds"
    assert cite["url"].startswith(f"{LOCAL}/docs/billing/refunds#refund-windows:~:text=")
    assert cite["page_url"] == f"{LOCAL}/docs/billing/refunds#refund-windows"
    assert answer["retrieved"][0]["url"] == f"{LOCAL}/docs/billing/refunds#refund-windows"
    assert answer["thread_id"] and answer["owner_token"]

    failed, follow = call(client, "ask_docs", question="and for annual plans?", thread_id=answer["thread_id"],
                          owner_token=answer["owner_token"])
    assert not failed and follow["thread_id"] == answer["thread_id"]  # the owner's thread, not a fork
    assert "owner_token" not in follow


def test_the_api_and_ask_docs_give_the_same_answer_json():
    with app_client(good(), good()) as c:
        api = c.post("/api/ask", json={"question": "refund window?"}).json()
        failed, tool = call(c, "ask_docs", question="refund window?")
    assert not failed
    same = ("state", "outcome", "degraded", "disagreement", "generator", "asked", "rewritten")
    assert {k: api[k] for k in same} == {k: tool[k] for k in same}
    assert [c["quote"] for c in api["claims"][0]["citations"]] == [c["quote"] for c in tool["claims"][0]["citations"]]


def test_a_refusal_says_why_in_plain_words():
    refused = json.dumps({"refused": True, "claims": []})
    with app_client(refused) as c:
        failed, answer = call(c, "ask_docs", question="refund window?")
    assert not failed and answer["outcome"] == "refused" and answer["claims"] == []
    assert answer["reason"].startswith("Related sections were found")


def test_search_docs_lists_sections_with_ids_links_and_snippets(client):
    failed, found = call(client, "search_docs", query="refunds charge", limit=5)
    assert not failed
    first = found["sections"][0]
    assert first == {"id": REFUNDS.id, "title": "Refunds", "heading_path": ["Refund windows"],
                     "url": f"{LOCAL}/docs/billing/refunds#refund-windows", "snippet": REFUNDS.text}


def test_read_section_gives_the_text_its_link_and_its_neighbours(client):
    failed, section = call(client, "read_section", id="doc:billing/refunds#what-is-not-refundable")
    assert not failed
    assert section["text"].startswith("- Overage charges.") and not section["truncated"]
    assert section["url"] == f"{LOCAL}/docs/billing/refunds#what-is-not-refundable"
    assert section["previous"] == "doc:billing/refunds#refund-policy"
    assert section["next"] == "doc:billing/refunds#how-to-request-a-refund"
    assert section["page_markdown"] == f"{LOCAL}/docs/billing/refunds.md"


# -- access: a restricted section is in no result, title or error ------------------------------------------

def test_an_anonymous_agent_never_sees_a_staff_section_in_any_tool():
    cites_staff = good("c2", SECRET)  # the generator tries to quote the staff chunk
    with app_client(cites_staff, cites_staff) as c:
        _, answer = call(c, "ask_docs", question="who approves refunds after 90 days?")
        _, found = call(c, "search_docs", query="who approves refunds after 90 days", limit=20)
        for leak in ("Support leads", "after purchase", "Refund override", "Approval", "internal/"):
            assert leak not in json.dumps([answer, found])
        failed, missing = call(c, "read_section", id=STAFF_ID)
        _, nothing = call(c, "read_section", id="doc:internal/no-such-page#approval-limits")
        assert failed and missing == nothing.replace("no-such-page", "refund-overrides")  # worded like no such id

        _, staff = call(c, "search_docs", query="who approves refunds after 90 days", limit=20,
                        headers={GROUPS: "staff"})
        staff_failed, section = call(c, "read_section", id=STAFF_ID, headers={GROUPS: "staff"})
    assert OVERRIDES.id in [s["id"] for s in staff["sections"]]  # the same searches find it for staff
    assert not staff_failed and section["title"] == "Refund override procedure"


def test_a_bad_identity_header_is_refused_as_on_every_other_surface(client):
    failed, message = call(client, "search_docs", query="refunds", headers={GROUPS: "staff, ../root"})
    assert failed and "outside the alphabet" in message


# -- abuse bounds --------------------------------------------------------------------------------------------

def test_ask_docs_spends_the_clients_question_budget_shared_with_the_api():
    with app_client(*[good()] * 4, rate_limit=Rate(2, 60.0)) as c:
        assert c.post("/api/ask", json={"question": "refund window?"}).status_code == 200
        assert not call(c, "ask_docs", question="refund window?")[0]
        failed, message = call(c, "ask_docs", question="refund window?")
        assert failed and "Too many questions from your address: the limit is 2/minute." in message
        assert c.post("/api/ask", json={"question": "refund window?"}).status_code == 429
        assert not call(c, "search_docs", query="refunds")[0]  # searching and listing write no answer
        assert len(rpc(c, "tools/list")["tools"]) == 3


@pytest.mark.parametrize(("tool", "arguments", "expected"), [
    ("ask_docs", {"question": "x" * 1001}, "the limit is 1,000"),
    ("ask_docs", {"question": "refunds?", "thread_id": "not-a-thread"}, "was not minted by this server"),
    ("search_docs", {"query": "refunds", "limit": 500}, "limit must be a whole number from 1 to 20"),
    ("search_docs", {"query": "   "}, "please type a question"),
    ("read_section", {"id": "doc:" + "a" * 400}, "no section with id"),
])
def test_arguments_are_bounded_and_the_error_names_the_fix(client, tool, arguments, expected):
    failed, message = call(client, tool, **arguments)
    assert failed and expected in message, message


def test_a_body_past_the_apps_bound_is_refused_before_the_sdk_reads_it(client):
    response = client.post("/mcp", headers=MCP, content=b'{"jsonrpc": "2.0", "padding": "' + b"x" * 70_000 + b'"}')
    assert response.status_code == 413


# -- who may call /mcp -------------------------------------------------------------------------------------

def test_a_page_on_another_site_may_not_drive_the_endpoint(client):
    response = client.post("/mcp", headers=MCP | {"origin": "https://evil.example"},
                           json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 403 and "evil.example" in response.json()["error"]
    same_site = rpc(client, "tools/list", origin=LOCAL)
    assert len(same_site["tools"]) == 3


def test_on_a_loopback_address_an_unknown_host_is_refused_against_dns_rebinding():
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with app_client(base_url="http://rebound.example:8000") as c:
        response = c.post("/mcp", headers=MCP | {"origin": "http://rebound.example:8000"}, json=listing)
    assert response.status_code == 421 and "list that name in MCP_HOSTS" in response.json()["error"]
    for local in ("http://localhost:8000", "http://127.0.0.1", "http://[::1]:8000"):
        with app_client(base_url=local) as c:
            assert len(rpc(c, "tools/list")["tools"]) == 3, local
    # Behind a proxy that passes its public Host: named in MCP_HOSTS, and the SDK's own check agrees.
    with app_client(base_url="https://docs-bot.example.com", mcp_hosts="docs-bot.example.com") as c:
        assert len(rpc(c, "tools/list", origin="https://docs-bot.example.com")["tools"]) == 3
        assert c.post("/mcp", headers=MCP | {"host": "rebound.example"}, json=listing).status_code == 421
    with app_client(base_url="https://docs.example.com", host="0.0.0.0") as c:  # the deployment decides the hosts
        assert len(rpc(c, "tools/list")["tools"]) == 3


def test_get_is_405_the_transport_keeps_no_event_stream_and_no_sessions(client):
    response = client.get("/mcp", headers=MCP)
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    listed = client.post("/mcp", headers=MCP, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert "mcp-session-id" not in listed.headers


# -- llms.txt and the Markdown pages --------------------------------------------------------------------------

def test_llms_txt_names_the_site_tells_agents_how_to_ask_and_lists_public_pages_by_folder(client):
    response = client.get("/llms.txt")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert text.startswith("# Ferrydeck Docs\n\n> Hosted webhook delivery")
    assert f"{LOCAL}/mcp" in text and f"POST {LOCAL}/api/ask" in text and f"{LOCAL}/llms-full.txt" in text
    assert "## billing\n" in text and text.index("## Pages") < text.index("## api") < text.index("## billing")
    assert (f"- [Refunds]({LOCAL}/docs/billing/refunds.md): Refund eligibility for monthly and annual plans"
            in text)
    assert "internal" not in text and "Refund override" not in text and "acme" not in text.lower()


def test_llms_txt_is_public_pages_only_even_for_a_reader_who_may_open_more(client):
    staff = client.get("/llms.txt", headers={GROUPS: "staff"}).text
    assert staff == client.get("/llms.txt").text  # a file programs fetch and paste on: no reader's groups in it
    assert "internal" not in staff and "refund-overrides" not in staff


def test_a_public_page_as_markdown_and_no_other(client):
    page = client.get("/docs/billing/refunds.md")
    assert page.status_code == 200 and page.headers["content-type"] == "text/markdown; charset=utf-8"
    assert page.text.startswith("# Refunds\n\n> Refund eligibility")
    assert f"Source: {LOCAL}/docs/billing/refunds\n" in page.text
    assert "## Refund policy\n" in page.text and "see [Cancellation](" + LOCAL + "/docs/billing/cancellation)" in page.text
    assert "import " not in page.text and "\ue000" not in page.text

    restricted = client.get("/docs/internal/refund-overrides.md")
    missing = client.get("/docs/internal/no-such-page.md")
    assert restricted.status_code == missing.status_code == 404
    assert restricted.text.replace("refund-overrides", "X") == missing.text.replace("no-such-page", "X")
    assert client.get("/docs/internal/refund-overrides.md", headers={GROUPS: "staff"}).status_code == 404
    assert client.get("/docs/internal/refund-overrides", headers={GROUPS: "staff"}).status_code == 200  # the viewer
    assert client.get("/docs/index.md").text.startswith("# Ferrydeck documentation")


def test_llms_full_txt_holds_every_public_page_and_no_other(client):
    text = client.get("/llms-full.txt").text
    assert text.startswith("# Ferrydeck Docs\n")
    assert f"Source: {LOCAL}/docs/billing/refunds\n" in text and f"Source: {LOCAL}/docs/guides/retries\n" in text
    assert "internal/" not in text and "Approval limits" not in text
    assert "Approval limits" not in client.get("/llms-full.txt", headers={GROUPS: "staff"}).text


def test_a_refusal_names_the_words_no_section_found_uses_as_the_chat_page_does():
    from types import SimpleNamespace

    from web.agents import reason_for

    refused = SimpleNamespace(outcome="refused", model_unavailable=False, retrieval=SimpleNamespace(hits=(object(),)),
                              state="refused", unmentioned=("Terraform", "provider"),
                              question="Is there a Terraform provider?")
    assert reason_for(refused).endswith(" None of the docs sections found mentions “Terraform” or “provider”.")
    assert reason_for(SimpleNamespace(**{**vars(refused), "unmentioned": ()})).endswith("none of them answers this.")
    spanish = SimpleNamespace(**{**vars(refused), "question": "¿Hay un proveedor de Terraform para esto?",
                                 "unmentioned": ("proveedor", "esto")})
    assert reason_for(spanish).endswith(" This question looks like Spanish; the docs are searched in English, so "
                                        "asking in English may find the answer.")
    nothing = SimpleNamespace(**{**vars(spanish), "retrieval": SimpleNamespace(hits=())})
    assert reason_for(nothing) == ("No docs section matched this question. This question looks like Spanish; the docs "
                                   "are searched in English, so asking in English may find the answer.")
