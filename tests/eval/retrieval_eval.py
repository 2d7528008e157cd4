"""Retrieval eval: recall@1/@5 and MRR of gold sections for dense-only, lexical-only and hybrid retrieval.

`python -m tests.eval.retrieval_eval [--data DIR] [--questions FILE]` indexes
content/ with the real model into Chroma (a temporary folder, or `--data` to
reuse one across runs; the index sync is incremental) and prints a JSON report.

Metrics use the answerable questions only (see tests/eval/README.md):
recall@k = |gold ∩ top-k| / |gold|, averaged; MRR = 1 / rank of the first gold
section in the top 10 (0 when none). `leaks` counts restricted gold sections
returned to a viewer whose row says it must be refused; it must be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = Path(__file__).with_name("questions.jsonl")
TOP = 10

Ranker = Callable[[dict], list[str]]


def load_questions(path: Path = QUESTIONS) -> list[dict]:
    """The question rows, in file order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def viewer_of(row: dict):  # noqa: ANN201
    from retrieval.viewer import Viewer

    return Viewer.of(row["groups"])


def rankers(store, embedder) -> dict[str, Ranker]:  # noqa: ANN001
    """The three methods under test, each mapping a question row to ranked chunk ids."""
    from retrieval.search import DenseRetriever, HybridRetriever
    from retrieval.snapshot import IndexSnapshot

    dense = DenseRetriever(store, embedder, k=TOP, floor=-1.0)
    snapshot = IndexSnapshot(store)
    hybrid = HybridRetriever(store, embedder, k=TOP, snapshot=snapshot)

    def run_dense(row: dict) -> list[str]:
        return [h.chunk.id for h in dense.search(row["question"], viewer_of(row)).hits]

    def run_lexical(row: dict) -> list[str]:
        return [c.id for c, _ in snapshot.search(row["question"], TOP, viewer_of(row).groups)]

    def run_hybrid(row: dict) -> list[str]:
        rset = hybrid.search(row["question"], viewer_of(row), version=row.get("version") or None)
        return [h.chunk.id for h in rset.hits]

    return {"dense": run_dense, "lexical": run_lexical, "hybrid": run_hybrid}


def score(ranked: Sequence[str], gold: Sequence[str]) -> dict[str, float]:
    """recall@1, recall@5 and reciprocal rank of one ranking against its gold ids."""
    wanted = set(gold)
    first = next((rank for rank, cid in enumerate(ranked[:TOP], start=1) if cid in wanted), None)
    return {
        "recall@1": len(wanted & set(ranked[:1])) / len(wanted),
        "recall@5": len(wanted & set(ranked[:5])) / len(wanted),
        "mrr": 1.0 / first if first else 0.0,
    }


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def evaluate(store, embedder, questions: Sequence[dict]) -> dict:  # noqa: ANN001
    """Run every method over the questions; metrics, latency and per-question ranks."""
    methods = rankers(store, embedder)
    for run in methods.values():  # warm-up: model load, first lexical index build
        run({"question": "warm up", "groups": []})
    answerable = [q for q in questions if q["answerable"]]
    refused_with_gold = [q for q in questions if not q["answerable"] and q["gold"]]
    report: dict = {"questions": len(questions), "answerable": len(answerable), "methods": {}, "rows": []}
    per_row: dict[str, dict] = {q["id"]: {"id": q["id"], "kind": q["kind"]} for q in answerable}
    for name, run in methods.items():
        scores, latencies = [], []
        for row in answerable:
            started = time.perf_counter()
            ranked = run(row)
            latencies.append((time.perf_counter() - started) * 1000)
            s = score(ranked, row["gold"])
            scores.append(s)
            per_row[row["id"]][name] = next((r for r, cid in enumerate(ranked, 1) if cid in row["gold"]), None)
        leaks = sum(1 for row in refused_with_gold if set(run(row)) & set(row["gold"]))
        report["methods"][name] = {
            **{m: round(statistics.mean(s[m] for s in scores), 4) for m in ("recall@1", "recall@5", "mrr")},
            "latency_ms_p50": round(percentile(latencies, 0.5), 1),
            "latency_ms_p95": round(percentile(latencies, 0.95), 1),
            "leaks": leaks,
        }
    report["rows"] = list(per_row.values())
    return report


def build_index(data_dir: Path):  # noqa: ANN201
    """content/ indexed into Chroma under data_dir with the provisioned model (incremental)."""
    from ingest.corpus import load_corpus
    from retrieval.embedder import SentenceTransformerEmbedder
    from retrieval.indexer import sync_index
    from retrieval.provision import provision_default_model
    from retrieval.store import ChromaStore

    model = provision_default_model(Path(os.environ.get("DATA_DIR", REPO / ".data")) / "models")
    embedder = SentenceTransformerEmbedder(str(model), model_id="all-MiniLM-L6-v2")
    store = ChromaStore(path=str(data_dir))
    sync_index(load_corpus(REPO / "content"), store, embedder)
    return store, embedder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.eval.retrieval_eval", description=__doc__)
    parser.add_argument("--data", type=Path, help="Chroma folder to reuse (default: a temporary one)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--rows", action="store_true", help="include per-question gold ranks")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store, embedder = build_index(args.data or Path(tmp))
        report = evaluate(store, embedder, load_questions(args.questions))
    if not args.rows:
        report.pop("rows")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
