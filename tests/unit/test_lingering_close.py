"""The lingering close: the server keeps draining a client that is still sending, within bounds.

A real event loop drives a transport that records what the server did to it;
the windows are scaled down so the loop runs for a fraction of a second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from web.server import LingeringTransport

QUIET = 0.2  # the test's LINGER: seconds of silence that end the drain
MOST = 1.0  # the test's LINGER_MOST


class RecordingTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.half_closed = False
        self.reading = False  # paused, as uvicorn's flow control leaves a connection whose body the app did not read
        self.closed_at: float | None = None

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.half_closed = True

    def is_reading(self) -> bool:
        return self.reading

    def resume_reading(self) -> None:
        self.reading = True

    def is_closing(self) -> bool:
        return self.closed_at is not None

    def close(self) -> None:
        self.closed_at = asyncio.get_running_loop().time()


async def lingering(sends_every: float | None, sends_for: float) -> tuple[RecordingTransport, float]:
    """Close, then have the client send every `sends_every` s for `sends_for` s; the transport and when closing began."""
    loop = asyncio.get_running_loop()
    real = RecordingTransport()
    transport = LingeringTransport(real, loop, QUIET, most=MOST)
    began = loop.time()
    transport.close()
    assert real.half_closed and transport.is_closing() and real.closed_at is None
    assert real.reading, "a drain that does not read leaves the client blocked until it is reset"
    while sends_every is not None and loop.time() - began < sends_for and real.closed_at is None:
        await asyncio.sleep(sends_every)
        transport.drained()
    while real.closed_at is None:
        await asyncio.sleep(0.01)
    return real, began


T = TypeVar("T")


def run_on_own_loop(scenario: Coroutine[Any, Any, T]) -> T:
    """Run a scenario on a fresh loop in its own thread.

    The browser tests' synchronous Playwright session keeps a loop marked as
    running on the main thread for the rest of the session, so `asyncio.run`
    there refuses to start; a worker thread has no running loop.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, scenario).result()


def test_a_silent_client_is_closed_after_the_quiet_window():
    real, began = run_on_own_loop(lingering(None, 0))
    assert QUIET <= real.closed_at - began < MOST


def test_a_client_still_sending_past_the_quiet_window_is_still_drained():
    """The failure this replaces: a 2 s total cut off a slow upload mid-send, and the client got a reset, not a 413."""
    real, began = run_on_own_loop(lingering(QUIET / 4, QUIET * 2))
    assert real.closed_at - began >= QUIET * 2, "closed while the client was still sending"
    assert real.closed_at - began < MOST


def test_a_client_that_never_stops_sending_is_closed_at_the_total():
    real, began = run_on_own_loop(lingering(QUIET / 4, MOST * 2))
    assert MOST <= real.closed_at - began < MOST + QUIET
