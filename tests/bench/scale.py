"""One scale point, run in its own process: `python -m tests.bench.scale CHUNKS WORKDIR [options]` prints JSON.

Builds a synthetic corpus of about CHUNKS chunks and indexes it into
embedded Chroma, then measures, side by side in the same process and store:
our retrieval against a dense-only top-5 query (embed + one store query),
a no-op and a 1 %-of-pages re-ingest, the first query after it (the same
retriever: its chunk table refreshes by the changed ids), the table's size,
index size and peak memory; then queries answered in a loop while another
1 % re-ingest runs in a thread of the same process (`during_reingest`:
steady p95, p95 and max during the ingest and until the background refresh
has swapped the next table in, and after), so the cost a visitor pays for a
publish shows as figures.

Past `--real` texts, vectors are real ones reused with small noise (see
`ReusedVectors`), so a 100k point builds in minutes instead of an hour of
embedding; questions are always embedded by the real model.
`--url URL` skips the build and measures queries against a `chroma run`
server already serving WORKDIR/chroma.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

QUERIES = 60
WARMUP = 10


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ms(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000, 2) if ordered else 0.0


class ReusedVectors:
    """The real model for the first `real` texts; each later text reuses one of their vectors plus small noise.

    The reused vector is chosen by a hash of the text, so runs are
    repeatable; the noise keeps vectors distinct, as an index of real ones is.
    """

    def __init__(self, inner: Any, real: int, noise: float = 0.02) -> None:
        import numpy as np

        self.inner, self.real, self.noise = inner, real, noise
        self.id, self.dimension = inner.id, inner.dimension
        self._pool: list[Any] = []
        self._np = np
        self.reused = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        np = self._np
        fresh = max(0, min(len(texts), self.real - len(self._pool)))
        out = [np.asarray(v, dtype=np.float32) for v in self.inner.embed(list(texts[:fresh]))] if fresh else []
        self._pool.extend(out)
        for text in texts[fresh:]:
            seed = int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)
            rng = np.random.default_rng(seed)
            vector = self._pool[seed % len(self._pool)] + rng.normal(0.0, self.noise, self.dimension).astype(np.float32)
            out.append(vector / np.linalg.norm(vector))
            self.reused += 1
        return [v.tolist() for v in out]


def questions() -> list[str]:
    from .synthetic import NOUNS, VERBS

    return [f"How do I {VERBS[i % len(VERBS)]} the {NOUNS[(i * 7) % len(NOUNS)]} limit?" for i in range(QUERIES)]


def measure_queries(store: Any, embedder: Any, retriever: Any = None) -> dict[str, Any]:
    """Ours and a dense-only top-5 query, interleaved question by question, after a warm-up.

    A retriever passed in keeps the chunk table it holds, so its first query
    after an index change is the incremental refresh; a new one reads the index whole.
    """
    from retrieval.services import open_retriever
    from retrieval.viewer import Viewer
    from web.settings import Settings

    retriever = retriever or open_retriever(Settings(), store=store, embedder=embedder)
    viewer = Viewer.anonymous()
    started = time.perf_counter()
    retriever.search("warm the chunk table and the lexical index", viewer)
    first_s = time.perf_counter() - started
    ours, dense, embed = [], [], []
    for n, question in enumerate(questions()):
        t0 = time.perf_counter()
        retriever.search(question, viewer)
        t1 = time.perf_counter()
        vector = embedder.embed([question])[0]
        t2 = time.perf_counter()
        store.query(vector, 5, viewer.groups)
        t3 = time.perf_counter()
        if n >= WARMUP:
            ours.append(t1 - t0)
            dense.append(t3 - t1)
            embed.append(t2 - t1)
    return {
        "ours": {"p50_ms": ms(ours, 50), "p95_ms": ms(ours, 95)},
        "dense_top5": {"p50_ms": ms(dense, 50), "p95_ms": ms(dense, 95)},
        "query_embedding": {"p50_ms": ms(embed, 50)},
        "ratio_p50": round(ms(ours, 50) / max(ms(dense, 50), 1e-9), 2),
        "ratio_p95": round(ms(ours, 95) / max(ms(dense, 95), 1e-9), 2),
        "first_query_seconds": round(first_s, 2),  # loads (or refreshes) the chunk table and builds the BM25 index
        "table_rows_read": retriever.snapshot.reread,
        "questions": len(ours),
    }


def edit_pages(content: Path, share: float) -> int:
    from ingest.corpus import content_files

    files = content_files(content)
    step = max(1, round(1 / share))
    edited = files[::step]
    for path in edited:
        path.write_text(path.read_text(encoding="utf-8") + "\n\nEdited for the benchmark: one changed paragraph.\n",
                        encoding="utf-8")
    return len(edited)


class FullCollections:
    """Times the cyclic collector's full collections (each one pauses every thread) while it is entered."""

    def __init__(self, origin: float) -> None:
        self.pauses: list[float] = []
        self.began: list[float] = []  # seconds after `origin`
        self.collected: list[int] = []  # unreachable objects each one found (what freezing without it would keep)
        self.origin = origin
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if info.get("generation") != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append(time.perf_counter() - self._started)
            self.began.append(self._started - self.origin)
            self.collected.append(int(info.get("collected", 0)))

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._callback)

    def summary(self) -> dict[str, Any]:
        return {"n": len(self.pauses), "max_ms": ms(self.pauses, 100) if self.pauses else 0.0,
                "over_50ms": sum(1 for p in self.pauses if p > 0.05),
                "at_s": [round(b, 2) for b, p in zip(self.began, self.pauses, strict=True) if p > 0.05],
                "collected": self.collected}


def build_and_measure(size: int, work: Path, real: int, *, freeze: bool = True) -> dict[str, Any]:
    from ingest.corpus import load_corpus
    from retrieval.heap import freeze_long_lived, share_the_interpreter
    from retrieval.indexer import sync_index
    from retrieval.services import open_embedder, open_retriever
    from retrieval.store import ChromaStore
    from web.settings import Settings

    from .synthetic import write_corpus

    content, chroma = work / "content", work / "chroma"
    pages = write_corpus(content, size)
    model = open_embedder(Settings())
    model.embed(["warm up"])
    writer = ReusedVectors(model, real)
    store = ChromaStore(path=str(chroma))
    started = time.perf_counter()
    full = sync_index(load_corpus(content), store, writer)
    ingest_s = time.perf_counter() - started
    result: dict[str, Any] = {
        "chunks": full.chunks_total, "pages": pages,
        "vectors": {"real": full.chunks_embedded - writer.reused, "reused_with_noise": writer.reused},
        "ingest": {"seconds": round(ingest_s, 1), "embed_loop_seconds": full.embed_seconds},
    }
    if writer.reused == 0 and size <= 2_000:  # the model's own time for the same texts, for the ratio
        texts = [c.embedding_text for c in load_corpus(content).chunks()]
        started = time.perf_counter()
        model.embed(texts)
        encode_s = time.perf_counter() - started
        result["ingest"] |= {"pure_encode_seconds": round(encode_s, 1), "ratio": round(ingest_s / encode_s, 2)}
    retriever = open_retriever(Settings(), store=store, embedder=model)
    result["query"] = measure_queries(store, model, retriever)
    if freeze:  # as a serving process does once it is warm (web.__main__.warm), and after every swap
        retriever.snapshot.on_swap = freeze_long_lived
        freeze_long_lived()
    share_the_interpreter()  # as every warm serving process does
    result["heap_frozen"] = freeze
    noop_s, _ = timed(lambda: sync_index(load_corpus(content), store, writer))
    edited = edit_pages(content, 0.01)
    served = load_corpus(content)  # what a serving process holds: its next ingest parses only what changed
    served.chunks()  # as the ingest that published it did
    changed_s, changed = timed(lambda: sync_index(load_corpus(content), store, writer))
    result["reingest"] = {"noop_seconds": round(noop_s, 2), "one_percent_pages": edited,
                          "one_percent_seconds": round(changed_s, 1), "one_percent_chunks_embedded": changed.chunks_embedded}
    # The same retriever: its first query after the re-ingest refreshes its table by the changed ids only.
    result["query_after_reingest"] = measure_queries(store, model, retriever)
    table = retriever.snapshot.table()
    result["during_reingest"] = measure_during_reingest(store, model, writer, retriever, content, served)
    result["chunk_table"] = {"rows": len(table), "vectors_mb": round(table.vectors.nbytes / 2**20, 1),
                             "rss_mb_now": current_rss_mb()}
    result["index_mb"] = round(folder_size(chroma) / 2**20, 1)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def measure_during_reingest(store: Any, embedder: Any, writer: Any, retriever: Any, content: Path,
                            served: Any = None) -> dict[str, Any]:
    """Query latency before, during and after a 1 % re-ingest run in another thread (the in-process ingest's path).

    The ingest tells the searcher at its access step, as `Services.ingest`
    does; the queries never wait for the next table, which is prepared in the
    background and swapped in. "during" runs from the ingest's start until
    the swap after its commit. `served`, the corpus the process serves, lends
    the ingest its unchanged pages, and the rows its last ingest left are
    known (`Services.ingest` does the same).
    """
    import threading

    from ingest.corpus import load_corpus
    from retrieval.heap import building
    from retrieval.indexer import KnownRows, sync_index
    from retrieval.viewer import Viewer

    viewer, lexical = Viewer.anonymous(), retriever.snapshot
    known = KnownRows()
    known.read(store)  # as the serving process's previous ingest left it
    if lexical.on_swap is not None:  # a serving process froze those rows with its warm heap (web.__main__.warm)
        lexical.on_swap()
    asked = questions()

    starts: list[float] = []

    def loop(until: Any, limit: int) -> list[float]:
        times: list[float] = []
        n = 0
        while not until() and n < limit:
            t0 = time.perf_counter()
            retriever.search(asked[n % len(asked)], viewer)
            times.append(time.perf_counter() - t0)
            starts.append(t0)
            n += 1
        return times

    steady = loop(lambda: False, 3 * QUERIES)[WARMUP:]
    edited = edit_pages(content, 0.01)
    finished = threading.Event()
    report: dict[str, Any] = {}

    def ingest() -> None:
        try:
            with building():  # as `Services.ingest` holds full collections back
                corpus = load_corpus(content, previous=served)
                report["parse_seconds"] = round(time.perf_counter() - started, 2)
                with lexical.publishing():  # as `Services.ingest`: one next table, after the commit
                    report["run"] = sync_index(corpus, store, writer, on_access=lambda _: lexical.follow(), known=known)
        finally:
            report["returned"] = time.perf_counter()
            finished.set()

    prepared = lexical.prepared
    started = time.perf_counter()
    swapped = lexical.on_swap
    swap: dict[str, float] = {}

    def on_swap() -> None:  # when the new table was served, and how long the swap's own collection took
        at = time.perf_counter()
        if swapped is not None:
            swapped()
        swap.update(at_s=round(at - started, 2), collect_ms=round((time.perf_counter() - at) * 1000, 1))

    lexical.on_swap = on_swap
    thread = threading.Thread(target=ingest, name="bench-ingest")
    del starts[:]
    try:
        with FullCollections(started) as collections:
            thread.start()
            during = loop(lambda: finished.is_set() and lexical.prepared > prepared and lexical.caught_up(), 100_000)
        caught_up_s = time.perf_counter() - started
        thread.join()
    finally:
        lexical.on_swap = swapped
    returned = report["returned"]
    slowest = sorted(zip(during, starts, strict=True), reverse=True)[:3]
    ingesting = [t for t, at in zip(during, starts, strict=True) if at < returned]  # the ingest shares this process
    swapping = [t for t, at in zip(during, starts, strict=True) if at >= returned]  # from its return to the swap
    after = loop(lambda: False, 3 * QUERIES)
    run = report.get("run")
    return {
        "steady": {"p50_ms": ms(steady, 50), "p95_ms": ms(steady, 95), "max_ms": ms(steady, 100), "n": len(steady)},
        "during": {"p50_ms": ms(during, 50), "p95_ms": ms(during, 95), "max_ms": ms(during, 100), "n": len(during),
                   "over_1s": sum(1 for t in during if t > 1.0)},
        "while_ingesting": {"p95_ms": ms(ingesting, 95), "max_ms": ms(ingesting, 100), "n": len(ingesting)},
        "ingest_return_to_swap": {"p95_ms": ms(swapping, 95), "max_ms": ms(swapping, 100), "n": len(swapping),
                                  "first_ms": round(swapping[0] * 1000, 2) if swapping else None},
        "after": {"p50_ms": ms(after, 50), "p95_ms": ms(after, 95), "max_ms": ms(after, 100), "n": len(after)},
        "p95_during_over_steady": round(ms(during, 95) / max(ms(steady, 95), 1e-9), 2),
        "p95_after_over_steady": round(ms(after, 95) / max(ms(steady, 95), 1e-9), 2),
        "pages_edited": edited,
        "chunks_embedded": run.chunks_embedded if run is not None else None,
        "ingest_seconds": run.seconds if run is not None else None,
        "parse_seconds": report.get("parse_seconds"),
        "access_live_seconds": run.access_seconds if run is not None else None,
        "ingest_start_to_swap_seconds": round(caught_up_s, 2),
        "table_rows_read": lexical.reread,
        "full_collections": collections.summary(),
        # where the slowest queries fell: seconds after the ingest started, beside when it returned and the swap
        "slowest": [{"at_s": round(at - started, 2), "ms": round(t * 1000, 1)} for t, at in slowest],
        "ingest_returned_s": round(returned - started, 2),
        "swap": swap,
    }


def current_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def timed(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def measure_server(url: str) -> dict[str, Any]:
    from retrieval.services import open_embedder
    from retrieval.store import ChromaStore
    from web.settings import Settings

    model = open_embedder(Settings())
    model.embed(["warm up"])
    result = measure_queries(ChromaStore(url=url), model)
    return {"query": result, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.scale", description=__doc__)
    parser.add_argument("chunks", type=int)
    parser.add_argument("work", type=Path)
    parser.add_argument("--real", type=int, default=10_000, help="texts embedded by the model; later ones reuse vectors")
    parser.add_argument("--url", help="measure queries against this Chroma server (no build)")
    parser.add_argument("--no-freeze", action="store_true", help="leave the warm heap in the collector's scans")
    args = parser.parse_args(argv)
    report = measure_server(args.url) if args.url else build_and_measure(args.chunks, args.work, args.real,
                                                                         freeze=not args.no_freeze)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
