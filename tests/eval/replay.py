"""Replay the answer gate over one fixed retrieval per question: a weight or threshold change, every set, in a minute.

    python -m tests.eval.replay [--site all|content|cypress|starlight] --vary continues=0.2 --vary floor=0.8
    python -m tests.eval.replay --site starlight --vary type_match=0.3 --asked

`make eval` answers every question end to end, minutes per set. A change to
`answer/gate/weights.py` changes only which spans the gate picks, so this
retrieves once per question and then asks the same `AnswerGate.pick` the
extractive generator drafts from, once per variant: one `--vary` is one
variant, a name of `Weights` or `Thresholds` and its value (repeat a name to
sweep it). It prints, per set, answer correct, direct answer correct, refusal
accuracy, answer rate and the median characters quoted, graded as `make eval`
grades them (a chosen span carrying the gold quote), and the questions each
variant changes.

`--asked` also replays the questions in `tests/eval/asked/<site>.txt`, asked the way a visitor
would and written without a gold quote, and prints each one whose quotes a variant changes, before and
after, for a person to read. Gold quotes grade what their authors expected; a signal can raise every graded
figure and still lead other questions with a true sentence beside the point (docs/performance.mdx, the
purpose clause taken back on 2026-12-07). Never for a set kept for figures only.

A screen, not the record: a variant worth keeping is then run through
`make eval` on every set (the verifier and the judge sit between the pick and
the visitor). On 2026-12-04 the two agreed on every question's correct answer,
refusal and answer on all three sets, in 77 s for three variants; the direct
figure differed on one content/ question, whose claims the judge reorders.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from answer.gate import AnswerGate, Thresholds, Weights
from retrieval.search import RetrievalSet

from .grounding import _overlap, _p
from .sites import HERE, NAMED, resolve_sites

Variant = tuple[str, Weights, Thresholds]


@dataclass(frozen=True)
class Outcome:
    """What the gate picked for one question: nothing (a refusal), or spans of which some may carry the gold."""

    answered: bool
    correct: bool
    direct: bool
    quoted: int  # characters the chosen spans quote: a longer answer must not buy correctness
    quotes: tuple[str, ...] = ()  # the chosen spans' texts, direct answer first


def parse_variant(text: str, base: tuple[Weights, Thresholds] = (Weights(), Thresholds())) -> Variant:
    """`name=value` as a variant of the gate's defaults: a `Weights` or `Thresholds` field, or a clear error."""
    name, _, value = text.partition("=")
    weights, thresholds = base
    known = {f.name: f.type for f in fields(Weights)} | {f.name: f.type for f in fields(Thresholds)}
    if name not in known or not value:
        raise ValueError(f"--vary wants name=value with a name of Weights or Thresholds ({', '.join(sorted(known))}); "
                         f"got {text!r}")
    try:
        number: float = int(value) if known[name] in (int, "int") else float(value)
    except ValueError:
        raise ValueError(f"--vary {name} wants a number, got {value!r}") from None
    if name in {f.name for f in fields(Weights)}:
        return text, replace(weights, **{name: number}), thresholds
    return text, weights, replace(thresholds, **{name: number})


def outcome(gate: AnswerGate, question: Mapping[str, Any], rset: RetrievalSet) -> Outcome:
    """The gate's pick for one question, graded against its gold quote."""
    chosen, _ = gate.pick(gate.question(question["question"]), rset)
    gold = question.get("answer_quote") or ""
    carries = [bool(gold) and _overlap(gold, s.span.text) for s in chosen]
    return Outcome(bool(chosen), any(carries), bool(carries) and carries[0], sum(len(s.span.text) for s in chosen),
                   tuple(s.span.text for s in chosen))


def replay(gate: AnswerGate, questions: Sequence[Mapping[str, Any]], retrievals: Sequence[RetrievalSet],
           variants: Iterable[Variant]) -> dict[str, list[Outcome]]:
    """Each variant's outcome per question, the gate's own weights and thresholds first (as "default")."""
    extractor = gate.extractor
    own = (extractor.weights, gate.thresholds)
    found: dict[str, list[Outcome]] = {}
    try:
        for name, weights, thresholds in [("default", *own), *variants]:
            extractor.weights, gate.thresholds = weights, thresholds
            found[name] = [outcome(gate, q, rset) for q, rset in zip(questions, retrievals, strict=True)]
    finally:
        extractor.weights, gate.thresholds = own
    return found


def figures(questions: Sequence[Mapping[str, Any]], outcomes: Sequence[Outcome]) -> dict[str, float | int | None]:
    """The `make eval` figures of one variant on one set."""
    answerable = [o for q, o in zip(questions, outcomes, strict=True) if q["answerable"]]
    refusable = [o for q, o in zip(questions, outcomes, strict=True) if not q["answerable"]]

    def share(hits: int, total: int) -> float | None:
        return round(hits / total, 4) if total else None

    return {"answer_correctness": share(sum(o.correct for o in answerable), len(answerable)),
            "direct_answer_correctness": share(sum(o.direct for o in answerable), len(answerable)),
            "refusal_accuracy": share(sum(not o.answered for o in refusable), len(refusable)),
            "answer_rate": share(sum(o.answered for o in answerable), len(answerable)),
            "quoted_chars_p50": int(_p([o.quoted for o in outcomes if o.answered], 0.5))}


def changes(questions: Sequence[Mapping[str, Any]], before: Sequence[Outcome], after: Sequence[Outcome], *,
            figures_only: bool = False) -> list[str]:
    """The questions a variant changes: now right or wrong, now answered or refused.

    For a set kept for figures only (questions written outside the team) no question is named: only how many
    moved each way, so a screen never shows which of its questions failed.
    """
    def state(q: Mapping[str, Any], o: Outcome) -> str:
        if not q["answerable"]:
            return "answered" if o.answered else "refused"
        return "correct" if o.correct else "answered without the gold" if o.answered else "refused"

    moved = [(q["id"], state(q, a), state(q, b)) for q, a, b in zip(questions, before, after, strict=True)
             if state(q, a) != state(q, b)]
    if figures_only:
        counted = Counter(f"{was} -> {now}" for _, was, now in moved)
        return [f"{n} question{'s' if n > 1 else ''}: {way}" for way, n in sorted(counted.items())]
    return [f"{qid}: {was} -> {now}" for qid, was, now in moved]


def moved_quotes(asked: Sequence[str], before: Sequence[Outcome], after: Sequence[Outcome],
                 width: int = 160) -> list[str]:
    """Each asked question whose quotes a variant changes, with the quotes before and after (each cut to `width`)."""
    def shown(o: Outcome) -> str:
        return " | ".join(q[:width].replace("\n", " ") for q in o.quotes) if o.answered else "(nothing answers)"

    return [f"{question}\n        before: {shown(a)}\n        after:  {shown(b)}"
            for question, a, b in zip(asked, before, after, strict=True) if a.quotes != b.quotes]


def asked_questions(site_name: str) -> list[str]:
    """The visitor questions written for a site (`tests/eval/asked/<site>.txt`, one a line, "#" a comment)."""
    path = HERE / "asked" / f"{site_name}.txt"
    if not path.exists():
        return []
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def main(argv: list[str] | None = None) -> int:
    from answer.services import build_judge
    from answer.settings import AnswerSettings as Settings
    from retrieval.services import open_embedder, open_retriever
    from retrieval.viewer import Viewer

    from .__main__ import build_index, load_jsonl

    parser = argparse.ArgumentParser(prog="python -m tests.eval.replay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", default="all", help=f"all (every set whose corpus exists) or one of {', '.join(NAMED)}")
    parser.add_argument("--vary", action="append", default=[], metavar="NAME=VALUE",
                        help="a Weights or Thresholds field and its value; one variant each, repeatable")
    parser.add_argument("--asked", action="store_true",
                        help="also print the visitor questions (tests/eval/asked/<site>.txt) whose quotes a variant changes")
    args = parser.parse_args(argv)
    try:
        for text in args.vary:
            parse_variant(text)  # a wrong name or value fails before anything is indexed
    except ValueError as exc:
        parser.error(str(exc))
    settings = Settings.from_env()
    embedder = open_embedder(settings)
    sites, skipped = resolve_sites(args.site)
    for reason in skipped:
        print(f"skipped: {reason}", file=sys.stderr)
    for site in sites:
        corpus, store = build_index(settings.data_dir, site, embedder)
        retriever = open_retriever(settings, store=store, embedder=embedder)
        gate = build_judge(corpus.site, retriever, embedder)
        questions = load_jsonl(site.questions)
        retrievals = [retriever.search(q["question"], Viewer.of(q.get("groups") or []), version=q.get("version") or None)
                      for q in questions]
        own = (gate.extractor.weights, gate.thresholds)  # each variant changes one field of what the site serves with
        found = replay(gate, questions, retrievals, [parse_variant(text, own) for text in args.vary])
        print(f"== {site.name} ({len(questions)} questions)")
        for name, outcomes in found.items():
            print(f"  {name}: {figures(questions, outcomes)}")
            for line in changes(questions, found["default"], outcomes, figures_only=site.figures_only):
                print(f"      {line}")
        asked = asked_questions(site.name) if args.asked and args.vary and not site.figures_only else []
        if asked:
            rsets = [retriever.search(text, Viewer.anonymous()) for text in asked]
            moved = replay(gate, [{"question": text} for text in asked], rsets,
                           [parse_variant(text, own) for text in args.vary])
            print(f"  asked ({len(asked)} visitor questions, no gold)")
            for name, outcomes in moved.items():
                if name != "default":
                    lines = moved_quotes(asked, moved["default"], outcomes)
                    print(f"    {name}: {len(lines)} changed")
                    for line in lines:
                        print(f"      {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
