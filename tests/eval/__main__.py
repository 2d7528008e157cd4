"""`make eval` — retrieval and grounding metrics over a docs site, with a report and thresholds.

    python -m tests.eval [--site content|cypress|DIR] [--generator extractive|llm|all] [--out eval-results]
    python -m tests.eval grade eval-results/grading-sample.csv   # human-graded citation precision

Indexes the site incrementally into DATA_DIR/eval-chroma-<site> (fast after
the first run), asks every question of its question set as its viewer, runs
the copy-the-top-passage baselines beside the real generators, writes
report.json, report.md and report.html (with charts) and exits 1 when a
metric falls below tests/eval/thresholds.json (content/ only).

Sites: `content` (this repo's docs, `tests/eval/questions.jsonl`); `cypress`
(the held-out Docusaurus site at ../shared/corpora/cypress-docs or
$CYPRESS_DOCS, `tests/eval/cypress/`); or any folder DIR with
`--questions FILE` (and `--site-config FILE` when DIR has no site.toml).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .anchor_oracle import ORACLE_SLUGGERS, oracle_anchor_validity, oracle_folder

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def anchor_validity(corpus: Any, urls: set[str], oracle: Path | None = None) -> dict[str, bool]:
    """Cited URL → whether its anchor is real: by github-slugger itself when `oracle` (its npm folder) is
    given, else (sluggers without an npm oracle) by the ids of our own rendered page, a far weaker check."""
    from ingest.page_html import render_html

    if oracle is not None:
        return oracle_anchor_validity(corpus, urls, oracle)
    base = corpus.site.base_url.rstrip("/")
    rendered: dict[str, set[str]] = {}
    ok = {}
    for url in urls:
        parts = urlsplit(url)
        slug = parts.path[len(base):].strip("/") if parts.path.startswith(base) else parts.path.strip("/")
        anchor = parts.fragment.split(":~:")[0]
        page = corpus.page(slug or "index")
        if page is None:
            ok[url] = False
            continue
        if slug not in rendered:
            rendered[slug] = set(re.findall(r'\sid="([^"]+)"', render_html(page)))
        ok[url] = not anchor or anchor in rendered[slug]
    return ok


def confusion(checker: Any, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    labels = ["supported", "partial", "unsupported"]
    matrix = {gold: {pred: 0 for pred in labels} for gold in labels}
    by_mode: dict[str, dict[str, int]] = {}
    for pair in pairs:
        predicted = checker.check(pair["claim"], pair["quotes"]).status
        matrix[pair["label"]][predicted] += 1
        mode = by_mode.setdefault(pair["mode"], {"n": 0, "agree": 0})
        mode["n"] += 1
        mode["agree"] += predicted == pair["label"]
    agree = sum(matrix[label][label] for label in labels)
    return {"matrix (rows gold, columns predicted)": matrix, "accuracy": round(agree / len(pairs), 3), "by_mode": by_mode}


def check_thresholds(results: dict[str, Any], thresholds: dict[str, Any]) -> list[str]:
    failures = []
    for generator, limits in thresholds.items():
        if generator not in results:
            continue
        for name, limit in limits.items():
            key, _, bound = name.partition(":")
            value: Any = results[generator]["metrics"]
            for part in key.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if value is None:
                failures.append(f"{generator}: {key} missing")
            elif bound == "max" and value > limit:
                failures.append(f"{generator}: {key} = {value} > max {limit}")
            elif bound != "max" and value < limit:
                failures.append(f"{generator}: {key} = {value} < min {limit}")
    return failures


@dataclass(frozen=True)
class Site:
    """A docs site under evaluation: its content, its site config and its question set."""

    name: str
    content: Path
    questions: Path
    config: Path | None = None  # a site.toml kept outside the content folder


def resolve_site(args: argparse.Namespace) -> Site:
    if args.site == "content":
        return Site("content", REPO / "content", Path(args.questions or HERE / "questions.jsonl"))
    if args.site == "cypress":
        root = Path(os.environ.get("CYPRESS_DOCS", REPO.parent / "shared" / "corpora" / "cypress-docs"))
        if not root.is_dir():
            raise SystemExit(f"the cypress-docs corpus is not at {root}; set CYPRESS_DOCS to its folder")
        return Site("cypress", root, Path(args.questions or HERE / "cypress" / "questions.jsonl"),
                    HERE / "cypress" / "site.toml")
    root = Path(args.site)
    if not root.is_dir() or not args.questions:
        raise SystemExit("--site DIR needs an existing folder and --questions FILE")
    return Site(root.name, root, Path(args.questions), Path(args.site_config) if args.site_config else None)


def build_index(data_dir: Path, site: Site) -> tuple[Any, Any, Any]:
    from answer.settings import AnswerSettings as Settings
    from ingest.corpus import load_corpus
    from ingest.site import load_site_config
    from retrieval.indexer import sync_index
    from retrieval.services import open_embedder
    from retrieval.store import ChromaStore

    embedder = open_embedder(Settings())
    config = load_site_config(site.config.parent) if site.config else None
    corpus = load_corpus(site.content, config)
    store = ChromaStore(path=str(data_dir / ("eval-chroma" if site.name == "content" else f"eval-chroma-{site.name}")))
    sync_index(corpus, store, embedder)
    return corpus, store, embedder


def generators(choice: str, embedder: Any, judge: Any, settings: Any) -> dict[str, Any]:
    from answer.generate import ExtractiveGenerator

    from .baselines import FirstSentenceOfTopHit, TopHitBestSentence

    found: dict[str, Any] = {}
    if choice in ("extractive", "all"):
        found["extractive"] = ExtractiveGenerator(embedder, judge=judge)
    if choice in ("llm", "all") and settings.llm_model:
        from answer.services import build_generator

        found["llm"] = build_generator(settings, embedder, judge)
    if choice == "llm" and not found:
        raise SystemExit("--generator llm needs LLM_MODEL set")
    found["baseline-first-sentence"] = FirstSentenceOfTopHit()
    found["baseline-best-sentence"] = TopHitBestSentence(embedder)
    return found


def subset(questions: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """`limit` questions spread evenly over the set (every k-th, from the first): fixed, so runs compare."""
    if not limit or limit >= len(questions):
        return questions
    return [questions[i * len(questions) // limit] for i in range(limit)]


def run(args: argparse.Namespace) -> int:
    from answer.services import local_llm
    from answer.settings import AnswerSettings as Settings

    settings = Settings.from_env()
    # LLM_MODEL=local: the llama.cpp child serves the whole run. Its LLM judge calibration is left out unless
    # SUPPORT_JUDGE=llm asks for it: 37 more generations on a CPU, for a judge nobody uses by default.
    calibrate = bool(settings.llm_model) and (settings.llm_model != "local" or settings.support_judge == "llm")
    with local_llm(settings) as served:
        return evaluate(args, served, calibrate_llm_judge=calibrate)


def evaluate(args: argparse.Namespace, settings: Any, *, calibrate_llm_judge: bool) -> int:
    from answer.pipeline import Answerer
    from answer.services import build_judge
    from answer.support import DeterministicChecker
    from retrieval.services import open_retriever

    from .grounding import metrics, run_questions, sample_for_grading
    from .report import write_reports

    site = resolve_site(args)
    corpus, store, embedder = build_index(settings.data_dir, site)
    retriever = open_retriever(settings, store=store, embedder=embedder)
    questions = subset(load_jsonl(site.questions), args.limit)
    judge = build_judge(corpus.site, retriever, embedder)  # exactly as `make serve` builds it
    oracle = oracle_folder(settings.data_dir) if corpus.site.slugger_name in ORACLE_SLUGGERS else None
    results: dict[str, Any] = {}
    for name, generator in generators(args.generator, embedder, judge, settings).items():
        gate = None if name.startswith("baseline") else judge  # the baselines are the ungated trap, on purpose
        rows, answers = run_questions(Answerer(retriever, generator, judge=gate), questions)
        urls = {c.url for a in answers for claim in a.claims for c in claim.citations}
        results[name] = {"metrics": metrics(rows, answers, anchor_validity(corpus, urls, oracle)), "rows": [r.__dict__ for r in rows]}
        sample = sample_for_grading(rows, answers, args.sample)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        with (out / f"grading-sample-{name}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(sample[0]) if sample else ["question"])
            writer.writeheader()
            writer.writerows(sample)
    from .retrieval_eval import evaluate as evaluate_retrieval

    methods = evaluate_retrieval(store, embedder, questions)["methods"]
    pairs = load_jsonl(HERE / "calibration.jsonl")
    calibration = confusion(DeterministicChecker(), pairs)
    judges = {"deterministic": calibration}
    if calibrate_llm_judge:  # the optional LLM judge, and how often it agrees with the deterministic checker
        from answer.services import build_checker

        judge = build_checker(replace(settings, support_judge="llm"))
        judges["llm"] = confusion(judge, pairs)
        same = sum(judge.check(p["claim"], p["quotes"]).status == DeterministicChecker().check(p["claim"], p["quotes"]).status
                   for p in pairs)
        judges["llm"]["agreement_with_deterministic"] = round(same / len(pairs), 3)
    for name, margin in baseline_margin(results).items():  # gated like any metric: copying the top hit must not pay
        results[name]["metrics"]["over_best_baseline"] = margin
    # A subset (--limit) is for comparing generators, not for the gate: thresholds hold for the whole set.
    thresholds = json.loads((HERE / "thresholds.json").read_text()) if site.name == "content" and not args.limit else {}
    failures = check_thresholds(results | {"retrieval": {"metrics": methods}}, thresholds)
    report = {"site": site.name, "retrieval_methods": methods, "generators": results, "calibration": judges,
              "baseline_margin": baseline_margin(results),
              "anchor_oracle": "github-slugger (npm)" if oracle else f"own renderer (no npm oracle for {corpus.site.slugger_name!r})",
              "thresholds": thresholds, "threshold_failures": failures}
    write_reports(report, Path(args.out))
    for name, result in results.items():
        print(f"== {name}")
        print(json.dumps({k: v for k, v in result["metrics"].items() if k != "latency_ms"}, indent=1))
    print("retrieval methods:", json.dumps(methods, indent=1))
    print(f"calibration accuracy (deterministic checker): {calibration['accuracy']}")
    print("answer correctness over the best copy-the-top-passage baseline:", json.dumps(report["baseline_margin"]))
    print(f"reports in {args.out}/report.{{json,md,html}}")
    for failure in failures:
        print(f"BELOW THRESHOLD: {failure}", file=sys.stderr)
    return 1 if failures else 0


def baseline_margin(results: dict[str, Any]) -> dict[str, float]:
    """Answer correctness of each real generator minus the best copy-the-top-passage baseline."""
    best = max((r["metrics"]["answer_correctness"] or 0.0 for n, r in results.items() if n.startswith("baseline")),
               default=0.0)
    return {n: round((r["metrics"]["answer_correctness"] or 0.0) - best, 4) for n, r in results.items()
            if not n.startswith("baseline")}


def grade(path: Path) -> int:
    """Citation precision from a human-graded sample CSV (column 'supports (yes/no)')."""
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    graded = [r["supports (yes/no)"].strip().lower() for r in rows if r.get("supports (yes/no)", "").strip()]
    if not graded:
        print("no graded rows: fill the 'supports (yes/no)' column first", file=sys.stderr)
        return 2
    yes = sum(g in ("yes", "y", "1", "true") for g in graded)
    print(json.dumps({"graded": len(graded), "supported": yes, "citation_precision_human": round(yes / len(graded), 4)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["grade"]:
        return grade(Path(argv[1]))
    parser = argparse.ArgumentParser(prog="python -m tests.eval", description=__doc__)
    parser.add_argument("--site", default="content", help="content, cypress, or a content folder (with --questions)")
    parser.add_argument("--questions", help="a question set (JSON Lines) other than the site's own")
    parser.add_argument("--site-config", help="a site.toml for a content folder that has none")
    parser.add_argument("--generator", default="all", choices=["extractive", "llm", "all"])
    parser.add_argument("--out", default=str(REPO / "eval-results"))
    parser.add_argument("--sample", type=int, default=40, help="citations to export for human grading")
    parser.add_argument("--limit", type=int, default=0,
                        help="ask only this many questions, spread evenly over the set (0 = all); for slow generators")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
