"""`GET /metrics`: what an operator scrapes, in Prometheus' text format (prometheus-client).

What it counts, and where each count comes from:
- `docs_http_requests_total{route,method,status}` and `docs_http_request_seconds{route}`:
  every request, labelled by its route *template* (`/docs/{path:path}`, never
  the path asked), so a crawler cannot grow the label set;
- `docs_answers_total{state}`: every finished answer (answered / refused / unverified);
- `docs_answer_outcomes_total{outcome}`: the same answers by what the visitor was told: an Answer (the
  badge), Related passages (verified, but the gate was not sure they answer) or refused;
- `docs_verifier_findings_total{kind}`: each proposed quote the verifier
  rejected (`phantom`, `not-verbatim`, `restricted`, `short`) and each claim
  kept out of the answer because its quotes do not support it (`unsupported`);
- `docs_llm_errors_total`: attempts whose generator failed (unreachable, malformed reply);
- `docs_retrieval_seconds`, `docs_generation_seconds`, `docs_answer_seconds`:
  the answer's own timings (retrieval, every generation attempt, the whole answer);
- `docs_index_chunks` and `docs_index_generation_info{generation}`: read from
  the served index at scrape time; `docs_index_up` is 0 when it cannot be read.

With several worker processes (`WORKERS=n`) each process counts into files
under `PROMETHEUS_MULTIPROC_DIR` (set by the server before it starts them), and
a scrape of any worker adds up every worker's counts.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from answer.contract.record import OUTCOMES, STATES
from answer.contract.result import Answer
from answer.contract.verify import QUOTE_KINDS
from retrieval.protocols import StoreReader

from .state import state_of

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
# Seconds: an extractive answer takes tens of milliseconds, a local model's minutes.
_ANSWER_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
_REJECTED = tuple(kind for kind in QUOTE_KINDS if kind != "verified")


class Metrics:
    """The app's counters and histograms, in a registry of its own (two apps in one process never share counts)."""

    def __init__(self, index: Callable[[], StoreReader]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._live = CollectorRegistry()  # read at scrape time in whichever process is scraped
        self._live.register(_IndexCollector(index))
        r = self.registry
        self.requests = Counter("docs_http_requests", "HTTP requests by route template, method and status code.",
                                ["route", "method", "status"], registry=r)
        self.request_seconds = Histogram("docs_http_request_seconds", "Time to the end of each response (a stream's too).",
                                         ["route"], registry=r, buckets=_ANSWER_BUCKETS)
        self.answers = Counter("docs_answers", "Finished answers by state.", ["state"], registry=r)
        self.outcomes = Counter("docs_answer_outcomes", "Finished answers by outcome (answer, related, refused).",
                                ["outcome"], registry=r)
        self.findings = Counter("docs_verifier_findings", "Quotes the verifier rejected and claims it kept out, by kind.",
                                ["kind"], registry=r)
        self.llm_errors = Counter("docs_llm_errors", "Generation attempts that failed (model unreachable, reply unusable).",
                                  registry=r)
        self.retrieval_seconds = Histogram("docs_retrieval_seconds", "Retrieval time per answer.", registry=r,
                                           buckets=_ANSWER_BUCKETS)
        self.generation_seconds = Histogram("docs_generation_seconds", "Generation time per attempt.", registry=r,
                                            buckets=_ANSWER_BUCKETS)
        self.answer_seconds = Histogram("docs_answer_seconds", "Whole-answer time, retrieval to the logged record.",
                                        registry=r, buckets=_ANSWER_BUCKETS)
        for state in STATES:
            self.answers.labels(state)  # present at 0 from the start: a rate over a missing series is no rate
        for outcome in OUTCOMES:
            self.outcomes.labels(outcome)
        for kind in (*_REJECTED, "unsupported"):
            self.findings.labels(kind)

    def observe(self, answer: Answer) -> None:
        """Count one finished answer (an `Answerer` observer)."""
        self.answers.labels(answer.state).inc()
        self.outcomes.labels(answer.outcome).inc()
        for attempt in answer.attempts:
            for quote in attempt.quotes:
                if quote.check.kind in _REJECTED:
                    self.findings.labels(quote.check.kind).inc()
            if attempt.error:
                self.llm_errors.inc()
        unsupported = len(answer.hidden)
        if unsupported:
            self.findings.labels("unsupported").inc(unsupported)
        timings = answer.timings
        if "retrieve" in timings:
            self.retrieval_seconds.observe(timings["retrieve"])
        for key, seconds in timings.items():
            if key.startswith("generate_"):
                self.generation_seconds.observe(seconds)
        if "total" in timings:
            self.answer_seconds.observe(timings["total"])

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """ASGI middleware counting every HTTP request under its route template."""
        return _Counted(app, self)

    def exposition(self) -> bytes:
        """The text a scrape gets: this process's counts, or every worker's when they count into files."""
        directory = os.environ.get(MULTIPROCESS_DIR)
        if directory:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
        else:
            registry = self.registry
        return generate_latest(registry) + generate_latest(self._live)

    async def endpoint(self, request: Request) -> Response:
        """The scrape; only for a holder of `METRICS_TOKEN` (a bearer token, as Prometheus sends it) or support staff.

        Counts of refusals and the index's total size are not for visitors (`/readyz` counts only what the
        caller may read), and a proxy in front would make every client look local, so no address is trusted.
        """
        if not _may_scrape(request):
            return PlainTextResponse("metrics are for operators: set METRICS_TOKEN and scrape with "
                                     "`Authorization: Bearer <token>`\n", status_code=403)
        body = await asyncio.to_thread(self.exposition)  # reading the index may touch a remote Chroma
        return Response(body, media_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})


def _may_scrape(request: Request) -> bool:
    state = state_of(request)
    token = state.settings.metrics_token
    sent = request.headers.get("authorization", "")
    if token and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
        return True
    return state.settings.staff_group in state.viewer(request).groups


class _Counted:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = scope["method"] if scope["method"] in _METHODS else "other"
            self.metrics.requests.labels(route, method, str(status)).inc()
            self.metrics.request_seconds.labels(route).observe(time.perf_counter() - started)


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class _IndexCollector(Collector):
    """The served index's size and generation, read when scraped (so every worker reports the live one)."""

    def __init__(self, index: Callable[[], StoreReader]) -> None:
        self._index = index

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("docs_index_up", "1 when the index could be read for this scrape.")
        try:
            store = self._index()
            chunks = store.count()
            generation = store.generation()
        except Exception:  # an unreadable index is a reading of 0, not a failed scrape
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield GaugeMetricFamily("docs_index_chunks", "Chunks in the served index (every group's).", value=chunks)
        info = GaugeMetricFamily("docs_index_generation_info", "The served index generation.", labels=["generation"])
        info.add_metric([generation or "none"], 1)
        yield info


def prepare_multiprocess(path: Path) -> None:
    """Before worker processes start: count into files under `path`, emptied of a previous run's counts."""
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()
    os.environ[MULTIPROCESS_DIR] = str(path)
