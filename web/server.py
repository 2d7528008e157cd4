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

Closing a connection the client is still sending on is a lingering close
(RFC 9112, section 9.6): the server half-closes after the response and
discards what still arrives until the client closes its side, has sent
nothing for `LINGER` seconds, or `LINGER_MOST` seconds have passed. A plain
close would answer the client's next bytes with a TCP reset, and a reset makes
the client's kernel drop the 408 or 413 it had not yet read: a slow client
would see "connection reset" instead of why. The window is one of silence, not
a total, because a client on a slow link may need longer than `LINGER` to
finish sending a large refused upload; the total bounds a client that drips
bytes to hold the connection.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .settings import Settings

LINGER = 2.0  # seconds of silence after which a closing connection stops draining the client
LINGER_MOST = 30.0  # seconds a closing connection drains at most, however steadily the client sends
_MESSAGE = b"the request headers did not arrive in time; send them at once"
_TIMED_OUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
              b"content-length: %d\r\n\r\n%s" % (len(_MESSAGE), _MESSAGE))


class LingeringTransport:
    """The connection's transport as uvicorn sees it, with `close()` made a lingering close.

    Everything else is the real transport's. While lingering, `is_closing()` is
    true, so nothing more is written, and the protocol discards what arrives.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, linger: float,
                 most: float = LINGER_MOST) -> None:
        self._transport = transport
        self._loop = loop
        self._linger = linger
        self._most = most
        self._until = 0.0  # when the linger ends however the client sends, once it has begun
        self._timer: asyncio.TimerHandle | None = None

    @property
    def lingering(self) -> bool:
        return self._timer is not None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def close(self) -> None:
        if self.is_closing():
            return
        if self._linger <= 0 or not self._transport.can_write_eof():
            self._transport.close()
            return
        self._transport.write_eof()  # the FIN follows the response still in the write buffer
        if not self._transport.is_reading():
            # uvicorn pauses reading while a body the app has not read piles up (its flow control); a drain that
            # does not read leaves the client blocked on a full window until the quiet window closes it on a reset
            self._transport.resume_reading()
        self._until = self._loop.time() + self._most
        self._timer = self._loop.call_later(self._linger, self.close_now)

    def drained(self) -> None:
        """The client sent more while lingering: the quiet window starts again, within the total."""
        if self._timer is None:
            return
        self._timer.cancel()
        self._timer = self._loop.call_at(min(self._loop.time() + self._linger, self._until), self.close_now)

    def close_now(self) -> None:
        """End the linger (the client closed its side, or time is up) and close for real."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._transport.close()


class DeadlineHTTPProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline on each request's headers, closing by lingering."""

    def __init__(self, *args: Any, header_timeout: float = 10.0, linger: float = LINGER, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout = header_timeout
        self.linger = linger
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
        super().connection_made(LingeringTransport(transport, self.loop, self.linger))  # type: ignore[arg-type]
        self._arm()

    def _lingering(self) -> bool:
        return isinstance(self.transport, LingeringTransport) and self.transport.lingering

    def data_received(self, data: bytes) -> None:
        if self._lingering():
            self.transport.drained()  # type: ignore[attr-defined]
            return  # the rest of a request already answered with a close: drained, never parsed
        if self._waiting_for_headers():
            self._arm()  # the first byte of a request (a kept-alive connection had no deadline while idle)
        super().data_received(data)
        if not self._waiting_for_headers():
            self._disarm()

    def eof_received(self) -> None:
        if self._lingering():
            self.transport.close_now()  # type: ignore[attr-defined]
        super().eof_received()

    def shutdown(self) -> None:
        """A graceful shutdown closes an idle connection at once: between requests there is nothing to drain."""
        if (self.cycle is None or self.cycle.response_complete) and isinstance(self.transport, LingeringTransport):
            self.transport.close_now()
            return
        super().shutdown()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if isinstance(self.transport, LingeringTransport):
            self.transport.close_now()
        super().connection_lost(exc)


def server_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for `uvicorn.run` / `uvicorn.Config`: the protocol with the header deadline (picklable, for
    workers), how long a SIGTERM waits for answers in flight (uvicorn stops accepting at once, then lets the
    open responses, answer streams included, finish; past the timeout it cancels them), and no proxy headers."""
    return {"http": functools.partial(DeadlineHTTPProtocol, header_timeout=settings.read_timeout),
            "timeout_graceful_shutdown": settings.shutdown_timeout,
            # The app reads the client's address itself: the socket's peer, or the right-most entry of the header
            # the operator names (TRUSTED_PROXY_HEADER). uvicorn's own handling would rewrite the peer from any
            # X-Forwarded-For a client sends through 127.0.0.1, a fresh rate-limit budget per forged address.
            "proxy_headers": False}
