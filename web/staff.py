"""Support staff's pages: the answer log searched and filtered by feedback, one answer audited, and the content gaps.

Staff (STAFF_GROUP) see only what their own groups may read: an answer is
listed when its every retrieved source is readable by the staff reader, and an
answer given to other groups is redacted for them (`audit_view.redact`). When
the answer log cannot be read (damaged, locked), these pages are a 503 that
names the problem and the fix, never a stack trace.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from answer.contract.record import STATES, AnswerRecord, attempt_json
from answer.errors import AnswerLogError
from answer.log.protocol import LogRow
from answer.reports.gaps import GapReport, gap_report, parse_since
from answer.reports.readable import deleted_handles, fully_readable, live_hashes, needs_lookup, readable_handles

from .audit_view import DELETED, RESTRICTED, attempts, explain, redact
from .failures import failure
from .links import is_site_url, section_path
from .state import AppState, state_of

GAP_DAYS = 30  # the period /gaps covers unless ?since= says otherwise
SHOWN_IDS = 100  # answers a link from a content gap opens in the audit list (the list shows at most 100)
# Questions /gaps embeds per request when their vectors were not written with their answers (a log from before
# that, or written without the model): on two cores ~2.7 s of model time idle (186 questions/s) and ~14 s at
# load 4-5 (36/s), where a 10k backlog takes 47 s to 4 minutes. The page counts the rest as not yet grouped;
# `python -m answer gaps` embeds them all.
GAP_EMBED_PER_REQUEST = 500
_ANSWER_ID = re.compile(r"^[0-9a-f]{1,32}$")


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
    return readable_handles(record, groups, live_hashes(state.services.store, groups, needs_lookup(record)))


def _listable(state: AppState, rows: list[LogRow], groups: frozenset[str], limit: int) -> list[LogRow]:
    """Rows of answers whose every retrieved source the reader may read (the others are not listed)."""
    audit = state.services.audit
    out: list[LogRow] = []
    for row in rows:
        record = audit.get(row.id) if audit is not None else None
        if record is not None and fully_readable(record, groups, live_hashes(state.services.store, groups, needs_lookup(record))):
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
        except AnswerLogError as exc:
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
    ids = [i for i in str(request.query_params.get("ids", "")).split(",") if _ANSWER_ID.match(i)][:SHOWN_IDS]
    audit = state.services.audit
    rows = await asyncio.to_thread(audit.search, text, wanted, 500, rated, ids) if audit else []
    rows = await asyncio.to_thread(_listable, state, rows, groups, 100)
    return state.page(request, "audit_search.html", {"rows": rows, "text": text, "state": wanted, "feedback": rated,
                                                     "ids": ids})


@_reads_log
async def gaps(request: Request) -> Response:
    """`GET /gaps?since=YYYY-MM-DD`: refused, unverified and rated-down answers grouped by topic, largest first."""
    state, groups = _staff(request)
    try:
        since = parse_since(str(request.query_params.get("since", "")), time.time(), GAP_DAYS)
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from exc
    report = await asyncio.to_thread(_gap_report, state, groups, since)
    site = state.services.docs.corpus.site
    sections = {s.url: (s.url if is_site_url(s.url, site) else None, " › ".join(section_path(s.title, s.heading_path)[-2:]))
                for gap in report.gaps for s in gap.sections}
    return state.page(request, "gaps.html", {"report": report, "sections": sections, "shown_ids": SHOWN_IDS,
                                             "since": datetime.fromtimestamp(since, tz=UTC).strftime("%Y-%m-%d"),
                                             "embed_limit": GAP_EMBED_PER_REQUEST})


def _gap_report(state: AppState, groups: frozenset[str], since: float) -> GapReport:
    audit = state.services.audit
    if audit is None:
        return GapReport(since=since, answers=0, gaps=())
    embedder = state.services.components.embedder
    if embedder is None:
        raise HTTPException(503, "the content-gap report needs the embedding model, and this server's answerer has none")
    return gap_report(audit, state.services.store, embedder, groups, since=since, site_name=state.services.docs.corpus.site.name,
                      limit=GAP_EMBED_PER_REQUEST)


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
    whole = len(handles) == len(record.retrieved)
    deleted = await asyncio.to_thread(deleted_handles, state.services.store, record) if not whole else set()
    record = redact(record, handles, deleted)
    shown = {c.chunk_id for claim in record.claims for c in claim.citations}
    ratings = await asyncio.to_thread(audit.feedback, record.answer_id)
    typed = await asyncio.to_thread(audit.asked, record.answer_id) if whole else None  # withheld with the question
    if not whole:  # a visitor's reason may restate what the answer said: withheld with the question
        ratings = [replace(r, reason=record.question if r.reason else "") for r in ratings]  # the withheld wording
    return state.page(request, "audit.html", {
        "record": record, "asked": typed if typed != record.question else None, "feedback": ratings, "attempts": attempts(record), "why": explain(record),
        "drafts": [attempt_json(a) for a in record.attempts],
        "changed_since": {cid: status for cid, status in changed.items() if cid in shown},
        "withheld": {"deleted": DELETED, "restricted": RESTRICTED}})  # a withheld citation's chunk id is its label


ROUTES = [Route("/answers", answers), Route("/answers/{answer_id}", answer_view), Route("/gaps", gaps)]
