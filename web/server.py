"""How uvicorn serves the app here: a connection that has not sent its request headers in time is closed.

uvicorn bounds the idle time between requests (`timeout_keep_alive`) but not
the time a client takes to send a request's headers: a client that connects
and sends nothing, or one header byte now and then, holds its connection
forever. `DeadlineHTTPProtocol` arms a deadline whenever a connection is
waiting for a request's headers (on connect, and at the first byte of the
next request on a kept-alive connection) and disarms it once they are in;
past it the client gets a 408 and the connection is closed. The body has its
own deadline (`web.limits.InputLimits`); the response — a long answer stream
included — has none.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .settings import Settings

_MESSAGE = b"the request headers did not arrive in time; send them at once"
_TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
              b"content-length: %d\r\n\r\n%s" % (len(_MESSAGE), _MESSAGE))


class DeadlineHTTPProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on each request's headers."""

    def __init__(self, *args: Any, header_timeout: float = 10.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = header_timeout
        self._deadline: asyncio.TimerHandle | None = None

    def _waiting_for_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self._waiting_for_headers() and not self.transport.is_closing():
            self.transport.write(_TIMED_OUT)
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._waiting_for_headers():
            self._arm()  # the first byte of a request (a kept-alive connection had no deadline while idle)
        super().data_received(data)
        if not self._waiting_for_headers():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def server_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.run` / `uvicorn.Config`: the protocol with the header deadline (picklable, for
    workers), and how long a SIGTERM waits for answers in flight (uvicorn stops accepting at once, then lets the
    open responses, answer streams included, finish; past the timeout it cancels them)."""
    return {"http": functools.partial(DeadlineHTTPProtocol, header_timeout=settings.read_timeout),
            "timeout_graceful_shutdown": settings.shutdown_timeout}
