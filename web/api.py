"""The JSON API: `POST /api/ask` and visitors' feedback on answers, with the body checks they share.

Feedback is JSON only, like `/api/ask`: a cross-site form cannot send
`application/json` without a CORS preflight, so no page elsewhere can rate
answers in a visitor's name unless its origin is on the widget allowlist.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from answer.contract.record import NO_ANSWER
from answer.contract.result import Answer
from answer.language import other_language
from answer.log.protocol import MAX_RATINGS_PER_ANSWER, MAX_REASON_CHARS, RATINGS, AnswerLog

from .owner import read_owner
from .questions import read_question
from .state import state_of

ANSWER_ID_CHARS = 40


async def api_ask(request: Request) -> Response:
    """`POST /api/ask` {"question": …, "thread_id"?: …, "owner_token"?: …, "version"?: …}: the answer record's public JSON.

    A follow-up stays in `thread_id` only with the `owner_token` that started
    it (or the chat page's cookie); else it forks. A token minted for this
    request comes back as `owner_token`.
    """
    body = await read_json(request)
    if isinstance(body, Response):
        return body
    _, reply = await ask(request, body)
    return JSONResponse(reply)


async def ask(request: Request, body: Mapping[str, object]) -> tuple[Answer, dict[str, object]]:
    """Answer `body`'s question in its thread for this request's reader: the answer and the API's JSON for it.

    The one reading of a question body, shared by `POST /api/ask` and the MCP
    `ask_docs` tool: a QuestionError or ThreadIdError is the caller's mistake,
    worded by `failures`.
    """
    state = state_of(request)
    question = read_question(body.get("question"))
    viewer = state.viewer(request)
    version = state.version(body.get("version"))
    owner = read_owner(request, body.get("owner_token"))  # a ThreadIdError is a 400, like an unminted thread_id
    thread_id = await asyncio.to_thread(state.services.threads.follow, body.get("thread_id"), viewer, owner.token)
    answer, rewritten = await state.answer_in_thread(question, thread_id, viewer, version, owner.token)
    minted = {"owner_token": owner.token} if owner.minted else {}
    language = other_language(question) if answer.outcome == NO_ANSWER else ""
    told = {"language": language} if language else {}  # why it was refused: asked in another language
    return answer, (answer.to_dict() | {"thread_id": thread_id, "asked": question, "rewritten": rewritten.rewritten}
                    | told | minted)


async def feedback(request: Request) -> Response:
    state = state_of(request)
    return await post_feedback(request, state.services.audit, state.viewer(request).groups)


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
    reason = " ".join("".join(ch for ch in reason if unicodedata.category(ch) not in ("Cc", "Cf") or ch.isspace()).split())
    if len(reason) > MAX_REASON_CHARS:
        return f"the reason is {len(reason):,} characters long; the limit is {MAX_REASON_CHARS}"
    return rating, reason


async def post_feedback(request: Request, audit: AnswerLog | None, groups: frozenset[str]) -> Response:
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
    if not await asyncio.to_thread(audit.add_feedback, answer_id, rating, reason, groups):
        return JSONResponse({"error": f"this answer already holds {MAX_RATINGS_PER_ANSWER} ratings; no more are kept"},
                            status_code=429)
    return JSONResponse({"answer_id": answer_id, "rating": rating, "reason": reason}, status_code=201)
