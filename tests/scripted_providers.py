"""Scripted Anthropic Messages and Gemini generateContent servers on 127.0.0.1, speaking each wire format.

Like `scripted_llm` (the same `ScriptedServer`), a real HTTP server replays queued replies and records every
request, so tests drive the real litellm client for these providers: request
building (document blocks, parts), response parsing (Anthropic `citations`,
Gemini `groundingMetadata`), HTTP errors and timeouts. A reply's text is the
whole response body, so a test can also send a body that is not well formed.
The builders below write the bodies the providers document.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from tests.scripted_llm import Reply, ScriptedServer

ROUTES = {"anthropic": "/v1/messages", "gemini": ":generateContent"}


def cite(document_index: int, cited_text: str, start: int | None = None, end: int | None = None) -> dict[str, Any]:
    """An Anthropic `char_location` citation; the range defaults to where the text is supposed to be (none)."""
    citation: dict[str, Any] = {"type": "char_location", "cited_text": cited_text, "document_index": document_index,
                                "document_title": f"document {document_index}"}
    if start is not None and end is not None:
        citation |= {"start_char_index": start, "end_char_index": end}
    return citation


def anthropic_message(*blocks: tuple[str, Sequence[dict[str, Any]]] | str) -> dict[str, Any]:
    """A Messages API response: each block is text, or (text, citations)."""
    content = []
    for block in blocks:
        text, citations = (block, ()) if isinstance(block, str) else block
        content.append({"type": "text", "text": text} | ({"citations": list(citations)} if citations else {}))
    return {"id": "msg_scripted", "type": "message", "role": "assistant", "model": "claude-scripted",
            "content": content, "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}


def grounded(uri: str, text: str, title: str = "") -> dict[str, Any]:
    """A Gemini grounding chunk naming a document by uri (we name documents by their handle)."""
    return {"retrievedContext": {"uri": uri, "title": title, "text": text}}


def support(segment: str, *indices: int, text: str = "") -> dict[str, Any]:
    """A Gemini grounding support: a segment of the response (UTF-8 byte offsets) and the chunks behind it."""
    start = text.encode().find(segment.encode()) if text else 0
    return {"segment": {"startIndex": max(start, 0), "endIndex": max(start, 0) + len(segment.encode()), "text": segment},
            "groundingChunkIndices": list(indices), "confidenceScores": [0.9] * len(indices)}


def gemini_response(text: str, chunks: Sequence[dict[str, Any]] = (), supports: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """A generateContent response with one candidate and its groundingMetadata (omitted when there is none)."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
    if chunks or supports:
        candidate["groundingMetadata"] = {"groundingChunks": list(chunks), "groundingSupports": list(supports)}
    return {"candidates": [candidate], "modelVersion": "gemini-scripted",
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}


class ScriptedProvider(ScriptedServer):
    """Replays raw response bodies for one provider's route; `requests` holds every request body, decoded."""

    def __init__(self, wire: str, *replies: Reply | dict[str, Any]) -> None:
        if wire not in ROUTES:
            raise ValueError(f"wire must be one of {sorted(ROUTES)}, got {wire!r}")
        self.wire = wire
        super().__init__(*replies)

    def _as_reply(self, reply: Reply | dict[str, Any]) -> Reply:
        return reply if isinstance(reply, Reply) else Reply.json(reply)

    def accepts(self, path: str) -> bool:
        return path.endswith(ROUTES[self.wire])

    def success_body(self, reply: Reply, request: dict[str, Any]) -> str:
        return reply.text or ""  # the whole response body, as the provider would send it

    @property
    def documents(self) -> list[list[str]]:
        """The document texts each request carried (Anthropic document blocks; Gemini's document parts)."""
        found = []
        for body in self.requests:
            if self.wire == "anthropic":
                parts = [p for m in body.get("messages", []) for p in (m.get("content") or []) if isinstance(p, dict)]
                found.append([p["source"]["data"] for p in parts if p.get("type") == "document"])
            else:
                texts = [p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", [])]
                found.append([after for before, after in pairwise(texts) if before.startswith("Document id:")])
        return found

    @property
    def prompts(self) -> list[str]:
        """Everything each request said, as one string (system text, documents, question, feedback)."""
        return [json.dumps(body, ensure_ascii=False) for body in self.requests]
