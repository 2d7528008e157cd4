"""Fit the gate's weights and thresholds on the labelled sets pooled, and report each set from a fit that never saw it.

    python -m tests.eval.fit_gate [--wrong-cost 2.0] [--rounds 3]

The weights in `answer/gate/weights.py` were set by hand on content/ and
checked on the held-out sets. This asks whether a fit does better where it was
not fitted: for each labelled set, a coordinate search over every weight and
threshold on the other labelled sets pooled (leave one set out), then that
set's figures before and after. A set kept for figures only (questions
written outside this team) never takes part in a fit: it is always held out,
and only its figures are printed.

What a fit maximises, per training set and summed: (right Answers − cost ×
wrong Answers) ÷ answerable questions, where a wrong Answer is one without the
gold fact or one given to an unanswerable question. The cost (default 2) is
the price of a wrong green badge: an Answer is worth adding when it is right
more than cost ÷ (1 + cost) of the time. A step that lets one more
unanswerable question of any training set be shown as an Answer is never
taken. Each parameter in turn takes the best of its steps, if it raises the
objective: a weight multiplied by 0.5, 0.75, 1.33 or 2, a threshold moved by 5
or 10 %; each gate is scored over one retrieval per question replayed through
the gate (`replay.py`), so a fold takes a few minutes.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from answer.gate import Thresholds, Weights

from .replay import Outcome, outcome

# Thresholds a fit may move (direct_tries and related_floor decide nothing about which pick is an Answer).
THRESHOLDS = ("floor", "support_within", "support_floor", "max_absent", "quantity_focus", "counted_focus")
WEIGHT_STEPS = (0.5, 0.75, 1.33, 2.0)
THRESHOLD_STEPS = (0.9, 0.95, 1.05, 1.1)
Gate = tuple[Weights, Thresholds]


@dataclass(frozen=True)
class Tally:
    """One set's outcome under one gate: right and wrong Answers, unanswerable questions refused."""

    right: int
    wrong: int
    refused: int  # unanswerable questions not shown as an Answer
    answerable: int
    unanswerable: int

    @classmethod
    def of(cls, questions: Sequence[Mapping[str, Any]], outcomes: Sequence[Outcome]) -> Tally:
        pairs = list(zip(questions, outcomes, strict=True))
        right = sum(o.correct for q, o in pairs if q["answerable"])
        answers = sum(o.answered for _, o in pairs)
        refused = sum(not o.answered for q, o in pairs if not q["answerable"])
        answerable = sum(bool(q["answerable"]) for q in questions)
        return cls(right, answers - right, refused, answerable, len(questions) - answerable)

    def figures(self) -> dict[str, float | None]:
        def share(n: int, total: int) -> float | None:
            return round(n / total, 3) if total else None

        return {"answer_correctness": share(self.right, self.answerable),
                "answer_precision": share(self.right, self.right + self.wrong),
                "refusal_accuracy": share(self.refused, self.unanswerable)}


def objective(tallies: Mapping[str, Tally], base: Mapping[str, Tally], wrong_cost: float) -> float:
    """What a fit maximises; minus infinity when any set refuses fewer unanswerable questions than `base`."""
    if any(t.refused < base[name].refused for name, t in tallies.items()):
        return float("-inf")
    return sum((t.right - wrong_cost * t.wrong) / max(1, t.answerable) for t in tallies.values())


def parameters() -> list[str]:
    """What a fit may move: every weight, and the thresholds that decide which pick is an Answer."""
    return [f.name for f in fields(Weights)] + list(THRESHOLDS)


def neighbours(gate: Gate, name: str) -> list[tuple[str, Gate]]:
    """Every one-step change of the weight or threshold `name`: (what changed, the gate it gives)."""
    weights, thresholds = gate
    if name in THRESHOLDS:
        return [(f"{name}={value}", (weights, replace(thresholds, **{name: value})))
                for value in (round(getattr(thresholds, name) * step, 4) for step in THRESHOLD_STEPS)]
    return [(f"{name}={value}", (replace(weights, **{name: value}), thresholds))
            for value in (round(getattr(weights, name) * step, 4) for step in WEIGHT_STEPS)]


def fit(evaluate: Callable[[Gate], dict[str, Tally]], start: Gate, *, wrong_cost: float = 2.0, rounds: int = 3,
        log: Callable[[str], None] = lambda _: None) -> Gate:
    """Coordinate ascent from `start`: each parameter in turn takes its best step, if that raises the objective."""
    base = evaluate(start)
    best, best_score = start, objective(base, base, wrong_cost)
    for _ in range(rounds):
        improved = False
        for name in parameters():
            scored = [(objective(evaluate(candidate), base, wrong_cost), change, candidate)
                      for change, candidate in neighbours(best, name)]
            score, change, candidate = max(scored, key=lambda found: found[0])
            if score > best_score + 1e-9:
                best, best_score, improved = candidate, score, True
                log(f"    {change}: {best_score:.4f}")
        if not improved:
            break
    return best


def differences(fitted: Gate, start: Gate) -> list[str]:
    """The fields a fit moved, as name=value."""
    return [f"{f.name}={getattr(new, f.name)}" for new, old in zip(fitted, start, strict=True)
            for f in fields(new) if getattr(new, f.name) != getattr(old, f.name)]


def main(argv: list[str] | None = None) -> int:
    from answer.services import build_judge
    from answer.settings import AnswerSettings as Settings
    from retrieval.services import open_embedder, open_retriever
    from retrieval.viewer import Viewer

    from .__main__ import build_index, load_jsonl
    from .sites import resolve_sites

    parser = argparse.ArgumentParser(prog="python -m tests.eval.fit_gate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wrong-cost", type=float, default=2.0, help="what a wrong Answer costs against a right one")
    parser.add_argument("--rounds", type=int, default=3, help="coordinate-ascent rounds per fold")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    embedder = open_embedder(settings)
    sites, skipped = resolve_sites("all")
    for reason in skipped:
        print(f"skipped: {reason}", file=sys.stderr)
    sets: dict[str, tuple[Any, list[dict[str, Any]], list[Any], bool]] = {}
    for site in sites:
        corpus, store = build_index(settings.data_dir, site, embedder)
        retriever = open_retriever(settings, store=store, embedder=embedder)
        questions = load_jsonl(site.questions)
        retrievals = [retriever.search(q["question"], Viewer.of(q.get("groups") or []),
                                       version=q.get("version") or None) for q in questions]
        sets[site.name] = (build_judge(corpus.site, retriever, embedder), questions, retrievals, site.figures_only)

    def tally(name: str, gate: Gate) -> Tally:
        judge, questions, retrievals, _ = sets[name]
        own = (judge.extractor.weights, judge.thresholds)
        judge.extractor.weights, judge.thresholds = gate
        try:
            return Tally.of(questions, [outcome(judge, q, r) for q, r in zip(questions, retrievals, strict=True)])
        finally:
            judge.extractor.weights, judge.thresholds = own

    def tallies(names: tuple[str, ...], gate: Gate) -> dict[str, Tally]:
        return {name: tally(name, gate) for name in names}

    labelled = [name for name, (_, _, _, figures_only) in sets.items() if not figures_only]
    starts = {name: (judge.extractor.weights, judge.thresholds) for name, (judge, *_) in sets.items()}
    for held_out in labelled:
        train = [name for name in labelled if name != held_out]
        if not train:
            print(f"== {held_out}: no other labelled set to fit on", flush=True)
            continue
        start = starts[train[0]]  # every set serves with the same weights (the preset changes no number)
        print(f"== fitted on {' + '.join(train)}; held out: {held_out} and every figures-only set", flush=True)
        fitted = fit(functools.partial(tallies, tuple(train)), start, wrong_cost=args.wrong_cost, rounds=args.rounds,
                     log=print)
        print(f"  moved: {', '.join(differences(fitted, start)) or 'nothing'}")
        for name in [held_out, *(n for n in sets if n not in labelled)]:
            print(f"  {name}: {tally(name, start).figures()} -> {tally(name, fitted).figures()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
