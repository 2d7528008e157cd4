"""Structured-output request shapes, tried in order, and the one each model's server was found to take.

Servers disagree on `response_format`. OpenAI, vLLM, Ollama and llama.cpp's
`llama-server` take `{"type": "json_schema", ...}`; llama-cpp-python's server
answers that with a 500 (a validation error naming `response_format`) but
takes `{"type": "json_object", "schema": ...}` and constrains its output with
a grammar; some servers take neither. A server that rejects one shape gets
the next (`json_schema` → `json_object` → JSON in the text of the reply, which
the prompt asks for anyway), and the choice is remembered per server and
model for the life of the process, so only the first request pays for it.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

Shape = Literal["json_schema", "json_object", "text"]
SHAPES: tuple[Shape, ...] = ("json_schema", "json_object", "text")


def response_format(shape: Shape, schema: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The `response_format` request field for a shape; None for JSON-in-text (no field at all)."""
    if shape == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if shape == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


class FormatMemory:
    """Which shape each (server, model) takes: the first one it has not rejected."""

    def __init__(self) -> None:
        self._chosen: dict[tuple[str, str], Shape] = {}
        self._lock = threading.Lock()

    def current(self, server: str, model: str) -> Shape:
        with self._lock:
            return self._chosen.get((server, model), SHAPES[0])

    def reject(self, server: str, model: str, shape: Shape) -> Shape:
        """Record that `shape` was refused; the next shape to try (never past JSON-in-text)."""
        following = SHAPES[min(SHAPES.index(shape) + 1, len(SHAPES) - 1)]
        with self._lock:
            known = self._chosen.get((server, model), SHAPES[0])
            if SHAPES.index(following) > SHAPES.index(known):
                self._chosen[(server, model)] = following
            return self._chosen.get((server, model), following)


FORMATS = FormatMemory()  # process-wide: every generator, judge and condenser on one model shares what was learnt


def rejects_response_format(exc: BaseException, litellm: Any) -> bool:
    """The server refused the request's shape (not its size, content or a passing fault).

    A 400-class error (other than an oversized prompt or a content-policy refusal)
    is about the shape; a 5xx is only when its body names `response_format`, as
    llama-cpp-python's validation error does — any other 5xx stays transient.
    """
    if isinstance(exc, (litellm.ContextWindowExceededError, litellm.ContentPolicyViolationError)):
        return False
    if isinstance(exc, (litellm.BadRequestError, litellm.UnsupportedParamsError, litellm.UnprocessableEntityError)):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and status >= 500 and "response_format" in str(exc)
