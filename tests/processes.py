"""Child processes for tests and benchmarks: a free loopback port, and a server run until a block ends."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def supervised(process: subprocess.Popen, ready: Callable[[], bool], *, startup: float, what: str,
               stop_timeout: float = 10.0, poll: float = 0.1) -> Iterator[None]:
    """Wait until `ready()` (a clear error if the process exits or `startup` passes), then stop it at the end."""
    try:
        deadline = time.monotonic() + startup
        while not ready():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start (exit {process.poll()})")
            time.sleep(poll)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=stop_timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
