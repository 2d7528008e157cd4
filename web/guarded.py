"""The requests that create answers (or feedback), and how refusing one is shown to whoever sent it.

The rate limit and the cross-site check guard the same endpoints; a refusal
is JSON for the API, a server-sent `done` event holding a failed turn for
the stream (in a 200 for a browser's EventSource, which cannot read any
other), a message under the composer for htmx, and a page otherwise.
"""

from __future__ import annotations

import math
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from . import render
from .failures import Failure
from .state import state_of
from .stream import sse

_FEEDBACK = re.compile(r"^/api/answers/[^/]+/feedback$")
ASK, FEEDBACK = "ask", "feedback"


def guarded(scope: Any) -> str | None:
    """`ask` or `feedback` for a request that writes to the answer log, None for everything else."""
    path, method = scope.get("path", ""), scope.get("method", "")
    if (method, path) in (("POST", "/ask"), ("GET", "/ask/stream"), ("POST", "/api/ask")):
        return ASK
    if method == "POST" and _FEEDBACK.match(path):
        return FEEDBACK
    return None


def refusal(scope: Any, problem: Failure, retry_after: float | None = None) -> Response:
    """`problem` as the endpoint that was called shows a failure, with Retry-After when waiting helps."""
    request = Request(scope)
    headers = {"Retry-After": str(max(1, math.ceil(retry_after)))} if retry_after is not None else {}
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": problem.message}, status_code=problem.status, headers=headers)
    state = state_of(request)
    if request.url.path == "/ask/stream":
        params = request.query_params
        turn = state.fragment("_failed.html", {"turn_id": render.client_turn_id(params.get("turn"), "refused"), "message": problem.message,
                                               "question": str(params.get("question") or "")[:1000], "retry": problem.retry,
                                               "thread_id": ""})
        # EventSource (the page's htmx and the widget) drops the body of any status but 200 and reports only
        # "error": for it the refusal is a 200 whose one event is the failed turn; every other client gets the status.
        event_source = "text/event-stream" in request.headers.get("accept", "")
        return Response(sse("done", turn, 1), status_code=200 if event_source else problem.status,
                        media_type="text/event-stream", headers=headers | {"Cache-Control": "no-store"})
    htmx = bool(request.headers.get("HX-Request"))
    response = state.error_page(request, problem, full=not htmx)
    response.headers.update(headers)
    if htmx:  # shown under the composer, like a bad question
        response.headers.update({"HX-Retarget": "#ask-error", "HX-Reswap": "innerHTML"})
    return response
