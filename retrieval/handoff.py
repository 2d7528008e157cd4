"""Handing an ingest to the running server: a Unix socket in DATA_DIR, one JSON line each way per event.

The server is the index's only writer while it runs (see `lock.owner_lock`):
`python -m retrieval index` sends its request here and prints what the server
reports, so an author's `make ingest` never opens the embedded Chroma under a
serving process, and the run reuses the server's loaded model. The socket
lives next to the index, with the same file permissions, so whoever may write
the index may ask for a build and nobody reachable over HTTP can.

Protocol: the client sends one line, `{"full": bool, "wait": bool,
"content_dir": str, "chroma_url": str}`; the server answers with lines
`{"event": "started"|"access"|"progress"|"done"|"error", ...}` and closes.
Both ends speak in the typed events below; JSON exists only on the socket.
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
from .indexer import IndexReport

_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux


class HandoffError(RetrievalError):
    """The running server could not be reached, or refused or failed the run it was handed."""


@dataclass(frozen=True)
class IngestRequest:
    full: bool = False
    wait: bool = False
    content_dir: str = ""
    chroma_url: str = ""


@dataclass(frozen=True)
class Started:
    """The server took the run (its pid, for the author's terminal)."""

    pid: int


@dataclass(frozen=True)
class AccessApplied:
    """Deletions and access changes are live, before any embedding."""

    report: IndexReport


@dataclass(frozen=True)
class Embedded:
    """Embedding progress: `embedded` of `total` chunks."""

    embedded: int
    total: int


@dataclass(frozen=True)
class Done:
    report: IndexReport


@dataclass(frozen=True)
class Failed:
    """The run failed (or the request was malformed); the last good index serves on."""

    message: str
    kind: str = ""


Event = Started | AccessApplied | Embedded | Done | Failed
Emit = Callable[[Event], None]
Runner = Callable[[IngestRequest, Emit], IndexReport]

_NAMES: dict[type[Any], str] = {Started: "started", AccessApplied: "access", Embedded: "progress", Done: "done",
                                Failed: "error"}


def encode(event: Event) -> bytes:
    """One JSON line: `{"event": name, ...fields}` (a report as its fields)."""
    return json.dumps({"event": _NAMES[type(event)], **asdict(event)}).encode() + b"\n"


def decode(line: bytes) -> Event:
    """The event a line carries; anything else is a HandoffError naming what arrived."""
    try:
        data = json.loads(line)
        name = data.pop("event")
        if name in ("access", "done"):
            report = IndexReport(**data["report"])
            return AccessApplied(report) if name == "access" else Done(report)
        kind = {"started": Started, "progress": Embedded, "error": Failed}[name]
        event: Event = kind(**data)
        return event
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise HandoffError(f"the server sent an event this version does not read: {line[:200]!r} ({exc})") from exc


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
            def emit(event: Event) -> None:
                try:
                    stream.write(encode(event))
                    stream.flush()
                except OSError:
                    pass  # the CLI went away (Ctrl-C, kill): the run goes on, the server keeps serving

            try:
                line = stream.readline(64 * 1024)
                data = json.loads(line or b"{}")
                request = IngestRequest(**{k: data[k] for k in ("full", "wait", "content_dir", "chroma_url") if k in data})
            except (ValueError, TypeError) as exc:
                emit(Failed(f"malformed ingest request: {exc}"))
                return
            try:
                emit(Started(os.getpid()))
                emit(Done(self._run(request, emit)))
            except Exception as exc:  # a failed build must never take the server down; the last good index serves on
                emit(Failed(str(exc), type(exc).__name__))


def hand_off(data_dir: Path, request: IngestRequest, *, connect_timeout: float = 15.0) -> Iterator[Event]:
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
            event = decode(line)
            yield event
            if isinstance(event, Done | Failed):
                return
    raise HandoffError("the server closed the connection before the ingest finished (see its log)")
