"""The sets side by side: one table of headline figures per generator, the held-out gaps, and each set's failures.

Weights set on content/ only mean something if they hold on sites they were
never tuned on, so the gap (held-out minus content/) is part of the table,
and every miss is written out per question for someone to read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .sites import TUNED

# (dotted key in a generator's metrics, or "retrieval:<dotted key>" in the site's retrieval methods; label)
SUMMARY: tuple[tuple[str, str], ...] = (
    ("questions", "questions"),
    ("answerable", "answerable questions"),
    ("answer_correctness", "answer correct"),
    ("direct_answer_correctness", "direct answer correct"),
    ("answer_precision", "precision of Answers"),
    ("gold_shown", "gold shown (Answer or Related)"),
    ("related_with_gold", "Related passages holding the gold"),
    ("refusal_accuracy", "refusal accuracy (never an Answer)"),
    ("refused_outright", "unanswerable refused outright"),
    ("answer_rate", "answer rate"),
    ("related_rate", "Related passages rate"),
    ("quote_correctness", "quote correctness"),
    ("phantom_rate", "phantom rate"),
    ("anchor_validity", "anchor validity"),
    ("quote_edges.start_mid_sentence", "shown quotes starting mid-sentence"),
    ("quote_edges.cut_a_code_block", "shown quotes cutting a code block"),
    ("quoted_chars_per_answer_p50", "quoted chars per answer, median"),
    ("followups.in_thread", "follow-ups cite gold, in thread"),
    ("followups.alone", "follow-ups cite gold, asked alone"),
    ("topic_switch.in_thread", "new subject in a thread cites gold"),
    ("topic_switch.alone", "same questions asked alone"),
    ("retrieval:hybrid.recall@5", "retrieval recall@5 (hybrid)"),
    ("retrieval:hybrid.mrr", "retrieval MRR (hybrid)"),
)
COUNTS = frozenset({"questions", "answerable"})  # sizes of a set, not figures: no gap between sets


def dig(tree: Any, dotted: str) -> Any:
    """The value at a dotted path of nested dicts, None when any part is missing."""
    for part in dotted.split("."):
        tree = tree.get(part) if isinstance(tree, dict) else None
    return tree


def figure(site_report: Mapping[str, Any], generator: str, key: str) -> Any:
    """One headline figure of one generator on one site (retrieval figures are the site's, not the generator's)."""
    if key.startswith("retrieval:"):
        return dig(site_report.get("retrieval_methods", {}), key.removeprefix("retrieval:"))
    return dig(site_report["generators"].get(generator, {}).get("metrics", {}), key)


def summary(sites: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per generator: each site's headline figures, and each held-out site's gap to content/ (held-out minus tuned)."""
    generators = list(dict.fromkeys(g for report in sites.values() for g in report["generators"]))
    table: dict[str, Any] = {}
    for generator in generators:
        per_site = {name: {key: figure(report, generator, key) for key, _ in SUMMARY} for name, report in sites.items()}
        gaps = {}
        if TUNED in per_site:
            for name, values in per_site.items():
                if name != TUNED:
                    gaps[name] = {key: None if key in COUNTS else _diff(values[key], per_site[TUNED][key]) for key, _ in SUMMARY}
        table[generator] = {"sites": per_site, "gap_to_tuned": gaps}
    return table


def _diff(held_out: Any, tuned: Any) -> float | None:
    if not isinstance(held_out, int | float) or not isinstance(tuned, int | float):
        return None
    return round(held_out - tuned, 4)


def _cell(value: Any, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+}" if signed else str(value)


def summary_markdown(table: Mapping[str, Any], *, headings: bool = True,
                     rows: Sequence[tuple[str, str]] = SUMMARY) -> list[str]:
    """Markdown lines: one table per generator, sites as columns, then one gap column per held-out site."""
    lines: list[str] = []
    for generator, data in table.items():
        names, gaps = list(data["sites"]), list(data["gap_to_tuned"])
        header = names + [f"{name} − {TUNED}" for name in gaps]
        lines += ["", f"### {generator}"] if headings else []
        lines += ["", "| metric | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
        for key, label in rows:
            cells = [_cell(data["sites"][n][key]) for n in names] + [_cell(data["gap_to_tuned"][n][key], True) for n in gaps]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def failures(site_report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every miss of the real generators on one site, one record a person can read per question or thread."""
    found: list[dict[str, Any]] = []
    for generator, result in site_report["generators"].items():
        if generator.startswith("baseline"):
            continue
        for row in result["rows"]:
            why = _why(row)
            if why:
                quotes = [c["quote"] for claim in row["claims"] for c in claim["citations"]]
                found.append({"generator": generator, "id": row["id"], "kind": row["kind"], "why": why,
                              "question": row["question"], "gold": row["gold"], "state": row["state"],
                              "quotes": quotes, "gold_rank": row["rank"]})
        for thread in result.get("threads", []):
            if not thread["in_thread_correct"]:
                found.append({"generator": generator, "id": thread["id"], "kind": "follow-up",
                              "why": "the follow-up, asked in its thread, cites no gold section",
                              "question": thread["turns"][-1], "turns": thread["turns"], "searched": thread["searched"],
                              "gold": thread["gold"], "state": thread["in_thread_state"],
                              "cited": thread["in_thread_cited"], "alone_state": thread["alone_state"]})
    return found


def _why(row: Mapping[str, Any]) -> str:
    outcome = row.get("outcome", "answer" if row["state"] == "answered" else "refused")
    if not row["answerable"]:
        return "an Answer to a question the docs do not answer" if outcome == "answer" else ""
    if outcome == "related":
        return "the gold fact only among Related passages" if row.get("gold_shown") else "Related passages without the gold fact"
    if outcome != "answer":
        return f"not answered ({row['state']})"
    return "" if row["correct"] else "an Answer without the gold fact"


def failure_counts(found: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many failures of each kind, for the report's one-line summary per site."""
    counts: dict[str, int] = {}
    for f in found:
        counts[f["why"]] = counts.get(f["why"], 0) + 1
    return counts
