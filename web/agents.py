"""Coding agents as readers: an MCP server at `/mcp` whose tools answer with verified quotes.

More and more readers of a docs site are coding assistants fetching answers
for a developer. `/mcp` speaks the Model Context Protocol (the official SDK,
streamable HTTP) inside this same app and process, with three tools:
`ask_docs` (the verified answer `POST /api/ask` gives, through the same code),
`search_docs` (the chat's hybrid retrieval, sections only) and `read_section`
(one section by its `doc:slug#anchor` id, to read around a quote).

Every tool call is an HTTP request through the app's middleware (body and
header bounds, request ids, metrics) and reads the same typed state as the
other handlers: the reader's groups come from IDENTITY_HEADER, so a section
the reader may not open is in no result, title or error (an id of one reads
as an id that does not exist), and `ask_docs` spends the client's question
budget (RATE_LIMIT) like `POST /api/ask`.

The transport is stateless with JSON replies: nothing about an agent lives in
this process's memory, so any worker or replica answers any call (threads go
through `thread_id`, as in the API). A browser page on another site may not
drive it (the same Origin rule as the answer-creating routes), and a server
bound to a loopback address also checks Host, which is what stops a DNS
rebinding page from reaching a developer's local server; a reverse proxy that
passes its public Host has that name listed in MCP_HOSTS.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from starlette.requests import Request
from starlette.responses import JSONResponse

from answer.contract.record import NO_ANSWER, RELATED, UNVERIFIED
from answer.contract.result import Answer
from ingest.documents import Chunk
from retrieval.search import RetrievalSet

from . import api
from .budgets import Budgets
from .failures import failure
from .guarded import ASK
from .limits import MAX_BODY_BYTES
from .llms_txt import origin_of, site_address
from .origin import cross_site
from .questions import read_question
from .render import refusal_note, unmentioned_sentence
from .state import AppState, state_of

PATH = "/mcp"
MAX_RESULTS = 20  # search_docs' limit, like the docs search page's
DEFAULT_RESULTS = 5
MAX_ID_CHARS = 300
MAX_SECTION_CHARS = 12_000  # a section is ~800 characters of prose; a whole code block can be longer, not this long
SNIPPET_CHARS = 280
LOOPBACK = ("127.0.0.1", "localhost", "::1")

INSTRUCTIONS = (
    "Answers about this documentation site, grounded in it. Prefer ask_docs for a question: its answer is made of "
    "verbatim quotes from the docs that were checked in code, each with a deep link to its heading; quote them "
    "with their links, and treat outcome 'related' as not answering the question directly and 'refused' as 'the "
    "docs do not say'. Use search_docs to find sections by topic, and read_section to read one in full.")
ASK_DOCS = (
    "Ask the documentation a question in plain words. Use this first whenever the user's question is about this "
    "product or its docs. Returns `outcome`: 'answer' (the claims answer the question), 'related' (verified quotes "
    "from the closest sections; the docs do not say it directly) or 'refused' (not in the docs); for both, `reason` "
    "says why, and `unmentioned` lists the question's words no section found uses, when that is why. Each claim has "
    "`citations`, each a verbatim `quote` with its deep link `url` (to the heading, with a text fragment), `title` and `heading_path`; `retrieved` lists the sections looked at. For a follow-up, pass back "
    "`thread_id` and `owner_token` from the previous result.")
SEARCH_DOCS = (
    "Find documentation sections about a topic (the same search the chat uses, meaning and keywords). Use it to "
    "browse or to find where something is documented; use ask_docs for an answer. Returns sections with `id`, "
    "`title`, `heading_path`, deep link `url` and a `snippet`; pass an `id` to read_section for its full text.")
READ_SECTION = (
    "Read one documentation section in full by its id (`doc:<page>#<anchor>`, as ask_docs' citations "
    "(`chunk_id`) and search_docs' results give it), e.g. to read around a quote. Returns its `text`, `title`, "
    "`heading_path`, deep link `url`, and the ids of the sections before and after it on the page.")

_T = TypeVar("_T")


def mcp_server(budgets: Budgets) -> MCPServer:
    """The MCP server and its three tools; each call reads the app's state from the HTTP request it came in."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server: MCPServer = MCPServer("docs", instructions=INSTRUCTIONS)
    root.handlers[:], root.level = handlers, level  # the SDK's constructor configures logging; web/logs.py owns it

    @server.tool(description=ASK_DOCS, annotations=ToolAnnotations(title="Ask the docs", open_world_hint=False))
    async def ask_docs(ctx: Context, question: str, thread_id: str | None = None, owner_token: str | None = None,
                       version: str | None = None) -> dict[str, object]:
        request = request_of(ctx)
        refused = await asyncio.to_thread(budgets.spend, ASK, request.scope)
        if refused is not None:
            raise ToolError(refused[0].message)
        answer, reply = await _worded(api.ask(request, {"question": question, "thread_id": thread_id,
                                                        "owner_token": owner_token, "version": version}))
        return agent_answer(answer, reply, origin_of(request))

    @server.tool(description=SEARCH_DOCS, annotations=ToolAnnotations(
        title="Search the docs", read_only_hint=True, open_world_hint=False))
    async def search_docs(ctx: Context, query: str, limit: int = DEFAULT_RESULTS,
                          version: str | None = None) -> dict[str, object]:
        request = request_of(ctx)
        return await _worded(search(state_of(request), request, query, limit, version))

    @server.tool(description=READ_SECTION, annotations=ToolAnnotations(
        title="Read a docs section", read_only_hint=True, open_world_hint=False))
    async def read_section(ctx: Context, id: str) -> dict[str, object]:  # `id`: the name agents see
        request = request_of(ctx)
        return await _worded(section(state_of(request), request, id))

    return server


def request_of(ctx: Context) -> Request:
    """The HTTP request a tool call came in (the tools answer over `/mcp` only)."""
    request = ctx.request_context.request
    if not isinstance(request, Request):
        raise ToolError("this tool answers over the server's /mcp endpoint only")
    return request


async def _worded(call: Awaitable[_T]) -> _T:
    """The call's result, or its failure as `failures` words it for every surface (logged there, once)."""
    try:
        return await call
    except ToolError:
        raise
    except Exception as exc:
        raise ToolError(failure(exc, PATH).message) from exc


# -- ask_docs ---------------------------------------------------------------------------------------------

NOTHING_MATCHED = "No docs section matched this question."
NONE_ANSWERS = "Related sections were found (see `retrieved`), but none of them answers this."
NOT_VERIFIED = "Related sections were found (see `retrieved`), but no answer could be verified in them."
MODEL_DOWN = "The answer could not be written right now (the model could not be reached); ask again later."
CLOSEST = "The docs don't say this directly; these passages are the closest."


def agent_answer(answer: Answer, reply: Mapping[str, object], origin: str) -> dict[str, object]:
    """The API's answer JSON for an agent: its links absolute, and in plain words why it is not an answer."""
    data = dict(reply)
    data["claims"] = [claim | {"citations": [_absolute(c, origin, "url", "page_url") for c in _dicts(claim.get("citations"))]}
                      for claim in _dicts(reply.get("claims"))]
    data["retrieved"] = [_absolute(s, origin, "url") for s in _dicts(reply.get("retrieved"))]
    reason = reason_for(answer)
    if reason:
        data["reason"] = reason
    return data


def reason_for(answer: Answer) -> str:
    """Why an answer is not an Answer, as the chat page says it ("" for an Answer)."""
    if answer.outcome == RELATED:
        return f"{CLOSEST} {unmentioned_sentence(answer.unmentioned)}".rstrip()
    if answer.outcome != NO_ANSWER:
        return ""
    if answer.model_unavailable:
        return MODEL_DOWN
    if not answer.retrieval.hits:
        return f"{NOTHING_MATCHED} {refusal_note(answer.question, ())}".rstrip()
    if answer.state == UNVERIFIED:
        return NOT_VERIFIED
    return f"{NONE_ANSWERS} {refusal_note(answer.question, answer.unmentioned)}".rstrip()


def _dicts(value: object) -> list[dict[str, object]]:
    return [dict(v) for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _absolute(item: dict[str, object], origin: str, *keys: str) -> dict[str, object]:
    return item | {k: site_address(v, origin) for k in keys if isinstance(v := item.get(k), str)}


# -- search_docs and read_section ---------------------------------------------------------------------------

async def search(state: AppState, request: Request, query: object, limit: object,
                 version: object) -> dict[str, object]:
    """Sections for `query` by the chat's retrieval, for this request's reader."""
    text = read_question(query)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_RESULTS:
        raise ToolError(f"limit must be a whole number from 1 to {MAX_RESULTS}, got {limit!r}")
    viewer = state.viewer(request)
    wanted = state.version(version)
    answerer = await asyncio.to_thread(lambda: state.services.answerer)
    found: RetrievalSet = await asyncio.to_thread(answerer.retriever.search, text, viewer, k=limit, version=wanted)
    origin = origin_of(request)
    return {"query": text, "sections": [section_summary(hit.chunk, origin) for hit in found.hits
                                        if viewer.may_read(hit.chunk.access)]}


def section_summary(chunk: Chunk, origin: str) -> dict[str, object]:
    return {"id": chunk.id, "title": chunk.title, "heading_path": list(chunk.heading_path),
            "url": site_address(chunk.url, origin), "snippet": snippet(chunk.text)}


def snippet(text: str, width: int = SNIPPET_CHARS) -> str:
    """The section's opening words, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    return flat[:width].rsplit(" ", 1)[0] + " …"


async def section(state: AppState, request: Request, section_id: object) -> dict[str, object]:
    """One section by id, for a reader who may open it; any other id reads as one that does not exist."""
    viewer = state.viewer(request)
    corpus = await asyncio.to_thread(lambda: state.services.docs.corpus)
    wanted = section_id if isinstance(section_id, str) else ""
    shown = wanted if len(wanted) <= 80 else wanted[:80] + "…"
    missing = ToolError(f"no section with id {shown!r}: ids look like doc:billing/refunds#refund-windows, as "
                        "search_docs' results and ask_docs' citations (chunk_id) give them")
    if not wanted.startswith("doc:") or len(wanted) > MAX_ID_CHARS:
        raise missing
    page = corpus.page(wanted[4:].split("#", 1)[0])
    if page is None or not viewer.may_read(page.access):
        raise missing
    chunks = [c for c in corpus.page_chunks.get(page.source, ()) if viewer.may_read(c.access)]
    at = next((k for k, c in enumerate(chunks) if c.id == wanted), None)
    if at is None:
        raise missing
    chunk = chunks[at]
    text = chunk.text if len(chunk.text) <= MAX_SECTION_CHARS else chunk.text[:MAX_SECTION_CHARS]
    origin = origin_of(request)
    return {"id": chunk.id, "title": chunk.title, "heading_path": list(chunk.heading_path),
            "url": site_address(chunk.url, origin), "doc_version": chunk.doc_version, "text": text,
            "truncated": len(text) < len(chunk.text),
            "previous": chunks[at - 1].id if at > 0 else None,
            "next": chunks[at + 1].id if at + 1 < len(chunks) else None,
            "page_markdown": f"{origin}/docs/{page.slug.strip('/') or 'index'}.md"}


# -- the endpoint -------------------------------------------------------------------------------------------

def answered_hosts(bind: str, configured: str) -> frozenset[str] | None:
    """The Host names `/mcp` answers on, or None for any: the loopback names on a loopback bind, and MCP_HOSTS.

    A developer's server on 127.0.0.1 must not answer a page whose own name
    was rebound to 127.0.0.1 (DNS rebinding: the browser then sends that name
    as Host and as Origin, and the page looks same-origin). Bound elsewhere
    with no MCP_HOSTS, the names that reach the server are the deployment's
    business, and other sites' pages are still refused by Origin.
    """
    extra = {h.strip().lower().strip("[]") for h in configured.split() if h.strip()}
    if bind not in LOOPBACK and not extra:
        return None
    return frozenset({name.strip("[]") for name in LOOPBACK} | extra)


def transport_security(hosts: frozenset[str] | None) -> TransportSecuritySettings:
    """The SDK's own Host and Origin checks, given the same names (any port)."""
    if hosts is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = sorted(f"[{h}]" if ":" in h else h for h in hosts)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=names + [f"{h}:*" for h in names],
                                     allowed_origins=[f"{scheme}://{h}{port}" for scheme in ("http", "https")
                                                      for h in names for port in ("", ":*")])


def host_name(scope: Any) -> str:
    """The name the request's Host header gives, lower-case, without port or IPv6 brackets ("" when unreadable)."""
    raw = next((v for k, v in scope.get("headers") or [] if k.lower() == b"host"), b"")
    try:
        return (urlsplit("//" + raw.decode("latin-1")).hostname or "").lower()
    except ValueError:
        return ""


class AgentEndpoint:
    """`/mcp`: POST only; refuses another site's page (403, as the answer-creating routes do) and a Host it does not
    answer on (421, naming MCP_HOSTS), then hands over to the SDK's stateless transport."""

    def __init__(self, server: MCPServer, *, bind: str, hosts: str, origins: frozenset[str]) -> None:
        self.hosts = answered_hosts(bind, hosts)
        server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True,
                                   max_request_body_size=MAX_BODY_BYTES, transport_security=transport_security(self.hosts))
        self.sessions: StreamableHTTPSessionManager = server.session_manager
        self.origins = origins

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("method") != "POST":
            # Stateless: a GET would open an event stream nothing is ever sent on, held until the client leaves
            # (the spec lets a server without one answer 405), and there is no session to DELETE.
            await _error(405, f"{PATH} takes MCP messages as POST requests (streamable HTTP, no event stream, no "
                              "sessions)", scope, receive, send, {"Allow": "POST"})
            return
        name = host_name(scope)
        if self.hosts is not None and name not in self.hosts:
            await _error(421, f"{PATH} does not answer on the host {name[:100]!r} (only on "
                              f"{', '.join(sorted(self.hosts))}): behind a reverse proxy that passes its public Host, "
                              "list that name in MCP_HOSTS", scope, receive, send)
            return
        why = cross_site({k.lower(): v for k, v in scope.get("headers") or []}, self.origins)
        if why is not None:
            await _error(403, why, scope, receive, send)
            return
        await self.sessions.handle_request(scope, receive, send)

    def lifespan(self) -> Callable[[Any], contextlib.AbstractAsyncContextManager[None]]:
        """The app's lifespan: the SDK's task group runs for as long as the app serves."""

        @contextlib.asynccontextmanager
        async def running(app: Any) -> AsyncIterator[None]:
            async with self.sessions.run():
                yield

        return running



async def _error(status: int, message: str, scope: Any, receive: Any, send: Any,
                 headers: Mapping[str, str] | None = None) -> None:
    await JSONResponse({"error": message}, status_code=status, headers=dict(headers or {}))(scope, receive, send)
