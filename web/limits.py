"""Bounded input at the door: header size, body size and body time are checked before any route reads them.

A route that calls `request.json()` reads the whole body into memory, and
uvicorn with httptools accepts megabyte headers; this ASGI middleware refuses
both early — 431 for headers, 413 for a body, whether it is announced by
Content-Length or only discovered while streaming in — and a body that has
not fully arrived within the body timeout is a 408 and the connection is
closed. (Slow headers are the server protocol's to bound: `web.server`.)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

MAX_HEADER_BYTES = 16 * 1024
MAX_BODY_BYTES = 64 * 1024  # a question is at most 1,000 characters; forms and JSON bodies are far below this
BODY_TIMEOUT = 10.0  # seconds from the end of the headers to the end of the body (READ_TIMEOUT)


class InputLimits:
    """Refuse oversized headers (431) and bodies (413), and bodies that arrive too slowly (408), on every HTTP request."""

    def __init__(self, app: Any, *, max_header_bytes: int = MAX_HEADER_BYTES, max_body_bytes: int = MAX_BODY_BYTES,
                 body_timeout: float = BODY_TIMEOUT) -> None:
        self.app = app
        self.max_header_bytes = max_header_bytes
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers") or []
        size = sum(len(k) + len(v) + 4 for k, v in headers) + len(scope.get("query_string", b"")) + len(scope.get("raw_path", b"") or b"")
        if size > self.max_header_bytes:
            await _refuse(send, 431, f"request headers are {size:,} bytes; the limit is {self.max_header_bytes:,}")
            return
        length = next((v for k, v in headers if k.lower() == b"content-length"), None)
        if length is not None and (not length.strip().isdigit() or int(length) > self.max_body_bytes):
            await _refuse(send, 413, f"the request body may be at most {self.max_body_bytes:,} bytes")
            return

        chunked = length is None and any(k.lower() == b"transfer-encoding" for k, _ in headers)
        if not chunked and (length is None or int(length) == 0):
            await self.app(scope, receive, send)
            return
        # Read the body here, bounded in size and in time, and replay it to the app: raising from inside the
        # app instead would be caught by a route's own `except Exception`, and a client trickling its body a
        # byte every few seconds would hold the connection (and a worker's task) for as long as it likes.
        chunks: list[bytes] = []
        received = 0
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return
                    chunks.append(message.get("body", b""))
                    received += len(chunks[-1])
                    if received > self.max_body_bytes:
                        await _refuse(send, 413, f"the request body may be at most {self.max_body_bytes:,} bytes")
                        return
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            await _refuse(send, 408, f"the request body did not arrive within {self.body_timeout:g} s "
                                     f"({received:,} bytes came); send it at once")
            return
        replay = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replay_receive() -> Any:
            return replay.pop() if replay else await receive()

        await self.app(scope, replay_receive, send)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
