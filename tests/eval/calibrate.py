"""Collect, per question, what the answer gate knew when it answered, and whether the answer was right.

    python -m tests.eval.calibrate [--site all|content|cypress|starlight] [--out eval-results]

The gate's "Answer" must be right at least 85 % of the time on sites nobody
tuned it on. Whether a pick deserves the badge is a judgement on signals the
gate already computes (the direct span's score and its named features, how
far it stands above the best span of another section, the retrieval rank it
comes from); this writes them beside the grade, one JSON object per question,
to `<out>/calibration-<site>.jsonl`, for `tests.eval.confidence` to fit the
Answer threshold on labelled sets and validate it leaving each site out.

Retrieval runs once per question, as in `tests.eval.replay`, and the pick is
graded as `make eval` grades an answer (a chosen span carrying the gold quote).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from answer.gate import AnswerGate
from answer.gate.confidence import signals
from retrieval.search import RetrievalSet

from .grounding import _overlap
from .sites import NAMED, resolve_sites


def observe(gate: AnswerGate, question: Mapping[str, Any], rset: RetrievalSet) -> dict[str, Any]:
    """One question's pick, its signals and its grade."""
    asked = gate.question(question["question"])
    chosen, reasons = gate.pick(asked, rset)
    gold = question.get("answer_quote") or ""
    ranked = gate.extractor.rank(asked, rset)
    gold_near = bool(gold) and any(_overlap(gold, s.span.text) for s in ranked[:8])
    row: dict[str, Any] = {
        "id": question["id"], "kind": question.get("kind", ""), "answerable": bool(question["answerable"]),
        "answered": bool(chosen), "reasons": list(reasons),
        "correct": bool(gold) and any(_overlap(gold, s.span.text) for s in chosen),
        "direct": bool(chosen) and bool(gold) and _overlap(gold, chosen[0].span.text),
        "gold_in_top_spans": gold_near,
    }
    if chosen:
        row["signals"] = signals(asked, chosen, ranked, rset)
    return row


def main(argv: list[str] | None = None) -> int:
    from answer.services import build_judge
    from answer.settings import AnswerSettings as Settings
    from retrieval.services import open_embedder, open_retriever
    from retrieval.viewer import Viewer

    from .__main__ import build_index, load_jsonl

    parser = argparse.ArgumentParser(prog="python -m tests.eval.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", default="all", help=f"all (every labelled set whose corpus exists) or one of {', '.join(NAMED)}")
    parser.add_argument("--out", default="eval-results")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    embedder = open_embedder(settings)
    sites, skipped = resolve_sites(args.site)
    for reason in skipped:
        print(f"skipped: {reason}", file=sys.stderr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for site in sites:
        if site.figures_only:  # questions written outside the team: no per-question row of theirs is ever written
            print(f"skipped: {site.name} is kept for figures only", file=sys.stderr)
            continue
        corpus, store = build_index(settings.data_dir, site, embedder)
        retriever = open_retriever(settings, store=store, embedder=embedder)
        gate = build_judge(corpus.site, retriever, embedder)
        questions = load_jsonl(site.questions)
        rows = []
        for q in questions:
            rset = retriever.search(q["question"], Viewer.of(q.get("groups") or []), version=q.get("version") or None)
            rows.append(observe(gate, q, rset))
        path = out / f"calibration-{site.name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        print(f"{site.name}: {len(rows)} questions -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
