"""One scale point, run in its own process: `python -m tests.bench.scale CHUNKS WORKDIR` prints JSON.

Builds a synthetic corpus of about CHUNKS chunks, indexes it with the real
model into embedded Chroma, then measures query latency and peak memory.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    from ingest.corpus import load_corpus
    from ingest.settings import Settings
    from retrieval.indexer import sync_index
    from retrieval.services import open_embedder, open_retriever
    from retrieval.store import ChromaStore
    from retrieval.viewer import Viewer

    from .synthetic import NOUNS, VERBS, write_corpus

    size, work = int(sys.argv[1]), Path(sys.argv[2])
    content, chroma = work / "content", work / "chroma"
    pages = write_corpus(content, size)
    embedder = open_embedder(Settings())
    embedder.embed(["warm up"])
    store = ChromaStore(path=str(chroma))
    started = time.perf_counter()
    report = sync_index(load_corpus(content), store, embedder)
    ingest_s = time.perf_counter() - started
    retriever = open_retriever(Settings(), store=store, embedder=embedder)
    viewer = Viewer.anonymous()
    times = []
    for i in range(60):
        question = f"How do I {VERBS[i % len(VERBS)]} the {NOUNS[i % len(NOUNS)]} limit?"
        started = time.perf_counter()
        retriever.search(question, viewer)
        times.append(time.perf_counter() - started)
    times = sorted(times[10:])  # the first queries build lexical caches
    print(json.dumps({
        "chunks": report.chunks_total, "pages": pages, "ingest_seconds": round(ingest_s, 1),
        "embed_seconds": report.embed_seconds, "index_mb": round(folder_size(chroma) / 2**20, 1),
        "query_p50_ms": round(times[len(times) // 2] * 1000, 2), "query_p95_ms": round(times[int(len(times) * 0.95) - 1] * 1000, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
