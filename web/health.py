"""`GET /healthz` (is the process alive) and `GET /readyz` (can it answer now), kept apart.

An orchestrator restarts a process whose `/healthz` fails, and sends traffic
only to one whose `/readyz` passes: a replica whose index server is down is
not restarted for it (that would not help) but is taken out of rotation.

`/readyz` checks each dependency on its own and is a 503 when any one fails:
the index readable, the answer log reachable, the models loaded. Its body
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


def _models(services: Services) -> dict[str, str] | None:
    """Loaded, or loading: a probe that finds the answerer unbuilt starts building it and reports "loading"."""
    if services.loaded:
        return OK
    services.load_in_background()
    return None


async def healthz(request: Request) -> Response:
    """Alive: the event loop answers. Nothing it depends on is touched (that is `/readyz`)."""
    return JSONResponse({"status": "alive"}, headers={"Cache-Control": "no-store"})


async def readyz(request: Request) -> Response:
    state = state_of(request)
    groups = sorted(state.viewer(request).groups)  # the count of what this caller may read, never the total
    chunks, index = await asyncio.to_thread(_index, state.services, groups)
    log = await asyncio.to_thread(_answer_log, state.services)
    models = _models(state.services)
    checks = {"index": _shown(index), "answer_log": _shown(log), "models": models or {"status": "loading"}}
    failing = [result for result in (index, log) if isinstance(result, Failure)]
    status = "failing" if failing else "loading" if models is None else "ok"
    body: dict[str, object] = {"status": status, "chunks": chunks, "checks": checks}
    if failing:
        body["error"] = failing[0].message
    return JSONResponse(body, status_code=200 if status == "ok" else 503, headers={"Cache-Control": "no-store"})
