"""`GET /healthz`: each dependency checked on its own, and the whole not ok (a 503) when any one fails.

A load balancer reads the status code; an operator reads the body, which
names each failing dependency with what is wrong and the fix, in the words
`failures` gives every other surface. `chunks` is how many chunks the caller
may read, never the total.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .failures import Failure, failure
from .services import Services
from .state import state_of

OK = {"status": "ok"}


def _index(services: Services, groups: list[str]) -> tuple[int | None, Failure | None]:
    try:
        return services.store.count(groups=groups), None
    except Exception as exc:  # whatever it is, the index cannot answer: say so, worded once
        return None, failure(exc, "/healthz")


def _answer_log(services: Services) -> dict[str, str] | Failure:
    audit = services.audit
    if audit is None:
        return {"status": "off"}  # an answerer built without a log: nothing is recorded, nothing can fail
    try:
        audit.check()
    except Exception as exc:
        return failure(exc, "/healthz")
    return OK


def _shown(result: dict[str, str] | Failure | None) -> dict[str, str]:
    if isinstance(result, Failure):
        return {"status": "failing", "problem": result.message, "fix": result.fix}
    return result or OK


async def healthz(request: Request) -> Response:
    state = state_of(request)
    groups = sorted(state.viewer(request).groups)  # the count of what this caller may read, never the total
    chunks, index = await asyncio.to_thread(_index, state.services, groups)
    log = await asyncio.to_thread(_answer_log, state.services)
    checks = {"index": _shown(index), "answer_log": _shown(log)}
    failing = [result for result in (index, log) if isinstance(result, Failure)]
    body: dict[str, object] = {"status": "failing" if failing else "ok", "chunks": chunks, "checks": checks}
    if failing:
        body["error"] = failing[0].message
    return JSONResponse(body, status_code=503 if failing else 200)
