"""The JSON side of the app beyond `/api/ask`: body checks and visitors' feedback on answers.

Feedback is JSON only, like `/api/ask`: a cross-site form cannot send
`application/json` without a CORS preflight, so no page elsewhere can rate
answers in a visitor's name unless its origin is on the widget allowlist.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from answer.audit import MAX_REASON_CHARS, RATINGS, SQLiteAuditLog

ANSWER_ID_CHARS = 40


async def read_json(request: Request) -> dict[str, Any] | Response:
    """The request's JSON object, or the 415/400 response that says what was wrong with it."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json" and not kind.endswith("+json"):  # a text/plain post is a cross-site "simple request"
        return JSONResponse({"error": f"the body must be JSON sent as application/json, got {kind or 'no content type'!r}"},
                            status_code=415)
    try:
        body = await request.json()
    except Exception:
        return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
    if not isinstance(body, dict):
        return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
    return body


def read_feedback(body: dict[str, Any]) -> tuple[str, str] | str:
    """(rating, reason) from a feedback body, or the message saying what is wrong with it."""
    rating, reason = body.get("rating"), body.get("reason", "")
    if rating not in RATINGS:
        return f"rating must be \"up\" or \"down\", got {str(rating)[:20]!r}"
    if not isinstance(reason, str):
        return "reason must be text"
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON_CHARS:
        return f"the reason is {len(reason):,} characters long; the limit is {MAX_REASON_CHARS}"
    return rating, reason


async def post_feedback(request: Request, audit: SQLiteAuditLog | None, groups: frozenset[str]) -> Response:
    """`POST /api/answers/<id>/feedback` {"rating": "up"|"down", "reason": "…"}: stored beside the answer."""
    answer_id = request.path_params["answer_id"]
    body = await read_json(request)
    if isinstance(body, Response):
        return body
    parsed = read_feedback(body)
    if isinstance(parsed, str):
        return JSONResponse({"error": parsed}, status_code=400)
    if audit is None:
        return JSONResponse({"error": "feedback needs the answer log, and none is configured"}, status_code=503)
    if len(answer_id) > ANSWER_ID_CHARS or await asyncio.to_thread(audit.get, answer_id) is None:
        return JSONResponse({"error": "no such answer"}, status_code=404)
    rating, reason = parsed
    await asyncio.to_thread(audit.add_feedback, answer_id, rating, reason, groups)
    return JSONResponse({"answer_id": answer_id, "rating": rating, "reason": reason}, status_code=201)
