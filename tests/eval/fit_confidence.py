"""Fit the Answer-or-Related line on the labelled sets pooled, and validate it by leaving each site out.

    python -m tests.eval.calibrate            # per-question signals and grades, eval-results/calibration-*.jsonl
    python -m tests.eval.fit_confidence       # the fit, each site's figures from a fit that never saw it

A pick the gate passes is an example; it is right when it carries the gold
quote (a pick for an unanswerable question is always wrong). A logistic
regression over `answer.gate.confidence.signals` gives each pick a
probability of being right, and `answer_at` is the lowest probability at
which the Answers of the sets the fit saw are right at least `--precision`
of the time. Each site's line in the table comes from a fit on the other
sites only: that is the figure a site nobody tuned on can expect. The last
fit, on every set, is printed as the `Confidence(...)` to put in
`answer/gate/weights.py`.

Only sets whose questions this team wrote are fitted on; a set kept for
figures only (questions written outside the team) is never read here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SIGNALS = ("score", "meaning", "section", "terms", "asks", "identifiers", "margin", "margin_same", "hit_rank",
           "wants_number")
LABELLED = ("content", "cypress", "starlight")


def load(folder: Path, site: str) -> list[dict[str, Any]]:
    """The picks the gate passed on one site, each with its signals and whether it carried the gold quote."""
    path = folder / f"calibration-{site}.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r["answered"]]


def fit(rows: Sequence[dict[str, Any]], c: float) -> tuple[float, list[float]]:
    """Bias and coefficients of a logistic regression of "right" on the signals."""
    from sklearn.linear_model import LogisticRegression

    x = [[r["signals"][name] for name in SIGNALS] for r in rows]
    y = [int(r["answerable"] and r["correct"]) for r in rows]
    model = LogisticRegression(C=c, max_iter=5000).fit(x, y)
    return float(model.intercept_[0]), [float(v) for v in model.coef_[0]]


def probability(row: dict[str, Any], bias: float, coefficients: Sequence[float]) -> float:
    import math

    z = bias + sum(w * row["signals"][name] for name, w in zip(SIGNALS, coefficients, strict=True))
    return 1.0 / (1.0 + math.exp(-z))


def line_for(rows: Sequence[dict[str, Any]], bias: float, coefficients: Sequence[float], precision: float) -> float:
    """The lowest probability at which the Answers among `rows` are right at least `precision` of the time."""
    scored = sorted(((probability(r, bias, coefficients), bool(r["answerable"] and r["correct"])) for r in rows), reverse=True)
    best, right = 1.0, 0
    for n, (p, ok) in enumerate(scored, start=1):
        right += ok
        if right / n >= precision:
            best = p
    return best


def figures(rows: Sequence[dict[str, Any]], questions: int, answerable: int, bias: float,
            coefficients: Sequence[float], line: float) -> dict[str, float]:
    kept = [r for r in rows if probability(r, bias, coefficients) >= line]
    right = sum(bool(r["answerable"] and r["correct"]) for r in kept)
    return {"answers": len(kept), "precision": round(right / len(kept), 3) if kept else 0.0,
            "answer_correct": round(right / answerable, 3) if answerable else 0.0,
            "before_precision": round(sum(bool(r["answerable"] and r["correct"]) for r in rows) / len(rows), 3),
            "before_correct": round(sum(bool(r["answerable"] and r["correct"]) for r in rows) / answerable, 3),
            "questions": questions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.eval.fit_confidence", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="eval-results", help="where tests.eval.calibrate wrote its files")
    parser.add_argument("--precision", type=float, default=0.88, help="the precision the fitted sets must reach")
    parser.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the regression")
    args = parser.parse_args(argv)
    folder = Path(args.data)
    sites = {s: load(folder, s) for s in LABELLED if (folder / f"calibration-{s}.jsonl").is_file()}
    totals = {}
    for s in sites:
        every = [json.loads(x) for x in (folder / f"calibration-{s}.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
        totals[s] = (len(every), sum(r["answerable"] for r in every))
    for held in sites:
        train = [r for s, rows in sites.items() if s != held for r in rows]
        bias, coefficients = fit(train, args.c)
        line = line_for(train, bias, coefficients, args.precision)
        print(f"{held} (fitted on {', '.join(s for s in sites if s != held)}; line {line:.3f}):",
              figures(sites[held], *totals[held], bias, coefficients, line))
    pooled = [r for rows in sites.values() for r in rows]
    bias, coefficients = fit(pooled, args.c)
    line = line_for(pooled, bias, coefficients, args.precision)
    for s in sites:
        print(f"{s} (fitted on all):", figures(sites[s], *totals[s], bias, coefficients, line))
    pairs = ", ".join(f'("{n}", {w:.4f})' for n, w in zip(SIGNALS, coefficients, strict=True))
    print(f"Confidence(bias={bias:.4f}, coefficients=({pairs}), answer_at={line:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
