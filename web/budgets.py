"""Per-client rate limits on the requests that write to the answer log (RATE_LIMIT, e.g. `30/minute`).

Questions (`POST /ask`, `GET /ask/stream`, `POST /api/ask`) and feedback each
have their own budget per client. The budgets live in the answer log's
database, so every worker of `make serve WORKERS=n` draws from the same ones,
and with DATABASE_URL every replica too.
The chat page's htmx `POST /ask` only returns the shell that opens the stream,
so it checks the budget without spending it: one question costs one request.
An agent's `ask_docs` call on `/mcp` spends from the same question budget
(`Budgets.spend`, called by the tool: one MCP request may be a question or a
listing that costs nothing).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from answer.log.protocol import AnswerLog
from answer.log.ratelimit import Limiter, MemoryLimiter, Rate

from .clients import client_address
from .failures import Failure
from .guarded import ASK, FEEDBACK, guarded, refusal

log = logging.getLogger(__name__)
_WHAT = {ASK: "questions", FEEDBACK: "ratings"}


class Budgets:
    """Every client's budgets, kept once per app: the middleware spends them per request, the MCP tools per question."""

    def __init__(self, *, rate: Rate | None, trusted_header: str, database: Callable[[], AnswerLog | None]) -> None:
        self.rate = rate
        self.trusted_header = trusted_header
        self._database = database
        self._limiter: Limiter | None = None

    def limiter(self) -> Limiter | None:
        """The answer log's database when there is one (shared by every worker and replica), else this process's memory."""
        if self._limiter is None:
            try:
                audit = self._database()
            except Exception as exc:  # the route reports the outage in its own words; do not turn it into a 500 here
                log.error("rate limit not checked: the answer log could not be opened: %s", exc)
                return None
            self._limiter = audit.limiter() if audit is not None else MemoryLimiter()
        return self._limiter

    def spend(self, kind: str, scope: Any, *, consume: bool = True) -> tuple[Failure, float] | None:
        """Take one `kind` request from this client's budget: None when it may go ahead, else the 429 and the wait."""
        limiter = self.limiter() if self.rate is not None else None
        if limiter is None or self.rate is None:
            return None
        key = f"{kind}:{client_address(scope, self.trusted_header)}"
        wait = limiter.take(key, self.rate, time.time(), consume=consume)
        if wait <= 0:
            return None
        message = (f"Too many {_WHAT[kind]} from your address: the limit is {self.rate}. "
                   f"Please try again in {max(1, round(wait))} s.")
        return Failure(429, message), wait


class RateLimit:
    """Refuse a client's request with a 429 and Retry-After once its budget for that kind of request is spent."""

    def __init__(self, app: Any, *, budgets: Budgets) -> None:
        self.app = app
        self.budgets = budgets

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        kind = guarded(scope) if scope["type"] == "http" and self.budgets.rate is not None else None
        if kind is None:
            await self.app(scope, receive, send)
            return
        htmx_shell = scope["path"] == "/ask" and any(k.lower() == b"hx-request" for k, _ in scope.get("headers") or [])
        refused = self.budgets.spend(kind, scope, consume=not htmx_shell)
        if refused is not None:
            problem, wait = refused
            await refusal(scope, problem, retry_after=wait)(scope, receive, send)
            return
        await self.app(scope, receive, send)
