"""Server-sent events for progressive answers: one named event per rendered HTML fragment."""

from __future__ import annotations


def sse(event: str, html: str, event_id: int) -> str:
    """One SSE message; every line of the fragment becomes a `data:` line (the client joins them with newlines)."""
    data = "\n".join(f"data: {line}" for line in html.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return f"id: {event_id}\nevent: {event}\n{data}\n\n"
