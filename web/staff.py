"""Support staff's pages: the answer log searched and filtered by feedback, and one answer audited.

Staff (STAFF_GROUP) see only what their own groups may read: an answer is
listed when its every retrieved source is readable by the staff reader, and an
answer given to other groups is redacted for them (`audit_view.redact`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from answer.audit import LogRow
from answer.record import AnswerRecord, attempt_json
from retrieval.viewer import Viewer

from .audit_view import attempts, needs_lookup, readable_handles, redact


def when(created: float) -> str:
    return datetime.fromtimestamp(created, tz=UTC).strftime("%Y-%m-%d %H:%M UTC") if created else "—"


def staff_routes(services: Any, templates: Jinja2Templates, base: Callable[[Request], dict[str, Any]],
                 viewer_for: Callable[[Request], Viewer]) -> list[Route]:
    """`GET /answers` (search; `?feedback=down` is the bad-answers queue) and `GET /answers/<id>` (the audit view)."""
    settings = services.settings

    def require_staff(request: Request) -> None:
        if settings.staff_group not in viewer_for(request).groups:
            raise HTTPException(403, "the audit view is for support staff")

    def readable(record: AnswerRecord, groups: frozenset[str]) -> set[str]:
        ids = needs_lookup(record, groups)
        live = {c.id: c.hash for c in services.store.chunks(groups=sorted(groups), ids=ids)} if ids else {}
        return readable_handles(record, groups, live)

    def listable(rows: list[LogRow], groups: frozenset[str], limit: int) -> list[LogRow]:
        """Rows of answers whose every retrieved source the reader may read (the others are not listed)."""
        out = []
        for row in rows:
            record = services.audit.get(row.id)
            if record is not None and len(readable(record, groups)) == len(record.retrieved):
                out.append(row)
            if len(out) == limit:
                break
        return out

    async def answers(request: Request) -> Response:
        require_staff(request)
        groups = viewer_for(request).groups
        text = " ".join(str(request.query_params.get("q", "")).split())[:200]
        state = request.query_params.get("state", "")
        state = state if state in ("answered", "refused", "unverified") else ""
        rated = request.query_params.get("feedback", "")
        rated = rated if rated in ("up", "down", "any") else ""
        audit = services.audit
        rows = await asyncio.to_thread(audit.search, text, state, 500, rated) if audit else []
        rows = await asyncio.to_thread(listable, rows, groups, 100)
        return templates.TemplateResponse(request, "audit_search.html", base(request) | {
            "rows": rows, "text": text, "state": state, "feedback": rated})

    async def answer_view(request: Request) -> Response:
        require_staff(request)
        audit = services.audit
        record = await asyncio.to_thread(audit.get, request.path_params["answer_id"]) if audit else None
        if record is None:
            raise HTTPException(404, "no such answer")
        from answer.services import changed_sources

        handles = await asyncio.to_thread(readable, record, viewer_for(request).groups)
        changed = await asyncio.to_thread(changed_sources, services.store, record)
        record = redact(record, handles)
        shown = {c.chunk_id for claim in record.claims for c in claim.citations}
        ratings = await asyncio.to_thread(audit.feedback, record.answer_id)
        return templates.TemplateResponse(request, "audit.html", base(request) | {
            "record": record, "feedback": ratings, "attempts": attempts(record),
            "drafts": [attempt_json(a) for a in record.attempts],
            "changed_since": {cid: state for cid, state in changed.items() if cid in shown}})

    return [Route("/answers", answers), Route("/answers/{answer_id}", answer_view)]
