"""The pipeline a user might write instead: fixed-size character chunks, dense-only top-k.

Same embedding model, same Chroma, same questions, so the comparison isolates
what heading-anchored chunking and hybrid retrieval buy. A baseline chunk
counts as finding a gold section when its character range overlaps that
section's span in the same source file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ingest.corpus import content_files

CHUNK_CHARS = 1000


@dataclass(frozen=True)
class BaselineChunk:
    id: str
    source: str
    start: int
    end: int
    text: str


def fixed_chunks(root: Path, size: int = CHUNK_CHARS) -> list[BaselineChunk]:
    """Every file cut into `size`-character pieces, front matter and markup included, as naive code does."""
    chunks = []
    for path in content_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        source = path.relative_to(root).as_posix()
        for start in range(0, len(text), size):
            chunks.append(BaselineChunk(f"{source}@{start}", source, start, min(len(text), start + size), text[start : start + size]))
    return chunks


class BaselineIndex:
    """Fixed chunks in an embedded Chroma collection; dense top-k only."""

    def __init__(self, chroma_dir: Path, embedder) -> None:  # noqa: ANN001
        import chromadb
        from chromadb.config import Settings

        self.embedder = embedder
        client = chromadb.PersistentClient(path=str(chroma_dir), settings=Settings(anonymized_telemetry=False))
        self.collection = client.get_or_create_collection("baseline", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
        self.chunks: dict[str, BaselineChunk] = {}

    def build(self, chunks: list[BaselineChunk]) -> float:
        started = time.perf_counter()
        for start in range(0, len(chunks), 64):
            batch = chunks[start : start + 64]
            self.collection.upsert(ids=[c.id for c in batch], embeddings=self.embedder.embed([c.text for c in batch]),
                                   documents=[c.text for c in batch])
            self.chunks.update((c.id, c) for c in batch)
        return time.perf_counter() - started

    def search(self, question: str, k: int = 5) -> list[BaselineChunk]:
        vector = self.embedder.embed([question])[0]
        result = self.collection.query(query_embeddings=[vector], n_results=k, include=[])
        return [self.chunks[i] for i in result["ids"][0]]


def overlaps(chunk: BaselineChunk, source: str, span: tuple[int, int]) -> bool:
    return chunk.source == source and chunk.start < span[1] and span[0] < chunk.end
