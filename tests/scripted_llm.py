"""A scripted OpenAI-compatible server on 127.0.0.1 that replays queued replies and records requests.

It is a real HTTP server (http.server in a thread), so tests drive the real
litellm client path: request building, structured-output parameters, HTTP
errors, timeouts. Each request pops the next scripted `Reply`; every request
body is recorded so tests can read the prompts the model was shown.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer: message text with a status, optionally after a delay.

    Asked to stream, the text goes out in small pieces; with `hold`, the stream stops after the first
    `hold_after` and waits for the test to set `hold`, so a test can look at what arrived mid-reply.
    """

    text: str | None = ""
    status: int = 200
    delay: float = 0.0
    hold: threading.Event | None = field(default=None, compare=False)
    hold_after: str = ""
    cut_after: str = ""  # the stream ends (the connection closes) right after this text: a reply cut off

    @classmethod
    def json(cls, data: Any) -> Reply:
        return cls(text=json.dumps(data))

    @classmethod
    def error(cls, status: int) -> Reply:
        return cls(text=None, status=status)

    @classmethod
    def sleep(cls, seconds: float, then: str = "") -> Reply:
        return cls(text=then, delay=seconds)


class ScriptedServer:
    """A loopback HTTP server that pops one scripted `Reply` per POST and records every request body.

    Subclasses say which path is the model's route (`accepts`), how a reply is
    written on the wire (`success_body`) and where the client's base URL ends
    (`url_suffix`); queueing, delays, HTTP errors and shutdown are shared.
    """

    url_suffix = ""

    def __init__(self, *replies: Any) -> None:
        self.replies: list[Reply] = [self._as_reply(r) for r in replies]
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.url = ""

    def _as_reply(self, reply: Any) -> Reply:
        return reply

    def accepts(self, path: str) -> bool:
        raise NotImplementedError

    def success_body(self, reply: Reply, request: dict[str, Any]) -> str:
        raise NotImplementedError

    def stream_events(self, reply: Reply, request: dict[str, Any]) -> Iterator[str] | None:
        """The server-sent events of a streamed reply, or None when the request did not ask for a stream."""
        return None

    def push(self, *replies: Any) -> None:
        with self._lock:
            self.replies.extend(self._as_reply(r) for r in replies)

    def reply_to(self, request: dict[str, Any]) -> Reply:
        """The reply to one request: the next scripted one (a subclass may plan it from the request instead)."""
        with self._lock:
            return self.replies.pop(0) if self.replies else Reply(text="no scripted reply left", status=404)

    def _next(self, path: str, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
        return self.reply_to(body)

    @contextmanager
    def running(self) -> Iterator[Any]:
        """Serve on a free port of 127.0.0.1; `url` is the base to pass as litellm's api_base."""
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}{self.url_suffix}"
        try:
            yield self
        finally:
            self._stopping.set()
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


# How real servers refuse a `response_format` shape they do not take, keyed by the shape's "type".
# llama-cpp-python's server: its request model allows only text/json_object, and its error handler
# turns the validation error into a 500 whose message names the field.
LLAMA_CPP_PYTHON_REFUSALS = {
    "json_schema": Reply(status=500, text=(
        "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]")),
}
# A server that takes no structured output at all answers both shapes with a 400.
TEXT_ONLY_REFUSALS = {
    shape: Reply(status=400, text=f"response_format type {shape!r} is not supported") for shape in ("json_schema", "json_object")
}


class ScriptedLLM(ScriptedServer):
    """An OpenAI-compatible chat completions server replaying `replies` (message texts) in order.

    `refusals` maps a `response_format` type to the error the server answers it
    with (the request is recorded, no scripted reply is used up).
    """

    url_suffix = "/v1"

    def __init__(self, *replies: Reply | str, reject_response_format: bool = False,
                 refusals: dict[str, Reply] | None = None) -> None:
        super().__init__(*replies)
        self.reject_response_format = reject_response_format
        self.refusals = refusals or {}

    def _as_reply(self, reply: Reply | str) -> Reply:
        return reply if isinstance(reply, Reply) else Reply(text=reply)

    def accepts(self, path: str) -> bool:
        return path.rstrip("/").endswith("/chat/completions")

    def reply_to(self, request: dict[str, Any]) -> Reply:
        if self.reject_response_format and "response_format" in request:
            return Reply(text='{"error": {"message": "response_format is not supported"}}', status=400)
        shape = (request.get("response_format") or {}).get("type")
        if shape in self.refusals:
            return self.refusals[shape]
        return super().reply_to(request)

    @property
    def shapes(self) -> list[str]:
        """The `response_format` type of each request, "text" when it had none."""
        return [(body.get("response_format") or {}).get("type", "text") for body in self.requests]

    def success_body(self, reply: Reply, request: dict[str, Any]) -> str:
        return json.dumps(_completion(reply.text, request.get("model", "scripted")))

    def stream_events(self, reply: Reply, request: dict[str, Any]) -> Iterator[str] | None:
        if not request.get("stream"):
            return None
        return _chunks(reply, request.get("model", "scripted"), self._stopping)

    @property
    def prompts(self) -> list[str]:
        """The concatenated message contents of each request, in order."""
        return ["\n".join(m.get("content") or "" for m in body.get("messages", [])) for body in self.requests]


# A passage as the prompt shows it to the model: its handle and its text (answer/llm/prompt.py writes them).
_PASSAGE = re.compile(r'<passage handle="(c\d+)"[^>]*>\n(.*?)\n</passage>', re.DOTALL)


def passages(request: dict[str, Any]) -> list[tuple[str, str]]:
    """The (handle, text) of each passage a chat request's user message shows the model, in order."""
    user = next((m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user"), "")
    return _PASSAGE.findall(user)


def quoted(request: dict[str, Any], pattern: re.Pattern[str] | str) -> tuple[str, str]:
    """The handle of the first passage `pattern` is found in, and the text it matches there: a quote a script can cite."""
    return next((h, m.group(0)) for h, text in passages(request) if (m := re.search(pattern, text)))


class HoldingLLM(ScriptedLLM):
    """A scripted model whose replies may stop part-way (`Reply.hold=self.go_on`) until the test lets them go on."""

    def __init__(self) -> None:
        super().__init__()
        self.go_on = threading.Event()


def _completion(text: str | None, model: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


STREAM_PIECE_CHARS = 7  # a few tokens' worth per chunk, as a real server sends them


def _chunks(reply: Reply, model: str, stopping: threading.Event) -> Iterator[str]:
    """A chat completion as OpenAI-style stream chunks, holding or cutting where the reply says."""
    text = reply.text or ""
    held = text.index(reply.hold_after) + len(reply.hold_after) if reply.hold and reply.hold_after in text else -1
    cut = text.index(reply.cut_after) + len(reply.cut_after) if reply.cut_after and reply.cut_after in text else -1
    pieces = [text[i : i + STREAM_PIECE_CHARS] for i in range(0, len(text), STREAM_PIECE_CHARS)]
    sent = 0
    for piece in pieces:
        if 0 <= cut <= sent:
            return  # closed without [DONE]
        delta = {"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}
        yield json.dumps({"id": "chatcmpl-stream", "object": "chat.completion.chunk", "created": int(time.time()),
                          "model": model, "choices": [delta]})
        sent += len(piece)
        if reply.hold is not None and 0 <= held <= sent and held > sent - len(piece):
            while not reply.hold.wait(0.05):
                if stopping.is_set():
                    return
    yield json.dumps({"id": "chatcmpl-stream", "object": "chat.completion.chunk", "created": int(time.time()),
                      "model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    yield "[DONE]"


def _handler(script: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                body = {"undecodable": True}
            path = self.path.split("?")[0]
            if not script.accepts(path):
                self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                return
            reply = script._next(path, body)
            if reply.delay and script._stopping.wait(reply.delay):
                return
            if reply.status != 200:
                message = reply.text or f"scripted HTTP {reply.status}"
                self._send(reply.status, json.dumps({"error": {"message": message, "type": "scripted", "code": reply.status}}))
                return
            events = script.stream_events(reply, body)
            if events is not None:
                self._stream(events)
                return
            self._send(200, script.success_body(reply, body))

        def _stream(self, events: Iterator[str]) -> None:
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event in events:
                    self.wfile.write(f"data: {event}\n\n".encode())
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _send(self, status: int, data: str) -> None:
            encoded = data.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(encoded)))
                self.end_headers()
                self.wfile.write(encoded)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

    return Handler
