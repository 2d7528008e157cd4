"""The web app: chat page, JSON API, docs viewer and audit view (starlette + jinja2 + htmx).

`create_app(settings, *, answerer=None, store=None)` wires dependencies so
tests inject their own; the real ones are built lazily on first use and kept
warm for the life of the process. Viewer identity comes only from the
configured mechanism (a trusted proxy header when IDENTITY_HEADER is set),
never from anything a visitor can choose.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from answer.pipeline import Answerer
from ingest.corpus import Corpus, load_corpus
from ingest.settings import Settings
from retrieval.errors import IndexMismatchError, QueryError, StoreUnavailableError
from retrieval.viewer import Viewer

from .questions import QuestionError, read_question

HERE = Path(__file__).parent
log = logging.getLogger(__name__)


class Services:
    """Lazily built, process-wide components; building the answerer loads the model once."""

    def __init__(self, settings: Settings, answerer: Answerer | None, store: Any) -> None:
        self.settings = settings
        self._answerer = answerer
        self._store = store
        self._corpus: Corpus | None = None
        self._lock = threading.Lock()

    @property
    def answerer(self) -> Answerer:
        with self._lock:
            if self._answerer is None:
                from answer.services import build_answerer

                self._answerer = build_answerer(self.settings, store=self.store)
            return self._answerer

    @property
    def store(self) -> Any:
        if self._store is None:
            from retrieval.services import open_store

            self._store = open_store(self.settings)
        return self._store

    @property
    def corpus(self) -> Corpus:
        if self._corpus is None:
            self._corpus = load_corpus(self.settings.content_dir)
        return self._corpus

    @property
    def audit(self) -> Any:
        return getattr(self.answerer, "audit", None)


def viewer_for(request: Request) -> Viewer:
    """The viewer's groups from the trusted identity header, or anonymous when none is configured."""
    header = request.app.state.services.settings.identity_header
    if not header:
        return Viewer.anonymous()
    return Viewer.of(request.headers.get(header, "").split(","))


def create_app(settings: Settings, *, answerer: Answerer | None = None, store: Any = None) -> Starlette:
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.globals["excerpt"] = excerpt
    services = Services(settings, answerer, store)

    def site() -> Any:
        return services.corpus.site

    async def index(request: Request) -> Response:
        return templates.TemplateResponse(request, "index.html", {"site": site(), "turns": []})

    async def ask(request: Request) -> Response:
        form = await request.form()
        try:
            question = read_question(form.get("question"))
        except QuestionError as exc:
            return _error_fragment(request, templates, str(exc), 400)
        answer = await _answer(services, question, viewer_for(request))
        context = {"site": site(), "answer": answer, "question": question}
        if request.headers.get("HX-Request"):
            return templates.TemplateResponse(request, "_turn.html", context)
        return templates.TemplateResponse(request, "index.html", context | {"turns": [answer]})

    async def api_ask(request: Request) -> Response:
        try:
            body = await request.json()
        except Exception:
            return JSONResponse({"error": "the body must be JSON: {\"question\": \"…\"}"}, status_code=400)
        try:
            question = read_question(body.get("question") if isinstance(body, dict) else None)
        except QuestionError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        answer = await _answer(services, question, viewer_for(request))
        return JSONResponse(answer.to_dict())

    async def healthz(request: Request) -> Response:
        chunks = await asyncio.to_thread(services.store.count)
        return JSONResponse({"status": "ok", "chunks": chunks})

    async def docs(request: Request) -> Response:
        from ingest.parser import render_html

        slug = request.path_params["path"].strip("/") or "index"
        page = services.corpus.page(slug)
        if page is None or not viewer_for(request).may_read(page.access):
            raise HTTPException(404, f"no page at /docs/{slug}")
        body = render_html(page, link_base=settings_base(site().base_url))
        return templates.TemplateResponse(request, "doc.html", {"site": site(), "page": page, "body": body})

    async def answer_view(request: Request) -> Response:
        viewer = viewer_for(request)
        if settings.staff_group not in viewer.groups:
            raise HTTPException(403, "the audit view is for support staff")
        audit = services.audit
        record = audit.get(request.path_params["answer_id"]) if audit else None
        if record is None:
            raise HTTPException(404, "no such answer")
        from answer.services import changed_sources

        record["changed_since"] = changed_sources(services.store, record)
        return templates.TemplateResponse(request, "audit.html", {"site": site(), "record": record})

    routes = [
        Route("/", index),
        Route("/ask", ask, methods=["POST"]),
        Route("/api/ask", api_ask, methods=["POST"]),
        Route("/healthz", healthz),
        Route("/docs/{path:path}", docs),
        Route("/docs", docs),
        Route("/answers/{answer_id}", answer_view),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={
        StoreUnavailableError: _unavailable, IndexMismatchError: _unavailable, QueryError: _bad_question,
        HTTPException: _http_error(templates), Exception: _internal_error,
    })
    app.state.services = services
    return app


def excerpt(answer: Any, citation: Any, width: int = 160) -> tuple[str, str, str]:
    """(text before, quote, text after) of a citation inside its chunk, for the hover card."""
    hit = answer.retrieval.get(citation.handle)
    if hit is None:  # cannot happen for a verified citation; show the quote alone rather than guess
        return "", citation.quote, ""
    text = hit.chunk.text
    before = text[max(0, citation.start - width) : citation.start]
    after = text[citation.end : citation.end + width]
    return ("…" if citation.start > width else "") + before, text[citation.start : citation.end], after + (
        "…" if citation.end + width < len(text) else "")


def settings_base(base_url: str) -> str:
    """Where the viewer's own links point: the local /docs viewer unless the site is external."""
    return base_url if not base_url.startswith(("http://", "https://")) else "/docs"


async def _answer(services: Services, question: str, viewer: Viewer) -> Any:
    return await asyncio.to_thread(services.answerer.ask, question, viewer)


def _error_fragment(request: Request, templates: Jinja2Templates, message: str, status: int) -> Response:
    return templates.TemplateResponse(request, "_error.html", {"message": message}, status_code=status)


async def _unavailable(request: Request, exc: Exception) -> Response:
    log.error("service unavailable: %s", exc)
    message = "The docs index is unavailable right now. Please try again in a moment."
    if request.url.path.startswith("/api/") or request.url.path == "/healthz":
        return JSONResponse({"error": message}, status_code=503)
    return HTMLResponse(f'<div class="error" role="alert">{message}</div>', status_code=503)


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
