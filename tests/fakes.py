"""Fakes that behave: a deterministic embedder, an in-memory store, a scripted generator.

They implement the same protocols as the real adapters, so unit tests run in
milliseconds while exercising the real pipeline, verifier and web code.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Any

from answer.contract.draft import Draft, parse_draft
from answer.contract.spans import units
from ingest.documents import Chunk, SourceSpan
from ingest.ids import chunk_id, content_hash, doc_id


class HashEmbedder:
    """Bag-of-words hashed into a fixed number of dimensions: similar words, similar vectors."""

    def __init__(self, dimension: int = 64, model_id: str = "hash-64") -> None:
        self._dimension = dimension
        self._id = model_id
        self.calls = 0

    @property
    def id(self) -> str:
        return self._id

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        out = []
        for text in texts:
            vector = [0.0] * self._dimension
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self._dimension] += 1.0
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            out.append([x / norm for x in vector])
        return out


class CountingEmbedder:
    """Any embedder, keeping the texts it was asked to embed (what a report embedded); told to, it fails like a lost model."""

    def __init__(self, inner: Any, *, fail: bool = False) -> None:
        self.inner = inner
        self.fail = fail
        self.texts: list[str] = []

    @property
    def id(self) -> str:
        return str(self.inner.id)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    def embed(self, texts: Sequence[str]) -> Any:
        if self.fail:
            raise RuntimeError("the model is gone")
        self.texts.extend(texts)
        return self.inner.embed(texts)


class ScriptedGenerator:
    """Replays canned model replies (JSON text) in order and records the feedback it was given."""

    name = "scripted"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.feedback: list[tuple[str, ...]] = []

    def draft(self, question: str, rset, *, feedback: Sequence[str] = ()) -> Draft:  # noqa: ANN001
        self.feedback.append(tuple(feedback))
        reply = self.replies.pop(0) if self.replies else ""
        return parse_draft(reply)


def make_chunk(
    slug: str,
    anchor: str,
    text: str,
    *,
    title: str = "Page",
    heading: str = "Section",
    access: tuple[str, ...] = ("public",),
    part: int = 1,
) -> Chunk:
    """A chunk as ingest would produce it, for tests that do not need a real page."""
    return Chunk(
        id=chunk_id(slug, anchor, part),
        doc_id=doc_id(slug),
        anchor=anchor,
        url=f"/docs/{slug}#{anchor}",
        title=title,
        heading_path=(heading,),
        text=text,
        source=f"{slug}.mdx",
        span=SourceSpan(1, 3, 0, len(text)),
        doc_version="2.4",
        hash=content_hash(title, heading, text),
        access=access,
    )


# Sample chunks shared by the unit, web and LLM tests, so each fact is written once.
REFUND_TEXT = "Refunds are available within 14 days of the charge. Annual plans are refunded pro rata."
REFUNDS = make_chunk("billing/refunds", "refund-windows", REFUND_TEXT, title="Refunds", heading="Refund windows")
LIMITS = make_chunk("billing/limits", "payload-size",
                    "The maximum payload size is 256 KB. Larger events are rejected with error `FD-4131`.",
                    title="Limits", heading="Payload size")


def sentences(text: str) -> list[str]:
    """The quotable units of a chunk's text, as text: what a test probes an answer or a page for."""
    return [u.text for u in units(text)]
