"""The web app: chat page, streamed answers, JSON API, docs viewer and audit view (starlette + jinja2 + htmx).

`create_app(settings, *, answerer=None, store=None, corpus=None)` wires
dependencies so tests inject their own; the real ones are built lazily on first
use and kept warm for the life of the process. Viewer identity comes only from
the configured mechanism (a trusted proxy header when IDENTITY_HEADER is set),
never from anything a visitor can choose.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.concurrency import iterate_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from answer.pipeline import Answerer
from ingest.corpus import Corpus
from ingest.settings import Settings
from retrieval.errors import IndexMismatchError, QueryError, StoreUnavailableError
from retrieval.protocols import Store
from retrieval.viewer import Viewer

from . import render
from .api import post_feedback, read_json
from .cors import CORS, allowed_origins
from .docsearch import search_docs
from .identity import IdentityError, read_viewer
from .limits import InputLimits
from .looked import looked_at
from .questions import QuestionError, read_question
from .security import SecurityHeaders, content_security_policy, frame_ancestors
from .services import Services
from .staff import staff_routes
from .stream import sse
from .thread import new_thread_id, thread_id

HERE = Path(__file__).parent
log = logging.getLogger(__name__)
UNAVAILABLE = "The docs index is unavailable right now. Please try again in a moment."


def viewer_for(request: Request) -> Viewer:
    """The viewer's groups from the trusted identity header, or anonymous when none is configured.

    Raises IdentityError (a 400) for a header that is repeated, not ASCII, or names a group outside the alphabet.
    """
    header = request.app.state.services.settings.identity_header
    if not header:
        return Viewer.anonymous()
    return read_viewer(header, request.scope.get("headers") or [])


def create_app(
    settings: Settings, *, answerer: Answerer | None = None, store: Store | None = None, corpus: Corpus | None = None
) -> Starlette:
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["inline_code"] = render.inline_code
    services = Services(settings, answerer, store, corpus)
    policy = settings.unverified_policy

    def base(request: Request) -> dict[str, Any]:
        return {"site": services.corpus.site, "staff": settings.staff_group in viewer_for(request).groups}

    def view(answer: Any, tid: str | None = None, asked: str = "") -> render.TurnView:
        return render.turn_view(answer, services.corpus.site, tid or answer.id, policy, asked=asked)

    def thread_views(tid: str, viewer: Viewer) -> list[Any]:
        """The thread's turns as this viewer may see them (rebuilt for their groups, or withheld)."""
        return [view(t.answer, None, t.asked) if t.answer is not None else render.withheld_view(t)
                for t in services.threads.turns(tid, viewer)]

    def page(request: Request, tid: str | None, viewer: Viewer, version: str | None, latest: Any = None,
             asked: str = "") -> Response:
        turns = thread_views(tid, viewer) if tid else []
        if latest is not None and all(t.answer_id != latest.id for t in turns):
            turns.append(view(latest, None, asked))  # the thread could not be stored: the answer is still shown
        return templates.TemplateResponse(request, "index.html", base(request) | {
            "turns": turns, "suggestions": [] if turns else services.suggestions(), "version": version,
            "thread_id": tid if turns else ""})

    async def index(request: Request) -> Response:
        version = read_version(request.query_params.get("version"), services.corpus)
        tid = thread_id(request.query_params.get("thread"))
        return await asyncio.to_thread(page, request, tid, viewer_for(request), version)

    async def ask(request: Request) -> Response:
        form = await request.form()
        try:
            question = read_question(form.get("question"))
        except QuestionError as exc:
            response = _error_fragment(request, templates, str(exc), 400)
            if request.headers.get("HX-Request"):  # shown under the composer, gone with the next question
                response.headers.update({"HX-Retarget": "#ask-error", "HX-Reswap": "innerHTML"})
            return response
        viewer = viewer_for(request)
        version = read_version(form.get("version"), services.corpus)
        given = thread_id(form.get("thread_id"))
        tid = await asyncio.to_thread(services.threads.fork, given, viewer) if given else new_thread_id()
        if request.headers.get("HX-Request"):
            turn = uuid.uuid4().hex[:12]
            url = "/ask/stream?" + urlencode({"question": question, "turn": turn, "thread": tid}
                                             | ({"version": version} if version else {}))
            response = templates.TemplateResponse(request, "_pending.html", {
                "tid": turn, "question": question, "stream_url": url, "thread_id": tid})
            response.headers["HX-Replace-Url"] = "/?" + urlencode({"thread": tid} | ({"version": version} if version else {}))
            return response
        rewritten = await asyncio.to_thread(services.rewrite, question, tid, viewer)
        answer = await _answer(services, rewritten.question, viewer, version)
        await asyncio.to_thread(services.threads.add, tid, answer, question)
        return await asyncio.to_thread(page, request, tid, viewer, version, answer, question)

    async def ask_stream(request: Request) -> Response:
        context = base(request)
        tid = render.turn_id(request.query_params.get("turn"), uuid.uuid4().hex[:12])
        asked = str(request.query_params.get("question") or "")

        def fragment(name: str, **extra: Any) -> str:
            return templates.get_template(name).render(context | extra)

        def failed(message: str, **extra: Any) -> str:
            return fragment("_failed.html", tid=tid, question=asked, message=message,
                            thread_id=thread_id(request.query_params.get("thread")) or "", **extra)

        async def events() -> AsyncIterator[str]:
            if request.headers.get("last-event-id"):  # a reconnect: the answer was cut off; never replay a question
                yield sse("done", failed("The connection dropped before the answer was complete."), 1)
                return
            try:
                question = read_question(request.query_params.get("question"))
                viewer = viewer_for(request)
                answerer = await asyncio.to_thread(lambda: services.answerer)
                given = request.query_params.get("thread")
                thread = (await asyncio.to_thread(services.threads.fork, t, viewer)
                          if (t := thread_id(given)) else new_thread_id() if given == "new" else None)
                if thread:
                    yield sse("thread", thread, 0)
                rewritten = await asyncio.to_thread(services.rewrite, question, thread, viewer)
                rset, number, claims = None, 0, 0
                numbers = render.ChipNumbers()  # the turn's chip labels, in reading order across its claim events
                version = read_version(request.query_params.get("version"), services.corpus)
                async for event in iterate_in_threadpool(answerer.events(rewritten.question, viewer, version=version)):
                    number += 1
                    if event.kind == "retrieved":
                        rset = event.retrieval
                        yield sse("retrieved", fragment("_looked_at.html", looked=looked_at(rset, context["site"]),
                                                        searched=rewritten.question if rewritten.rewritten else ""), number)
                    elif event.kind == "claim" and rset is not None and event.claim is not None:
                        claims += 1
                        claim = render.claim_view(event.claim, rset, context["site"], tid, claims, numbers)
                        if claim is not None:
                            yield sse("claim", fragment("_claim.html", claim=claim), number)
                    elif event.kind == "done":
                        services.threads.cache.put(event.answer)
                        if thread:
                            await asyncio.to_thread(services.threads.add, thread, event.answer, question)
                        yield sse("done", fragment("_turn.html", view=view(event.answer, tid, question)), number)
            except QuestionError as exc:
                yield sse("done", failed(str(exc), retry=False), 1)
            except (StoreUnavailableError, IndexMismatchError) as exc:
                log.error("service unavailable: %s", exc)
                yield sse("done", failed(UNAVAILABLE), 1)
            except Exception:
                log.exception("streaming answer failed")
                yield sse("done", failed("Something went wrong; it has been logged."), 1)

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def thread_fragment(request: Request) -> Response:
        """A thread's turns as HTML for this viewer: the widget shows its conversation again after a page change."""
        tid = thread_id(request.query_params.get("thread"))
        views = await asyncio.to_thread(thread_views, tid, viewer_for(request)) if tid else []
        turn = templates.get_template("_turn.html")
        return HTMLResponse("".join(turn.render(base(request) | {"view": v}) for v in views),
                            headers={"Cache-Control": "no-store"})

    async def api_ask(request: Request) -> Response:
        body = await read_json(request)
        if isinstance(body, Response):
            return body
        try:
            question = read_question(body.get("question"))
        except QuestionError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        viewer = viewer_for(request)
        version = read_version(body.get("version"), services.corpus)
        given = body.get("thread_id")
        if given is not None and thread_id(given) is None:
            return JSONResponse({"error": f"thread_id must be one this server returned (16 hex digits), got {str(given)[:40]!r}"},
                                status_code=400)
        tid = await asyncio.to_thread(services.threads.fork, given, viewer) if given else new_thread_id()
        rewritten = await asyncio.to_thread(services.rewrite, question, tid, viewer)
        answer = await _answer(services, rewritten.question, viewer, version)
        await asyncio.to_thread(services.threads.add, tid, answer, question)
        return JSONResponse(answer.to_dict() | {"thread_id": tid, "asked": question, "rewritten": rewritten.rewritten})

    async def widget(request: Request) -> Response:
        """The embeddable widget at a short, stable address (the docs site's script tag points here)."""
        return FileResponse(HERE / "static" / "widget.js", media_type="text/javascript",
                            headers={"Cache-Control": "public, max-age=300"})

    async def healthz(request: Request) -> Response:
        groups = sorted(viewer_for(request).groups)  # the count of what this caller may read, never the total
        chunks = await asyncio.to_thread(lambda: services.store.count(groups=groups))
        return JSONResponse({"status": "ok", "chunks": chunks})

    async def docs(request: Request) -> Response:
        from ingest.parser import render_html

        slug = request.path_params.get("path", "").strip("/") or "index"
        page = services.corpus.page(slug)
        if page is None or not viewer_for(request).may_read(page.access):
            raise HTTPException(404, f"no page at /docs/{slug}")
        body = render_html(page, link_base=settings_base(services.corpus.site.base_url))
        return templates.TemplateResponse(request, "doc.html", base(request) | {"page": page, "body": body})

    async def docs_search(request: Request) -> Response:
        query = " ".join(str(request.query_params.get("q", "")).split())[:200]
        results = search_docs(services.chunks, query, viewer_for(request)) if query else []
        return templates.TemplateResponse(request, "search.html", base(request) | {"query": query, "results": results})

    async def feedback(request: Request) -> Response:
        return await post_feedback(request, services.audit, viewer_for(request).groups)

    routes = [
        Route("/", index),
        Route("/ask", ask, methods=["POST"]),
        Route("/ask/stream", ask_stream),
        Route("/ask/thread", thread_fragment),
        Route("/api/ask", api_ask, methods=["POST"]),
        Route("/api/answers/{answer_id}/feedback", feedback, methods=["POST"]),
        Route("/healthz", healthz),
        Route("/docs/search", docs_search),
        Route("/docs/{path:path}", docs),
        Route("/docs", docs),
        *staff_routes(services, templates, base, viewer_for),
        Route("/widget.js", widget),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    def csp() -> str:  # the docs site's origin comes from site config, read on first use like the rest of the corpus
        return content_security_policy(frame_ancestors(settings.frame_ancestors, services.corpus.site.base_url))

    middleware = [Middleware(CORS, origins=allowed_origins(settings.cors_origins)),
                  Middleware(SecurityHeaders, csp=csp), Middleware(InputLimits)]
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={
        StoreUnavailableError: _unavailable, IndexMismatchError: _unavailable, QueryError: _bad_question,
        IdentityError: _bad_request(templates),
        HTTPException: _http_error(templates), Exception: _internal_error,
    })
    app.state.services = services
    return app


def settings_base(base_url: str) -> str:
    """The prefix for links inside the bundled docs viewer: the site's own base URL, or /docs when pages live elsewhere."""
    return base_url if not base_url.startswith(("http://", "https://")) else "/docs"


async def _answer(services: Services, question: str, viewer: Viewer, version: str | None = None) -> Any:
    return await asyncio.to_thread(lambda: services.answerer.ask(question, viewer, version=version))


def read_version(value: Any, corpus: Corpus) -> str | None:
    """The docs version a reader is browsing, if it is one the site has; anything else is ignored."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip() if value.strip() in {page.version for page in corpus.pages} else None


def _error_fragment(request: Request, templates: Jinja2Templates, message: str, status: int) -> Response:
    full = not request.headers.get("HX-Request")
    return templates.TemplateResponse(request, "_error.html", {"message": message, "full": full}, status_code=status)


async def _unavailable(request: Request, exc: Exception) -> Response:
    log.error("service unavailable: %s", exc)
    if request.url.path.startswith("/api/") or request.url.path == "/healthz":
        return JSONResponse({"error": UNAVAILABLE}, status_code=503)
    return HTMLResponse(f'<div class="error" role="alert">{UNAVAILABLE}</div>', status_code=503)


def _bad_request(templates: Jinja2Templates):  # type: ignore[no-untyped-def]
    async def handler(request: Request, exc: Exception) -> Response:
        if request.url.path.startswith("/api/") or request.url.path == "/healthz":
            return JSONResponse({"error": str(exc)}, status_code=400)
        return templates.TemplateResponse(request, "_error.html", {"message": str(exc), "full": True}, status_code=400)
    return handler


async def _bad_question(request: Request, exc: Exception) -> Response:
    return JSONResponse({"error": str(exc)}, status_code=400)


def _http_error(templates: Jinja2Templates):  # type: ignore[no-untyped-def]
    async def handler(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return templates.TemplateResponse(
            request, "_error.html", {"message": exc.detail, "full": True}, status_code=exc.status_code
        )
    return handler


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s", request.url.path)
    return JSONResponse({"error": "internal error; it has been logged"}, status_code=500)
