"""The visitor's pages: the chat page, the streamed answer, a thread's turns, the docs viewer and docs search.

Every handler reads the app's typed state (`state_of`); failures are worded by
`failures.failure`, whether they end a page, an API call or a stream.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

from starlette.concurrency import iterate_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse

from answer.contract.result import Answer
from answer.pipeline import Done, Retrieved, Shown, Writing
from retrieval.search import RetrievalSet
from retrieval.viewer import Viewer

from . import render
from .docsearch import search_docs
from .failures import failure
from .looked import looked_at
from .owner import Owner, read_owner, remember
from .questions import QuestionError, read_question
from .state import AppState, state_of
from .stream import sse
from .thread_ids import ThreadIdError

HERE = Path(__file__).parent


def chat_page(request: Request, thread_id: str | None, viewer: Viewer, version: str | None, latest: Answer | None = None,
              asked: str = "") -> Response:
    state = state_of(request)
    turns = state.thread_views(thread_id, viewer) if thread_id else []
    if latest is not None and all(t.answer_id != latest.id for t in turns):
        turns.append(state.view(latest, None, asked))  # the thread could not be stored: the answer is still shown
    return state.page(request, "index.html", {
        "turns": turns, "suggestions": [] if turns else state.services.docs.suggestions(), "version": version,
        "thread_id": thread_id if turns else ""})


async def index(request: Request) -> Response:
    state = state_of(request)
    version = state.version(request.query_params.get("version"))
    thread_id = await _named_thread(state, request.query_params.get("thread"))
    return await asyncio.to_thread(chat_page, request, thread_id, state.viewer(request), version)


async def _named_thread(state: AppState, given: str | None, *, may_start: bool = False) -> str | None:
    """The thread a request names, checked off the event loop (`Threads.named`: a ThreadIdError is a 400)."""
    return await asyncio.to_thread(state.services.threads.named, given, may_start=may_start)


async def ask(request: Request) -> Response:
    state = state_of(request)
    form = await request.form()
    viewer = state.viewer(request)
    version = state.version(form.get("version"))
    owner = read_owner(request)
    try:
        question = read_question(form.get("question"))
        thread_id = await asyncio.to_thread(state.services.threads.follow, form.get("thread_id"), viewer, owner.token)
    except (QuestionError, ThreadIdError) as exc:
        response = state.error_page(request, failure(exc, request.url.path), full=not request.headers.get("HX-Request"))
        if request.headers.get("HX-Request"):  # shown under the composer, gone with the next question
            response.headers.update({"HX-Retarget": "#ask-error", "HX-Reswap": "innerHTML"})
        return response
    response = await _asked(request, question, thread_id, viewer, version, owner.token)
    remember(response, owner, request)
    return response


async def _asked(request: Request, question: str, thread_id: str, viewer: Viewer, version: str | None, owner: str) -> Response:
    """The page for a question put into a thread: the streaming shell for htmx, else the whole page with its answer."""
    state = state_of(request)
    if request.headers.get("HX-Request"):
        turn = uuid.uuid4().hex[:12]
        url = "/ask/stream?" + urlencode({"question": question, "turn": turn, "thread": thread_id}
                                         | ({"version": version} if version else {}))
        response = state.templates.TemplateResponse(request, "_pending.html", {
            "turn_id": turn, "question": question, "stream_url": url, "thread_id": thread_id})
        response.headers["HX-Replace-Url"] = "/?" + urlencode({"thread": thread_id} | ({"version": version} if version else {}))
        return response
    answer, _ = await state.answer_in_thread(question, thread_id, viewer, version, owner)
    return await asyncio.to_thread(chat_page, request, thread_id, viewer, version, answer, question)


async def ask_stream(request: Request) -> Response:
    """The answer as server-sent events: the thread, what was looked at, each verified claim, then the finished turn.

    `thread` is an id this server minted, `new`, or absent (no thread); any
    other id is a 400 before the stream starts. A visitor with no owner token
    (the widget's first question) gets one in an `owner` event before `thread`.
    """
    state = state_of(request)
    context = state.context(request)
    params = request.query_params
    turn = render.client_turn_id(params.get("turn"), uuid.uuid4().hex[:12])
    asked = str(params.get("question") or "")
    named = await _named_thread(state, params.get("thread"), may_start=True)
    owner = read_owner(request, params.get("owner"))

    def failed(message: str, retry: bool = True) -> str:
        return state.fragment("_failed.html", context | {
            "turn_id": turn, "question": asked, "message": message, "retry": retry, "thread_id": named or ""})

    async def events() -> AsyncIterator[str]:
        if request.headers.get("last-event-id"):  # a reconnect: the answer was cut off; never replay a question
            yield sse("done", failed("The connection dropped before the answer was complete."), 1)
            return
        try:
            async for event in _answer_events(state, request, context, turn, named, owner):
                yield event
        except Exception as exc:
            problem = failure(exc, request.url.path)
            yield sse("done", failed(problem.message, problem.retry), 1)

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def _answer_events(state: AppState, request: Request, context: dict[str, object], turn: str, named: str | None,
                         owner: Owner) -> AsyncIterator[str]:
    """The events of one turn (`turn`: its id on the page) in the thread `named` (None: no thread is kept)."""
    services, params = state.services, request.query_params
    question = read_question(params.get("question"))
    await asyncio.to_thread(services.docs.check_index)
    viewer = state.viewer(request)
    answerer = await asyncio.to_thread(lambda: services.answerer)
    thread = await asyncio.to_thread(services.threads.fork, named, viewer, owner.token) if named else None
    if thread:
        if owner.minted:  # the widget keeps it and sends it back as `owner=`; the chat page has its cookie
            yield sse("owner", owner.token, 0)
        yield sse("thread", thread, 0)
    version = state.version(params.get("version"))
    rewritten = await asyncio.to_thread(services.rewrite, question, thread, viewer, version)
    rset: RetrievalSet | None = None
    number, claims = 0, 0
    numbers = render.ChipNumbers()  # the turn's chip labels, in reading order across its claim events
    site = services.docs.corpus.site
    async for event in iterate_in_threadpool(answerer.events(rewritten.question, viewer, version=version)):
        number += 1
        if isinstance(event, Retrieved):
            rset = event.retrieval
            yield sse("retrieved", state.fragment("_looked_at.html", context | {
                "looked": looked_at(rset, site), "searched": rewritten.question if rewritten.shown else ""}), number)
        elif isinstance(event, Shown) and rset is not None:
            claims += 1
            claim = render.claim_view(event.claim, rset, site, turn, claims, numbers)
            if claim is not None:
                yield sse("claim", state.fragment("_claim.html", context | {"claim": claim}), number)
        elif isinstance(event, Writing):
            yield sse("writing", state.fragment("_writing.html", context), number)
        elif isinstance(event, Done):
            services.threads.cache.put(event.answer)
            if thread:
                await asyncio.to_thread(services.threads.add, thread, event.answer, question, owner.token)
            asked_next = await asyncio.to_thread(services.next_questions, event.answer, viewer)
            view = state.view(event.answer, turn, question, next_questions=asked_next)
            yield sse("done", state.fragment("_turn.html", context | {"view": view}), number)


async def thread_fragment(request: Request) -> Response:
    """A thread's turns as HTML for this viewer: the widget shows its conversation again after a page change."""
    state = state_of(request)
    thread_id = await _named_thread(state, request.query_params.get("thread"))
    views = await asyncio.to_thread(state.thread_views, thread_id, state.viewer(request)) if thread_id else []
    context = state.context(request)
    return HTMLResponse("".join(state.fragment("_turn.html", context | {"view": v}) for v in views),
                        headers={"Cache-Control": "no-store"})


@functools.cache
def widget_script() -> bytes:
    """turn.js (shared with the chat page) and widget.js as one script, inside one function so the host page
    gains no global; the embed stays a single script tag."""
    static = HERE / "static"
    return b"(function () {\n" + (static / "turn.js").read_bytes() + (static / "widget.js").read_bytes() + b"})();\n"


async def widget(request: Request) -> Response:
    """The embeddable widget at a short, stable address (the docs site's script tag points here)."""
    return Response(widget_script(), media_type="text/javascript", headers={"Cache-Control": "public, max-age=300"})


async def docs(request: Request) -> Response:
    from ingest.page_html import render_html

    state = state_of(request)
    corpus = state.services.docs.corpus
    slug = request.path_params.get("path", "").strip("/") or "index"
    await asyncio.to_thread(state.services.docs.check_index)
    page = corpus.page(slug)
    access = await asyncio.to_thread(state.services.docs.page_access, slug) if page is not None else None
    viewer = state.viewer(request)
    if page is None or access is None or not viewer.may_read(page.access) or not viewer.may_read(access):
        raise HTTPException(404, f"no page at /docs/{slug}")  # by the index and by the file: the stricter wins
    body = render_html(page, link_base=viewer_link_base(corpus.site.base_url))
    return state.page(request, "doc.html", {"page": page, "body": body})


async def docs_search(request: Request) -> Response:
    state = state_of(request)
    query = " ".join(str(request.query_params.get("q", "")).split())[:200]
    await asyncio.to_thread(state.services.docs.check_index)
    chunks = await asyncio.to_thread(lambda: state.services.docs.chunks) if query else []
    results = search_docs(chunks, query, state.viewer(request)) if query else []
    return state.page(request, "search.html", {"query": query, "results": results})


def viewer_link_base(base_url: str) -> str:
    """The prefix for links inside the bundled docs viewer: the site's own base URL, or /docs when pages live elsewhere."""
    return base_url if not base_url.startswith(("http://", "https://")) else "/docs"
