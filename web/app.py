"""The web app: chat page, streamed answers, JSON API, docs viewer and audit view (starlette + jinja2 + htmx),
and for coding agents the MCP endpoint and llms.txt (`agents`, `llms_txt`).

`create_app(settings, *, answerer=None, store=None, corpus=None, index=None)` wires
dependencies so tests inject their own; the real ones are built lazily on first
use and kept warm for the life of the process. Handlers live in `routes`,
`api` and `staff` and read the typed `AppState`; every failure is worded once,
in `failures`. Viewer identity comes only from the configured mechanism (a
trusted proxy header when IDENTITY_HEADER is set), never from anything a
visitor can choose.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from answer.pipeline import Answerer
from ingest.corpus import Corpus
from retrieval.errors import IndexMismatchError, QueryError, StoreUnavailableError
from retrieval.protocols import StoreReader
from retrieval.store import ChromaStore

from . import agents, api, health, llms_txt, logs, render, routes, staff
from .budgets import Budgets, RateLimit
from .cors import CORS, allowed_origins
from .failures import failure, wants_json
from .identity import IdentityError
from .limits import InputLimits
from .metrics import Metrics
from .origin import SameOrigin
from .questions import QuestionError
from .request_ids import RequestIds
from .security import SecurityHeaders, content_security_policy, frame_ancestors
from .services import Services
from .settings import Settings
from .state import AppState, state_of
from .thread_ids import ThreadIdError

HERE = Path(__file__).parent
_MAPPED = (StoreUnavailableError, IndexMismatchError, QueryError, QuestionError, IdentityError, ThreadIdError, HTTPException,
           Exception)


def create_app(
    settings: Settings, *, answerer: Answerer | None = None, store: StoreReader | None = None, corpus: Corpus | None = None,
    index: ChromaStore | None = None,
) -> Starlette:
    """The app. `store` is an index it only reads; `index` the Chroma index it reads and may ingest into
    (neither: the one `settings` names, opened on first use)."""
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["inline_code"] = render.inline_code
    templates.env.filters["short"] = render.short
    templates.env.filters["sentence"] = render.sentence
    templates.env.filters["when"] = staff.when
    metrics = Metrics(lambda: services.store)
    services = Services(settings, answerer, store, corpus, index=index, observers=[metrics.observe, logs.answered])
    state = AppState(settings, services, templates)
    budgets = Budgets(rate=settings.rate_limit, trusted_header=settings.trusted_proxy_header,
                      database=lambda: services.audit)
    mcp = agents.AgentEndpoint(agents.mcp_server(budgets), bind=settings.host, hosts=settings.mcp_hosts,
                               origins=allowed_origins(settings.cors_origins))

    def csp() -> str:  # the docs site's origin comes from site config, read on first use like the rest of the corpus
        return content_security_policy(frame_ancestors(settings.frame_ancestors, services.docs.corpus.site.base_url))

    app = Starlette(
        routes=[
            Route("/", routes.index),
            Route("/ask", routes.ask, methods=["POST"]),
            Route("/ask/stream", routes.ask_stream),
            Route("/ask/thread", routes.thread_fragment),
            Route("/api/ask", api.api_ask, methods=["POST"]),
            Route("/api/answers/{answer_id}/feedback", api.feedback, methods=["POST"]),
            Route("/healthz", health.healthz),
            Route("/readyz", health.readyz),
            Route("/metrics", metrics.endpoint),
            Route("/docs/search", routes.docs_search),
            Route("/docs/{path:path}.md", llms_txt.page_md),  # the page as Markdown, for agents
            Route("/docs/{path:path}", routes.docs),
            Route("/docs", routes.docs),
            *staff.ROUTES,
            Route(agents.PATH, mcp),  # the MCP server (streamable HTTP) for coding agents
            Route("/llms.txt", llms_txt.llms),
            Route("/llms-full.txt", llms_txt.llms_full),
            Route("/widget.js", routes.widget),
            Route("/static/widget.js", routes.widget),  # the file alone lacks turn.js: both addresses serve the bundle
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ],
        middleware=[Middleware(RequestIds), Middleware(metrics.middleware),
                    Middleware(CORS, origins=allowed_origins(settings.cors_origins)),
                    Middleware(SecurityHeaders, csp=csp, identity_header=settings.identity_header), Middleware(InputLimits, body_timeout=settings.read_timeout),
                    Middleware(SameOrigin, origins=allowed_origins(settings.cors_origins)),
                    Middleware(RateLimit, budgets=budgets)],
        exception_handlers=dict.fromkeys(_MAPPED, _failed),
        lifespan=mcp.lifespan(),
    )
    app.state.web = state
    app.state.services = services  # for the server's entrypoint and tests
    app.state.metrics = metrics
    return app


async def _failed(request: Request, exc: Exception) -> Response:
    """Every exception a handler lets out, shown as `failures` words it: JSON for the API, a page otherwise."""
    problem = failure(exc, request.url.path)
    if wants_json(request):
        return JSONResponse({"error": problem.message}, status_code=problem.status)
    return state_of(request).error_page(request, problem, full=not request.headers.get("HX-Request"))
