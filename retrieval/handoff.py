"""Handing an ingest to the running server: a Unix socket in DATA_DIR, one JSON line each way per event.

The server is the index's only writer while it runs (see `lock.owner_lock`):
`python -m ingest index` sends its request here and prints what the server
reports, so an author's `make ingest` never opens the embedded Chroma under a
serving process, and the run reuses the server's loaded model. The socket
lives next to the index, with the same file permissions, so whoever may write
the index may ask for a build and nobody reachable over HTTP can.

Protocol: the client sends one line, `{"full": bool, "wait": bool,
"content_dir": str, "chroma_url": str}`; the server answers with lines
`{"event": "started"|"access"|"progress"|"done"|"error", ...}` and closes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import RetrievalError

_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux


class HandoffError(RetrievalError):
    """The running server could not be reached, or refused or failed the run it was handed."""


@dataclass(frozen=True)
class IngestRequest:
    full: bool = False
    wait: bool = False
    content_dir: str = ""
    chroma_url: str = ""


Emit = Callable[[dict[str, Any]], None]
Runner = Callable[[IngestRequest, Emit], dict[str, Any]]


def socket_path(data_dir: Path) -> Path:
    """`DATA_DIR/ingest.sock`, or a per-DATA_DIR name in the temp folder when that path is too long for a socket."""
    path = data_dir.resolve() / "ingest.sock"
    if len(str(path)) <= _MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"docs-chat-{os.getuid()}-{digest}.sock"


class IngestListener:
    """Accepts handed-off ingests on the server's socket, one connection at a time, in a daemon thread."""

    def __init__(self, data_dir: Path, run: Runner) -> None:
        self.path = socket_path(data_dir)
        self._run = run
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> IngestListener:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # left by a server that was killed; the owner lock says no one else is serving
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old)
        sock.listen(4)
        self._sock = sock
        self._thread = threading.Thread(target=self._serve, name="ingest-listener", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _serve(self) -> None:
        while self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._handle, args=(conn,), name="ingest-run", daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as stream:
            def emit(event: dict[str, Any]) -> None:
                try:
                    stream.write(json.dumps(event).encode() + b"\n")
                    stream.flush()
                except OSError:
                    pass  # the CLI went away (Ctrl-C, kill): the run goes on, the server keeps serving

            try:
                line = stream.readline(64 * 1024)
                data = json.loads(line or b"{}")
                request = IngestRequest(**{k: data[k] for k in ("full", "wait", "content_dir", "chroma_url") if k in data})
            except (ValueError, TypeError) as exc:
                emit({"event": "error", "message": f"malformed ingest request: {exc}"})
                return
            try:
                emit({"event": "started", "pid": os.getpid()})
                emit({"event": "done", "report": self._run(request, emit)})
            except Exception as exc:  # a failed build must never take the server down; the last good index serves on
                emit({"event": "error", "message": str(exc), "kind": type(exc).__name__})


def hand_off(data_dir: Path, request: IngestRequest, *, connect_timeout: float = 15.0) -> Iterator[dict[str, Any]]:
    """Send `request` to the server owning `data_dir` and yield its events until `done` or `error`.

    Retries the connection for `connect_timeout` seconds: a server that has
    just taken the owner lock may not be listening yet.
    """
    path = socket_path(data_dir)
    deadline = time.monotonic() + connect_timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
            break
        except OSError as exc:
            sock.close()
            if time.monotonic() > deadline:
                raise HandoffError(f"a server owns the index in {data_dir} but does not answer on {path}: {exc}") from exc
            time.sleep(0.1)
    with sock, sock.makefile("rwb") as stream:
        stream.write(json.dumps(asdict(request)).encode() + b"\n")
        stream.flush()
        for line in stream:
            event = json.loads(line)
            yield event
            if event.get("event") in ("done", "error"):
                return
    raise HandoffError("the server closed the connection before the ingest finished (see its log)")
