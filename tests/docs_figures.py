"""The docs' tables of figures, rendered from the JSON a bench or eval run wrote, so none is typed by hand.

    python -m tests.docs_figures                        # re-render every partial from docs/figures/*.json
    python -m tests.docs_figures --bench bench-results/bench.json --eval eval-results/report.json
                                                        # keep a new run's figures, then re-render

Each partial (`docs/_*.mdx`, imported by a docs page) has one source under
`docs/figures/` and one renderer here. A unit test renders every partial again
and fails when a file differs from its render: a hand edit, or a run's JSON
kept without re-rendering.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.bench.tables import GENERATED, bench_tables, heap_table, publish_table
from tests.eval.compare import summary as compare_sets
from tests.eval.compare import summary_markdown

DOCS = Path(__file__).resolve().parents[1] / "docs"
FIGURES = DOCS / "figures"


def quality_table(summary: dict[str, Any], *, source: str) -> str:
    """The extractive answerer's headline figures on every set, the held-out gaps beside them."""
    lines = [GENERATED.replace("{source}", source)]
    lines += summary_markdown({"extractive": summary["extractive"]}, headings=False)
    return "\n".join(lines) + "\n"


README = DOCS.parent / "README.md"
README_START, README_END = "<!-- measured: rendered by `python -m tests.docs_figures` -->", "<!-- /measured -->"
HEADLINE = (("answer_correctness", "answer correct"), ("answer_precision", "precision of Answers"),
            ("gold_shown", "gold shown (Answer or Related)"), ("refusal_accuracy", "refusal accuracy (never an Answer)"),
            ("answer_rate", "answer rate"), ("related_rate", "Related passages rate"),
            ("quote_correctness", "quote correctness"))


def readme_block(summary: dict[str, Any]) -> str:
    """The README's measured section: the headline figures of the three sets, the held-out gaps beside them."""
    return "\n".join([README_START, *summary_markdown({"extractive": summary["extractive"]}, headings=False,
                                                        rows=HEADLINE)[1:], README_END])


def readme_with_block(readme: str, summary: dict[str, Any]) -> str:
    """The README text with its measured block rendered again (the markers stay where the author put them)."""
    start, end = readme.index(README_START), readme.index(README_END) + len(README_END)
    return readme[:start] + readme_block(summary) + readme[end:]


@dataclass(frozen=True)
class Partial:
    """One generated docs partial: the file a page imports, the JSON it comes from, how it is drawn."""

    name: str
    source: str
    render: Callable[..., str]

    def rendered(self, figures: Path = FIGURES) -> str:
        return self.render(json.loads((figures / self.source).read_text()), source=f"docs/figures/{self.source}")


PARTIALS = (
    Partial("_bench.mdx", "bench.json", bench_tables),
    Partial("_publish-100k.mdx", "scale-100k.json", publish_table),
    Partial("_heap-10k.mdx", "heap-10k.json", heap_table),
    Partial("_quality.mdx", "eval-summary.json", quality_table),
)


def keep_bench(report: Path) -> None:
    """A `make bench` run's report becomes the docs' figures; its 100k point, if it measured one, too."""
    data = json.loads(report.read_text())
    (FIGURES / "bench.json").write_text(json.dumps(data, indent=2) + "\n")
    for point in data.get("scale", []):
        if point.get("chunks", 0) >= 90_000 and "during_reingest" in point:  # --large asks 100k, makes a few less
            (FIGURES / "scale-100k.json").write_text(json.dumps(point, indent=2) + "\n")


def keep_eval(report: Path) -> None:
    """A `make eval` run's side-by-side summary becomes the docs' quality figures."""
    summary = compare_sets(json.loads(report.read_text())["sites"])  # drawn anew: a report from older code has older rows
    if "extractive" not in summary:
        raise SystemExit(f"{report}: no extractive run in it (make eval EVAL_ARGS='--generator extractive')")
    (FIGURES / "eval-summary.json").write_text(json.dumps(summary, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.docs_figures", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, help="a `make bench` report (bench-results/bench.json) to keep first")
    parser.add_argument("--eval", type=Path, help="a `make eval` report (eval-results/report.json) to keep first")
    args = parser.parse_args(argv)
    if args.bench:
        keep_bench(args.bench)
    if args.eval:
        keep_eval(args.eval)
    for partial in PARTIALS:
        (DOCS / partial.name).write_text(partial.rendered())
        print(f"wrote docs/{partial.name} from docs/figures/{partial.source}")
    README.write_text(readme_with_block(README.read_text(), json.loads((FIGURES / "eval-summary.json").read_text())))
    print("wrote README.md's measured section from docs/figures/eval-summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
