"""`make bench` — ingest, re-ingest, query, answer-log size, the content-gap report, scale, server load (1, 2, 4 workers), publish-to-answerable and a baseline, as JSON.

Benchmarks, not tests: nothing here asserts a time. Each figure is a median
over several runs (latencies are reported as p50/p95 of their distribution).
Results go to bench-results/bench.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def dist_ms(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 50) * 1000, 2), "p95_ms": round(percentile(values, 95) * 1000, 2), "n": len(values)}


def median_run(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def machine() -> dict[str, Any]:
    import torch

    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "memory_gib": round(mem, 1), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "processor": platform.processor() or platform.machine()}


def load_questions() -> list[dict[str, Any]]:
    path = REPO / "tests" / "eval" / "questions.jsonl"
    if path.exists():
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return [r for r in rows if r.get("answerable") and not r.get("groups")]
    return [{"question": q, "gold": []} for q in (
        "How long do I have to ask for a refund?", "What is the maximum payload size?",
        "How many times is a failed delivery retried?", "Which TLS versions does the API accept?")]


def bench_outline(content: Path, runs: int) -> dict[str, Any]:
    from ingest.corpus import load_corpus

    seconds, chunks = median_run(lambda: load_corpus(content).chunks(), runs)
    pages = len(load_corpus(content).pages)
    return {"pages": pages, "chunks": len(chunks), "seconds": round(seconds, 4),
            "pages_per_s": round(pages / seconds, 1), "chunks_per_s": round(len(chunks) / seconds, 1)}


def _edit(path: Path, marker: str) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text + f"\n\nEdited for the benchmark ({marker}): this paragraph changes one section.\n", encoding="utf-8")


def bench_index(content: Path, work: Path, embedder: Any) -> tuple[dict[str, Any], Any, Path]:
    """Full build, then no-op, one-page and 10%-of-pages re-ingests of a copy of content/."""
    from ingest.corpus import content_files, load_corpus
    from retrieval.indexer import sync_index
    from retrieval.store import ChromaStore

    site = work / "content"
    shutil.copytree(content, site)
    store = ChromaStore(path=str(work / "data" / "chroma"))
    embedder.embed(["load the model before timing"])
    full = sync_index(load_corpus(site), store, embedder)
    noop_s, noop = median_run(lambda: sync_index(load_corpus(site), store, embedder), 3)
    files = content_files(site)
    one_times, ten_times = [], []
    for run in range(3):
        _edit(files[run], f"one-{run}")
        started = time.perf_counter()
        one = sync_index(load_corpus(site), store, embedder)
        one_times.append(time.perf_counter() - started)
        for path in files[run * 7 :: 10]:
            _edit(path, f"ten-{run}")
        started = time.perf_counter()
        ten = sync_index(load_corpus(site), store, embedder)
        ten_times.append(time.perf_counter() - started)
    texts = [c.embedding_text for c in load_corpus(site).chunks()]
    encode_s, _ = median_run(lambda: embedder.embed(texts), 1)  # the model's own time for the same texts
    result = {
        "full": {"seconds": full.seconds, "embed_seconds": full.embed_seconds, "chunks": full.chunks_embedded,
                 "chunks_per_s": round(full.chunks_embedded / full.seconds, 1),
                 "embedding_share": round(full.embed_seconds / full.seconds, 3),
                 "pure_encode_seconds": round(encode_s, 2), "ratio_to_pure_encode": round(full.seconds / encode_s, 2),
                 "embed_loop_ratio_to_pure_encode": round(full.embed_seconds / encode_s, 2)},
        "noop": {"seconds": round(noop_s, 3), "chunks_embedded": noop.chunks_embedded},
        "one_page_edit": {"seconds": round(statistics.median(one_times), 3), "chunks_embedded": one.chunks_embedded},
        "ten_percent_edit": {"seconds": round(statistics.median(ten_times), 3), "chunks_embedded": ten.chunks_embedded},
    }
    return result, store, site


def bench_query(store: Any, embedder: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    from answer.contract.draft import Draft, DraftClaim, Quote
    from answer.contract.verify import verify
    from answer.followup import CarrySubject, Turn
    from answer.generate import ExtractiveGenerator
    from answer.pipeline import Answerer
    from retrieval.services import open_retriever
    from retrieval.viewer import Viewer
    from web.settings import Settings

    retriever = open_retriever(Settings(), store=store, embedder=embedder)
    answerer = Answerer(retriever, ExtractiveGenerator(embedder))
    viewer = Viewer.anonymous()
    retrieval_times, dense_times, answer_times, verify_times = [], [], [], []
    for row in questions * 3:  # the dense-only top-5 query (embed + one store query) of the same store, interleaved
        started = time.perf_counter()
        retriever.search(row["question"], viewer)
        retrieval_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        store.query(embedder.embed([row["question"]])[0], 5, viewer.groups)
        dense_times.append(time.perf_counter() - started)
    for row in questions:
        rset = retriever.search(row["question"], viewer)
        started = time.perf_counter()
        answerer.ask(row["question"], viewer)
        answer_times.append(time.perf_counter() - started)
        if rset.hits:
            draft = Draft(False, tuple(DraftClaim((Quote(h.handle, h.chunk.text[:80]),), h.chunk.text[:80]) for h in rset.hits[:3]))
            started = time.perf_counter()
            for _ in range(20):
                verify(draft, rset, viewer)
            verify_times.append((time.perf_counter() - started) / 20)
    # Each question as a follow-up to the one before: one naming its own subject is searched two ways before it is
    # answered (answer/followup.py), which is what a visitor's turn waits for besides the answer itself.
    reading_times = []
    for previous, row in zip(questions, questions[1:], strict=False):
        readings = CarrySubject().readings(row["question"], [Turn(previous["question"], previous["question"])])
        if len(readings) > 1:
            started = time.perf_counter()
            answerer.likelier(readings, viewer)
            reading_times.append(time.perf_counter() - started)
    ours, dense = dist_ms(retrieval_times), dist_ms(dense_times)
    return {"retrieval": ours, "dense_top5": dense, "ratio_p50": round(ours["p50_ms"] / dense["p50_ms"], 2),
            "ratio_p95": round(ours["p95_ms"] / dense["p95_ms"], 2), "answer_extractive": dist_ms(answer_times),
            "verifier_per_answer": dist_ms(verify_times), "followup_two_readings": dist_ms(reading_times),
            "retriever": type(retriever).__name__}


def bench_baseline(content: Path, work: Path, store: Any, embedder: Any, questions: list[dict[str, Any]]) -> dict[str, Any]:
    from retrieval.services import open_retriever
    from retrieval.viewer import Viewer
    from web.settings import Settings

    from .baseline import BaselineIndex, fixed_chunks, overlaps

    spans = {c.id: (c.source, (c.span.start, c.span.end)) for c in store.chunks()}
    baseline = BaselineIndex(work / "baseline-chroma", embedder)
    build_s = baseline.build(fixed_chunks(content))
    ours = open_retriever(Settings(), store=store, embedder=embedder)
    scored = [q for q in questions if q.get("gold")]
    hits_base = hits_ours = 0
    times_base, times_ours = [], []
    for row in scored:
        gold = [spans[g] for g in row["gold"] if g in spans]
        started = time.perf_counter()
        found = baseline.search(row["question"], 5)
        times_base.append(time.perf_counter() - started)
        hits_base += any(overlaps(c, src, span) for c in found for src, span in gold)
        started = time.perf_counter()
        rset = ours.search(row["question"], Viewer.anonymous(), k=5)
        times_ours.append(time.perf_counter() - started)
        hits_ours += any(h.chunk.id in row["gold"] for h in rset.hits[:5])
    n = max(len(scored), 1)
    return {"questions": len(scored),
            "baseline": {"recall_at_5": round(hits_base / n, 3), "latency": dist_ms(times_base), "build_seconds": round(build_s, 2),
                         "chunks": len(baseline.chunks), "method": "1000-char chunks, dense top-5"},
            "ours": {"recall_at_5": round(hits_ours / n, 3), "latency": dist_ms(times_ours),
                     "method": type(ours).__name__ + " over heading-anchored chunks"}}


def bench_scale(sizes: list[int], work: Path, real: int) -> list[dict[str, Any]]:
    """Each size in its own process (so peak memory is that size's alone), then its index behind a `chroma run` server."""
    from tests.chroma_server import chroma_server

    results = []
    for size in sizes:
        folder = work / f"scale-{size}"
        point = _scale_run([str(size), str(folder), "--real", str(real)])
        point["chunks_requested"] = size
        if "error" not in point:
            started = time.perf_counter()
            with chroma_server(folder / "chroma", startup=600) as url:
                point["chroma_server"] = _scale_run([str(size), str(folder), "--url", url])
                point["chroma_server"]["server_start_seconds"] = round(time.perf_counter() - started, 1)
        results.append(point)
        if len(results) > 1 and "error" not in results[-2] and "error" not in point:
            before, after = results[-2]["query"]["ours"], point["query"]["ours"]
            point["growth_from_previous"] = {"chunks_x": round(point["chunks"] / results[-2]["chunks"], 1),
                                             "p50_x": round(after["p50_ms"] / before["p50_ms"], 2),
                                             "p95_x": round(after["p95_ms"] / before["p95_ms"], 2)}
        shutil.rmtree(folder / "content", ignore_errors=True)
    return results


def _scale_run(args: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "tests.bench.scale", *args], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip()[-400:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_server(work: Path, site: Path, requests: int, concurrency: int) -> dict[str, Any]:
    from .load import run_load

    return run_load(data_dir=work / "data", content_dir=site, requests=requests, concurrency=concurrency)


def bench_workers(work: Path, site: Path, requests: int, concurrency: int) -> dict[str, Any]:
    from .load import run_workers

    return run_workers(work=work, content_dir=site, workers=(1, 2, 4), requests=requests, concurrency=concurrency)


def bench_replicas(work: Path, site: Path, model_dir: Path, requests: int, concurrency: int) -> dict[str, Any]:
    """One and two replicas over one Chroma server and a throwaway PostgreSQL cluster (Debian's postgresql)."""
    from tests.postgres import PostgresCluster, binaries

    from .replicas import run_replicas

    found = binaries()
    if found is None:
        return {"error": "PostgreSQL's initdb and pg_ctl were not found (apt-get install postgresql)"}
    cluster = PostgresCluster(found).start()
    try:
        return run_replicas(work=work, content_dir=site, model_dir=model_dir, database_url=cluster.database(),
                            requests=requests, concurrency=concurrency)
    finally:
        cluster.stop()


def print_table(report: dict[str, Any]) -> None:
    def rows(prefix: str, value: Any) -> list[tuple[str, str]]:
        if isinstance(value, dict):
            return [r for k, v in value.items() for r in rows(f"{prefix}.{k}" if prefix else k, v)]
        if isinstance(value, list):
            return [r for i, v in enumerate(value) for r in rows(f"{prefix}[{i}]", v)]
        return [(prefix, str(value))]

    table = rows("", {k: v for k, v in report.items() if k != "machine"})
    width = max(len(k) for k, _ in table)
    for key, value in table:
        print(f"{key:<{width}}  {value}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000", help="synthetic corpus sizes in chunks")
    parser.add_argument("--large", action="store_true", help="add the 100k-chunk size (vectors past --real reused)")
    parser.add_argument("--real", type=int, default=10_000, help="scale points: texts the model embeds; later ones reuse vectors")
    parser.add_argument("--requests", type=int, default=120)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--out", default=str(REPO / "bench-results" / "bench.json"))
    parser.add_argument("--gap-answers", type=int, default=10_000, help="answers in the content-gap report's log")
    parser.add_argument("--skip", default="", help="comma-separated sections to skip: scale,server,workers,replicas,publish,baseline,answer_log,gaps")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    sizes = [int(s) for s in args.sizes.split(",") if s] + ([100_000] if args.large else [])

    from retrieval.services import open_embedder
    from web.settings import Settings

    started = time.perf_counter()
    embedder = open_embedder(Settings())
    questions = load_questions()
    report: dict[str, Any] = {"machine": machine(), "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    content = REPO / "content"
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(tmp)
        report["outline"] = bench_outline(content, runs=5)
        report["index"], store, site = bench_index(content, work, embedder)
        report["query"] = bench_query(store, embedder, questions)
        if "answer_log" not in skip:
            from .answer_log import bench_answer_log

            report["answer_log"] = bench_answer_log(work, store, embedder, questions)
        if "gaps" not in skip:
            from .gaps import bench_gap_report

            report["gap_report"] = bench_gap_report(work, store, embedder, answers=args.gap_answers)
        if "baseline" not in skip:
            report["baseline_comparison"] = bench_baseline(content, work, store, embedder, questions)
        if "server" not in skip:
            report["server"] = bench_server(work, site, args.requests, args.concurrency)
        if "workers" not in skip:
            report["workers"] = bench_workers(work, site, args.requests, args.concurrency)
        if "replicas" not in skip:
            from retrieval.provision import provision_default_model

            report["replicas"] = bench_replicas(work, site, provision_default_model(Settings().models_dir),
                                                args.requests, args.concurrency)
        if "publish" not in skip:
            from retrieval.provision import provision_default_model

            from .publish import bench_publish

            report["publish"] = bench_publish(work, content, provision_default_model(Settings().models_dir))
        if "scale" not in skip:
            report["scale"] = bench_scale(sizes, work, args.real)
    report["total_seconds"] = round(time.perf_counter() - started, 1)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print_table(report)
    print(f"\nwrote {out}; the docs' tables from it: python -m tests.docs_figures --bench {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
