"""A scripted OpenAI-compatible server on 127.0.0.1 that replays queued replies and records requests.

It is a real HTTP server (http.server in a thread), so tests drive the real
litellm client path: request building, structured-output parameters, HTTP
errors, timeouts. Each request pops the next scripted `Reply`; every request
body is recorded so tests can read the prompts the model was shown.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer: message text with a status, optionally after a delay."""

    text: str | None = ""
    status: int = 200
    delay: float = 0.0

    @classmethod
    def json(cls, data: Any) -> Reply:
        return cls(text=json.dumps(data))

    @classmethod
    def error(cls, status: int) -> Reply:
        return cls(text=None, status=status)

    @classmethod
    def sleep(cls, seconds: float, then: str = "") -> Reply:
        return cls(text=then, delay=seconds)


class ScriptedLLM:
    """Replays `replies` in order; `requests` holds every request body received, decoded."""

    def __init__(self, *replies: Reply | str, reject_response_format: bool = False) -> None:
        self.replies: list[Reply] = [r if isinstance(r, Reply) else Reply(text=r) for r in replies]
        self.requests: list[dict[str, Any]] = []
        self.reject_response_format = reject_response_format
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.url = ""

    def push(self, *replies: Reply | str) -> None:
        with self._lock:
            self.replies.extend(r if isinstance(r, Reply) else Reply(text=r) for r in replies)

    @property
    def prompts(self) -> list[str]:
        """The concatenated message contents of each request, in order."""
        return ["\n".join(m.get("content") or "" for m in body.get("messages", [])) for body in self.requests]

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self.reject_response_format and "response_format" in body:
                return Reply(text='{"error": {"message": "response_format is not supported"}}', status=400)
            if not self.replies:
                return Reply(text="no scripted reply left", status=404)
            return self.replies.pop(0)

    @contextmanager
    def running(self) -> Iterator[ScriptedLLM]:
        """Serve on a free port of 127.0.0.1; `url` is the base to pass as litellm's api_base."""
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        try:
            yield self
        finally:
            self._stopping.set()
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


def _completion(text: str | None, model: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _handler(script: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                body = {"undecodable": True}
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            reply = script._next(body)
            if reply.delay and script._stopping.wait(reply.delay):
                return
            if reply.status != 200:
                message = reply.text or f"scripted HTTP {reply.status}"
                self._send(reply.status, {"error": {"message": message, "type": "scripted", "code": reply.status}})
                return
            self._send(200, _completion(reply.text, body.get("model", "scripted")))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

    return Handler
