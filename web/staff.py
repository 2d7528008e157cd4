"""Support staff's pages: the answer log searched and filtered by feedback, and one answer audited.

Staff (STAFF_GROUP) see only what their own groups may read: an answer is
listed when its every retrieved source is readable by the staff reader, and an
answer given to other groups is redacted for them (`audit_view.redact`). When
the answer log cannot be read (damaged, locked), these pages are a 503 that
names the problem and the fix, never a stack trace.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from answer.audit import LogRow
from answer.errors import AuditError
from answer.record import AnswerRecord, attempt_json

from .audit_view import attempts, needs_lookup, readable_handles, redact
from .failures import failure
from .state import AppState, state_of

STATES = ("answered", "refused", "unverified")


def when(created: float) -> str:
    return datetime.fromtimestamp(created, tz=UTC).strftime("%Y-%m-%d %H:%M UTC") if created else "—"


def _staff(request: Request) -> tuple[AppState, frozenset[str]]:
    """The app state and the reader's groups, for support staff only."""
    state = state_of(request)
    groups = state.viewer(request).groups
    if state.settings.staff_group not in groups:
        raise HTTPException(403, "the audit view is for support staff")
    return state, groups


def _readable(state: AppState, record: AnswerRecord, groups: frozenset[str]) -> set[str]:
    ids = needs_lookup(record)
    live = {c.id: c.hash for c in state.services.store.chunks(groups=sorted(groups), ids=ids)} if ids else {}
    return readable_handles(record, groups, live)


def _listable(state: AppState, rows: list[LogRow], groups: frozenset[str], limit: int) -> list[LogRow]:
    """Rows of answers whose every retrieved source the reader may read (the others are not listed)."""
    audit = state.services.audit
    out: list[LogRow] = []
    for row in rows:
        record = audit.get(row.id) if audit is not None else None
        if record is not None and len(_readable(state, record, groups)) == len(record.retrieved):
            out.append(row)
        if len(out) == limit:
            break
    return out


def _reads_log(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """A staff page over the answer log: a log that cannot be read is a 503 page naming the problem and the fix."""
    @functools.wraps(handler)
    async def page(request: Request) -> Response:
        try:
            return await handler(request)
        except AuditError as exc:
            return state_of(request).error_page(request, failure(exc, request.url.path), fix=True)
    return page


@_reads_log
async def answers(request: Request) -> Response:
    """`GET /answers`: the log searched by question, state and feedback (`?feedback=down` is the bad-answers queue)."""
    state, groups = _staff(request)
    text = " ".join(str(request.query_params.get("q", "")).split())[:200]
    wanted = request.query_params.get("state", "")
    wanted = wanted if wanted in STATES else ""
    rated = request.query_params.get("feedback", "")
    rated = rated if rated in ("up", "down", "any") else ""
    audit = state.services.audit
    rows = await asyncio.to_thread(audit.search, text, wanted, 500, rated) if audit else []
    rows = await asyncio.to_thread(_listable, state, rows, groups, 100)
    return state.page(request, "audit_search.html", {"rows": rows, "text": text, "state": wanted, "feedback": rated})


@_reads_log
async def answer_view(request: Request) -> Response:
    """`GET /answers/<id>`: one answer audited, redacted to what the reader's groups may read."""
    from answer.services import changed_sources

    state, groups = _staff(request)
    audit = state.services.audit
    record = await asyncio.to_thread(audit.get, request.path_params["answer_id"]) if audit else None
    if audit is None or record is None:
        raise HTTPException(404, "no such answer")
    handles = await asyncio.to_thread(_readable, state, record, groups)
    changed = await asyncio.to_thread(changed_sources, state.services.store, record)
    record = redact(record, handles)
    shown = {c.chunk_id for claim in record.claims for c in claim.citations}
    ratings = await asyncio.to_thread(audit.feedback, record.answer_id)
    return state.page(request, "audit.html", {
        "record": record, "feedback": ratings, "attempts": attempts(record),
        "drafts": [attempt_json(a) for a in record.attempts],
        "changed_since": {cid: status for cid, status in changed.items() if cid in shown}})


ROUTES = [Route("/answers", answers), Route("/answers/{answer_id}", answer_view)]
