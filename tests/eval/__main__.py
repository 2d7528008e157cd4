"""`make eval` — retrieval and grounding metrics over docs sites, side by side, with a report and thresholds.

    python -m tests.eval [--site all|content|cypress|starlight|DIR] [--generator extractive|llm|written|all] [--out eval-results]
    python -m tests.eval grade eval-results/grading-sample-content-extractive.csv   # human-graded citation precision

Indexes each site incrementally into DATA_DIR/eval-chroma-<site> (fast after
the first run), asks every question of its question set as its viewer (and
every follow-up thread, in its thread and alone), runs the
copy-the-top-passage baselines beside the real generators, writes
report.json, report.md and report.html (with charts) with the sets in one
table, per-question misses to failures-<site>.jsonl, and exits 1 when a
metric of content/ falls below tests/eval/thresholds.json (held-out sets are
reported, never gated).

Sites (tests/eval/sites.py): `all`, the default, is every set below whose
corpus exists (a missing held-out corpus is skipped and named); `content`
(this repo's docs, `tests/eval/questions.jsonl`); `cypress` (the held-out
Docusaurus site at ../shared/corpora/cypress-docs or $CYPRESS_DOCS,
`tests/eval/cypress/`); `starlight` (the held-out Starlight site at
../shared/corpora/starlight-docs or $STARLIGHT_DOCS, `tests/eval/starlight/`);
or any folder DIR with `--questions FILE` (and `--site-config FILE` when DIR
has no site.toml).
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from .anchor_oracle import ORACLE_SLUGGERS, oracle_anchor_validity, oracle_folder
from .sites import HERE, NAMED, REPO, TUNED, Site, resolve_sites

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
    base = urlsplit(corpus.site.base_url).path.rstrip("/")  # "https://www.mintlify.com/docs" serves under /docs
    rendered: dict[str, set[str]] = {}
    ok = {}
    for url in urls:
        parts = urlsplit(url)
        slug = parts.path[len(base):].strip("/") if parts.path.startswith(base) else parts.path.strip("/")
        anchor = unquote(parts.fragment.split(":~:")[0])
        page = corpus.page(slug or "index")
        if page is None:
            ok[url] = False
            continue
        if slug not in rendered:
            rendered[slug] = {html.unescape(i) for i in re.findall(r'\sid="([^"]+)"', render_html(page))}
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


def build_index(data_dir: Path, site: Site, embedder: Any) -> tuple[Any, Any]:
    from ingest.corpus import load_corpus
    from ingest.site import load_site_config
    from retrieval.indexer import sync_index
    from retrieval.store import ChromaStore

    config = load_site_config(site.config.parent) if site.config else None
    corpus = load_corpus(site.content, config)
    store = ChromaStore(path=str(data_dir / ("eval-chroma" if site.name == TUNED else f"eval-chroma-{site.name}")))
    sync_index(corpus, store, embedder)
    return corpus, store


def generators(choice: str, embedder: Any, judge: Any, settings: Any) -> dict[str, Any]:
    from answer.generate import ExtractiveGenerator

    from .baselines import FirstSentenceOfTopHit, TopHitBestSentence

    found: dict[str, Any] = {}
    if choice in ("extractive", "all"):
        found["extractive"] = ExtractiveGenerator(embedder, judge=judge)
    if choice in ("llm", "all") and settings.llm_model:
        from answer.services import build_generator

        found["llm"] = build_generator(replace(settings, llm_role="draft"), embedder, judge)  # the model drafts
    if choice in ("written", "all") and settings.llm_model:
        found["written"] = ExtractiveGenerator(embedder, judge=judge)  # offline quotes, then the model words them
    if choice in ("llm", "written") and not found:
        raise SystemExit(f"--generator {choice} needs LLM_MODEL set")
    found["baseline-first-sentence"] = FirstSentenceOfTopHit()
    found["baseline-best-sentence"] = TopHitBestSentence(embedder)
    return found


def subset(questions: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """`limit` questions spread evenly over the set (every k-th, from the first): fixed, so runs compare."""
    if not limit or limit >= len(questions):
        return questions
    return [questions[i * len(questions) // limit] for i in range(limit)]


def evaluate_site(site: Site, args: argparse.Namespace, settings: Any, embedder: Any) -> dict[str, Any]:
    """One site's report: every generator over its questions (and follow-up threads), retrieval methods, thresholds."""
    from answer.pipeline import Answerer
    from answer.services import build_judge, build_writer, condenser_for
    from retrieval.services import open_retriever

    from .followups import run_switches, run_threads, thread_metrics
    from .grounding import metrics, run_questions, sample_for_grading

    corpus, store = build_index(settings.data_dir, site, embedder)
    retriever = open_retriever(settings, store=store, embedder=embedder)
    questions = subset(load_jsonl(site.questions), args.limit)
    threads = subset(load_jsonl(site.followups), args.limit) if site.followups and not args.no_threads else []
    judge = build_judge(corpus.site, retriever, embedder)  # exactly as `make serve` builds it
    oracle = oracle_folder(settings.data_dir) if corpus.site.slugger_name in ORACLE_SLUGGERS else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    for name, generator in generators(args.generator, embedder, judge, settings).items():
        gate = None if name.startswith("baseline") else judge  # the baselines are the ungated trap, on purpose
        writer = build_writer(replace(settings, llm_role="write")) if name == "written" else None
        answerer = Answerer(retriever, generator, judge=gate, writer=writer)
        rows, answers = run_questions(answerer, questions)
        thread_rows = run_threads(answerer, condenser_for(generator), threads)
        urls = {c.url for a in answers for claim in a.claims for c in claim.citations}
        found = metrics(rows, answers, anchor_validity(corpus, urls, oracle))
        found["followups"] = thread_metrics(thread_rows)
        if not args.no_threads:  # and a thread that changes subject must not drag the old one into the search
            asked = {q["id"]: a for q, a in zip(questions, answers, strict=True)}
            found["topic_switch"] = run_switches(answerer, condenser_for(generator), questions, asked)
        if site.figures_only:  # written outside the team: its figures are kept, never what each question got
            results[name] = {"metrics": found, "rows": [], "threads": []}
            continue
        results[name] = {"metrics": found, "rows": [r.__dict__ for r in rows], "threads": [t.__dict__ for t in thread_rows]}
        sample = sample_for_grading(rows, answers, args.sample)
        with (out / f"grading-sample-{site.name}-{name}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(sample[0]) if sample else ["question"])
            writer.writeheader()
            writer.writerows(sample)
    from .retrieval_eval import evaluate as evaluate_retrieval

    methods = evaluate_retrieval(store, embedder, questions)["methods"]
    for name, margin in baseline_margin(results).items():  # gated like any metric: copying the top hit must not pay
        results[name]["metrics"]["over_best_baseline"] = margin
    # A subset (--limit) is for comparing generators, not for the gate: thresholds hold for the whole set.
    thresholds = json.loads((HERE / "thresholds.json").read_text()) if site.name == TUNED and not args.limit else {}
    anchors = {}
    if corpus.site.preset == "mintlify":  # the share of headings whose id follows Mintlify's documented rules
        from .mintlify_anchors import check, corpus_headings

        anchors = {"anchor_rules": {k: v for k, v in check(corpus_headings(site.content)).items() if k != "misses"}}
    return anchors | {"site": site.name, "retrieval_methods": methods, "generators": results, "figures_only": site.figures_only,
            "baseline_margin": baseline_margin(results),
            "anchor_oracle": "github-slugger (npm)" if oracle else f"own renderer (no npm oracle for {corpus.site.slugger_name!r})",
            "thresholds": thresholds,
            "threshold_failures": check_thresholds(results | {"retrieval": {"metrics": methods}}, thresholds)}


def calibrate(settings: Any, *, llm_judge: bool) -> dict[str, Any]:
    """The support checker's confusion matrix on the labelled pairs (and the optional LLM judge's agreement)."""
    from answer.contract.support import DeterministicChecker

    pairs = load_jsonl(HERE / "calibration.jsonl")
    judges = {"deterministic": confusion(DeterministicChecker(), pairs)}
    if llm_judge:  # the optional LLM judge, and how often it agrees with the deterministic checker
        from answer.services import build_checker

        judge = build_checker(replace(settings, support_judge="llm"))
        judges["llm"] = confusion(judge, pairs)
        same = sum(judge.check(p["claim"], p["quotes"]).status == DeterministicChecker().check(p["claim"], p["quotes"]).status
                   for p in pairs)
        judges["llm"]["agreement_with_deterministic"] = round(same / len(pairs), 3)
    return judges


def run(args: argparse.Namespace) -> int:
    from answer.services import local_llm
    from answer.settings import AnswerSettings as Settings

    settings = Settings.from_env()
    # LLM_MODEL=local: the llama.cpp child serves the whole run. Its LLM judge calibration is left out unless
    # SUPPORT_JUDGE=llm asks for it: 37 more generations on a CPU, for a judge nobody uses by default.
    llm_judge = bool(settings.llm_model) and (settings.llm_model != "local" or settings.support_judge == "llm")
    with local_llm(settings) as served:
        return evaluate(args, served, llm_judge=llm_judge)


def evaluate(args: argparse.Namespace, settings: Any, *, llm_judge: bool) -> int:
    """Every selected site's report, the side-by-side summary and the thresholds' verdict (exit 1 below one)."""
    from retrieval.services import open_embedder

    from .compare import failures, summary
    from .report import write_reports

    sites, skipped = resolve_sites(args.site, args.questions, args.site_config)
    for reason in skipped:
        print(f"skipped: {reason}", file=sys.stderr)
    embedder = open_embedder(settings)
    reports: dict[str, Any] = {}
    out = Path(args.out)
    for site in sites:
        print(f"== site {site.name}", flush=True)
        reports[site.name] = evaluate_site(site, args, settings, embedder)
        if site.figures_only:
            continue
        with (out / f"failures-{site.name}.jsonl").open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(f, ensure_ascii=False) + "\n" for f in failures(reports[site.name]))
    threshold_failures = [f"{name}: {f}" for name, r in reports.items() for f in r["threshold_failures"]]
    report = {"sites": reports, "skipped": skipped, "summary": summary(reports), "calibration": calibrate(settings, llm_judge=llm_judge),
              "threshold_failures": threshold_failures}
    write_reports(report, out)
    for generator, data in report["summary"].items():
        print(f"== {generator}")
        print(json.dumps(data, indent=1))
    print(f"calibration accuracy (deterministic checker): {report['calibration']['deterministic']['accuracy']}")
    print(f"reports in {args.out}/report.{{json,md,html}}, per-question failures in {args.out}/failures-<site>.jsonl")
    for reason in skipped:
        print(f"skipped: {reason}", file=sys.stderr)
    for failure in threshold_failures:
        print(f"BELOW THRESHOLD: {failure}", file=sys.stderr)
    return 1 if threshold_failures else 0


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
    parser.add_argument("--site", default="all",
                        help=f"all (every set whose corpus exists), one of {', '.join(NAMED)}, or a content folder (with --questions)")
    parser.add_argument("--questions", help="a question set (JSON Lines) other than the site's own")
    parser.add_argument("--site-config", help="a site.toml for a content folder that has none")
    parser.add_argument("--generator", default="all", choices=["extractive", "llm", "written", "all"])
    parser.add_argument("--out", default=str(REPO / "eval-results"))
    parser.add_argument("--sample", type=int, default=40, help="citations to export for human grading")
    parser.add_argument("--no-threads", action="store_true",
                        help="skip the follow-up threads (each is two answers and a condensed question: slow with a local LLM)")
    parser.add_argument("--limit", type=int, default=0,
                        help="ask only this many questions, spread evenly over the set (0 = all); for slow generators")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
