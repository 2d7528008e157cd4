"""Which HTTP request is asking: set by the web edge, read where an answer is finished and logged.

A context variable rather than a parameter: the id crosses the answerer's
thread hops (`asyncio.to_thread` and starlette's thread pool copy the
context) without every call between the route and `Answerer._finish` passing
it along, and a library caller that never sets it gets "" (no request).
"""

from __future__ import annotations

from contextvars import ContextVar

REQUEST_ID: ContextVar[str] = ContextVar("request_id", default="")
