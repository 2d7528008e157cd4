"""A request id on every request: in the response's `X-Request-ID`, on each log line, in the answer's record.

A proxy's or load balancer's id (`X-Request-ID`, when it is a short token)
is kept so one id follows the request across machines; otherwise one is
made. Support staff reading an answer in the audit view and an operator
grepping the server's logs then talk about the same request.
"""

from __future__ import annotations

import logging
import re
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from answer.request_id import REQUEST_ID

HEADER = "x-request-id"
_TOKEN = re.compile(r"[A-Za-z0-9._:-]{8,128}")  # anything else (a newline, a 10 kB header) is replaced, never logged


def request_id(headers: list[tuple[bytes, bytes]]) -> str:
    """The caller's id when it is a plain token, else a new one."""
    for name, value in headers:
        if name.lower() == HEADER.encode():
            text = value.decode("latin-1")
            if _TOKEN.fullmatch(text):
                return text
    return uuid.uuid4().hex


class RequestIds:
    """ASGI middleware: sets the request id for everything the request runs (threads included) and returns it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(scope.get("headers") or [])
        token = REQUEST_ID.set(rid)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (HEADER.encode(), rid.encode())]}
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            REQUEST_ID.reset(token)


class WithRequestId(logging.Filter):
    """Puts the current request id on every log record (`%(request_id)s`; "-" outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get() or "-"
        return True
