"""Write the eval report: JSON for machines, Markdown and HTML (with charts) for people; the sets side by side."""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

from .compare import dig, failure_counts, failures, summary_markdown

HEADLINE = [
    ("retrieval_in_answer.hit_at_1", "gold section at rank 1"), ("retrieval_in_answer.hit_at_5", "gold section in top 5"),
    ("retrieval_in_answer.mrr", "MRR (first gold section)"),
    ("quote_correctness", "quote correctness (proposed)"), ("shown_quote_correctness", "quote correctness (shown)"),
    ("attribution_coverage", "attribution coverage"),
    ("citation_precision_auto", "citation precision (auto)"), ("refusal_accuracy", "refusal accuracy (never an Answer)"),
    ("refused_outright", "unanswerable refused outright"),
    ("answer_rate", "answer rate"), ("answer_correctness", "answer correctness"),
    ("answer_precision", "precision of Answers"), ("related_rate", "related passages rate"),
    ("related_with_gold", "related passages holding the gold"), ("gold_shown", "gold shown (Answer or Related)"),
    ("direct_answer_correctness", "direct answer correctness"), ("quoted_chars_per_answer_p50", "quoted chars per answer, median"),
    ("followups.in_thread", "follow-ups cite gold, in thread"), ("followups.alone", "follow-ups cite gold, alone"),
    ("topic_switch.in_thread", "new subject in a thread cites gold"), ("topic_switch.alone", "same questions asked alone"),
    ("phantom_rate", "phantom-citation rate"), ("anchor_validity", "anchor validity"),
    ("quote_edges.start_mid_sentence", "shown quotes starting mid-sentence"),
    ("quote_edges.cut_a_code_block", "shown quotes cutting a code block"),
    ("quote_edges.start_mid_sentence", "shown quotes starting mid-sentence"),
    ("quote_edges.cut_a_code_block", "shown quotes cutting a code block"),
    ("latency_per_answer_ms.p50", "latency per answer p50 (ms)"), ("latency_per_answer_ms.p95", "latency per answer p95 (ms)"),
    ("first_verified_quote_ms.p50", "first verified quote p50 (ms)"),
    # with a writer (--generator written): the model's short answer over the shown quotes
    ("written.shown", "written answers shown"), ("written.asked", "written answers asked for"),
    ("written.gold_stated", "written answer rests on the gold quote"),
    ("written.sentences_shown", "written sentences shown"), ("written.sentences_dropped", "written sentences dropped"),
    ("written.write_ms.p50", "written answer p50 (ms)"), ("written.write_ms.p95", "written answer p95 (ms)"),
]


def _charts(site: str, report: dict[str, Any]) -> list[tuple[str, str]]:
    """(title, base64 PNG) pairs for one site: recall@k curve and answer-state distribution."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    charts = []
    fig, ax = plt.subplots(figsize=(5, 3))
    for name, result in report["generators"].items():
        ranks = [r["rank"] for r in result["rows"] if r["answerable"]]
        ks = list(range(1, 11))
        ax.plot(ks, [sum(1 for x in ranks if x and x <= k) / max(len(ranks), 1) for k in ks], marker="o", label=name)
    ax.set_xlabel("k"), ax.set_ylabel("recall@k"), ax.set_ylim(0, 1), ax.grid(alpha=0.3), ax.legend()
    charts.append((f"{site}: retrieval recall@k (gold section in the top k)", _png(fig)))
    fig, ax = plt.subplots(figsize=(5, 3))
    names = list(report["generators"])
    states = ["answer", "related", "refused"]
    for offset, name in enumerate(names):
        rows = report["generators"][name]["rows"]
        for group, answerable in (("answerable", True), ("unanswerable", False)):
            counts = [sum(1 for r in rows if r["answerable"] == answerable and r.get("outcome") == s) for s in states]
            x = [i + offset * 0.4 + (0.2 if not answerable else 0) for i in range(len(states))]
            ax.bar(x, counts, width=0.2, label=f"{name}: {group}")
    ax.set_xticks(range(len(states)), states), ax.set_ylabel("questions"), ax.legend(fontsize=7)
    charts.append((f"{site}: outcomes for answerable and unanswerable questions", _png(fig)))
    plt.close("all")
    return charts


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=110)
    return base64.b64encode(buffer.getvalue()).decode()


def markdown(report: dict[str, Any]) -> str:
    """The whole report: the sets side by side first, then each set's details."""
    names = list(report["sites"])
    lines = ["# Evaluation report", "", f"Sets: {', '.join(names)}."]
    lines += [f"Skipped: {reason}." for reason in report.get("skipped", [])]
    lines += ["", "## Side by side (gap = held-out minus content/, the set the answerer was tuned on)"]
    lines += summary_markdown(report["summary"])
    for judge, calibration in report["calibration"].items():
        agreement = calibration.get("agreement_with_deterministic")
        lines += ["", f"Support checker calibration ({judge}): accuracy {calibration['accuracy']}"
                  + (f", agreement with the deterministic checker {agreement}" if agreement is not None else ""), "",
                  "| gold \\ predicted | supported | partial | unsupported |", "|---|---|---|---|"]
        for gold, row in calibration["matrix (rows gold, columns predicted)"].items():
            lines.append(f"| {gold} | {row['supported']} | {row['partial']} | {row['unsupported']} |")
    if report["threshold_failures"]:
        lines += ["", "## Below threshold", *[f"- {f}" for f in report["threshold_failures"]]]
    for name in names:
        lines += site_markdown(name, report["sites"][name])
    return "\n".join(lines) + "\n"


def site_markdown(name: str, report: dict[str, Any]) -> list[str]:
    """One set's details: every headline metric per generator, retrieval methods, failures, per-question table."""
    generators = list(report["generators"])
    lines = ["", f"## {name}", "", "| metric | " + " | ".join(generators) + " |", "|---|" + "---|" * len(generators)]
    for key, label in HEADLINE:
        lines.append(f"| {label} | " + " | ".join(str(dig(report["generators"][g]["metrics"], key)) for g in generators) + " |")
    methods = report.get("retrieval_methods", {})
    if methods:
        lines += ["", "Retrieval methods (recall of gold sections, answerable questions)", "",
                  "| method | recall@1 | recall@5 | MRR | p50 ms | p95 ms | leaks |", "|---|---|---|---|---|---|---|"]
        for method, m in methods.items():
            lines.append(f"| {method} | {m['recall@1']} | {m['recall@5']} | {m['mrr']} | {m['latency_ms_p50']} | "
                         f"{m['latency_ms_p95']} | {m['leaks']} |")
    counts = failure_counts(failures(report))
    if counts:
        lines += ["", f"Failures (`failures-{name}.jsonl`): " + "; ".join(f"{why}: {n}" for why, n in counts.items())]
    for generator in generators:
        lines += ["", f"### {name} — {generator}", "", "| id | kind | viewer | state | correct | gold rank |",
                  "|---|---|---|---|---|---|"]
        for r in report["generators"][generator]["rows"]:
            lines.append(f"| {r['id']} | {r['kind']} | {','.join(r['groups']) or 'anonymous'} | {r['state']} | "
                         f"{'' if r['correct'] is None else ('yes' if r['correct'] else 'no')} | {r['rank'] or '-'} |")
        for t in report["generators"][generator].get("threads", []):
            lines.append(f"| {t['id']} | follow-up | anonymous | {t['in_thread_state']} | "
                         f"{'yes' if t['in_thread_correct'] else 'no'} (alone: {'yes' if t['alone_correct'] else 'no'}) | - |")
    return lines


def write_reports(report: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    md = markdown(report)
    (out / "report.md").write_text(md, encoding="utf-8")
    figures = "".join(f'<figure><img alt="{html.escape(t)}" src="data:image/png;base64,{png}"><figcaption>{html.escape(t)}</figcaption></figure>'
                      for site, r in report["sites"].items() for t, png in _charts(site, r))
    body = html.escape(md)
    (out / "report.html").write_text(
        "<!doctype html><meta charset=utf-8><title>Evaluation report</title>"
        "<style>body{font:15px system-ui;max-width:60rem;margin:2rem auto}figure{display:inline-block;margin:1rem}"
        "pre{white-space:pre-wrap}</style>" + figures + f"<pre>{body}</pre>", encoding="utf-8")
