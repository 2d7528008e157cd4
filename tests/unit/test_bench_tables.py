"""The docs' tables of figures are rendered from a run's JSON, never typed by hand."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from tests import docs_figures
from tests.bench.tables import bench_tables, publish_table

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("partial", docs_figures.PARTIALS, ids=lambda p: p.name)
def test_each_docs_partial_is_what_its_recorded_run_renders(partial):
    """A hand edit, or a run's JSON kept without re-rendering, fails here: run `python -m tests.docs_figures`."""
    assert (DOCS / partial.name).read_text() == partial.rendered(), f"docs/{partial.name} is stale or edited by hand"
    importer = [page for page in DOCS.glob("*.mdx") if f"'./{partial.name}'" in page.read_text()]
    assert importer, f"no docs page imports {partial.name}"


def test_the_readme_shows_the_three_sets_as_their_eval_measured_them():
    summary = json.loads((DOCS / "figures" / "eval-summary.json").read_text())
    readme = (DOCS.parent / "README.md").read_text()
    assert readme == docs_figures.readme_with_block(readme, summary), "README's measured section is stale or edited"
    block = docs_figures.readme_block(summary)
    assert all(f" {site} " in block for site in ("content", "cypress", "starlight"))
    assert "cypress − content" in block  # the gap between the tuned and the held-out figures


def test_the_performance_page_holds_no_table_of_figures_typed_by_hand():
    """The performance page's tables of figures are generated partials; the page itself holds prose."""
    for page in [DOCS / "performance.mdx"]:
        for line in page.read_text().splitlines():
            if line.startswith("|") and re.search(r"\d+(\.\d+)? ?(ms|s|MB|req/s)\b", line):
                pytest.fail(f"{page.name}: a figure typed by hand: {line[:100]}")


def test_each_publish_figure_comes_from_the_run():
    point = copy.deepcopy(json.loads((DOCS / "figures" / "scale-100k.json").read_text()))
    point["query_after_reingest"]["first_query_seconds"] = 12.345
    point["during_reingest"]["during"]["over_1s"] = 4242
    point["during_reingest"]["p95_during_over_steady"] = 9.87
    table = publish_table(point)
    assert "| 12.35 s |" in table and ", 4242 |" in table and "(9.87×)" in table


def test_a_bench_report_missing_a_section_leaves_its_rows_out_and_draws_the_rest():
    report = copy.deepcopy(json.loads((DOCS / "figures" / "bench.json").read_text()))
    full = bench_tables(report)
    report["replicas"] = {"error": "PostgreSQL's initdb and pg_ctl were not found"}
    report["query"]["answer_extractive"]["p95_ms"] = 987.6
    partial = bench_tables(report)
    assert "1 replica " in full and "/metrics" in full
    assert "1 replica " not in partial and "2 replicas " not in partial and "/metrics" not in partial
    assert "987.6 ms" in partial and "987.6 ms" not in full
    assert bench_tables({}).count("|---|---|") == 2  # an empty report: two empty tables, no error
    del report["query"]["answer_extractive"]["p95_ms"]  # a section that ran but lacks a figure is a bug, not a skip
    with pytest.raises(KeyError, match="p95_ms"):
        bench_tables(report)


def test_keeping_a_run_writes_its_json_and_its_100k_point(tmp_path, monkeypatch):
    monkeypatch.setattr(docs_figures, "FIGURES", tmp_path)
    point = json.loads((DOCS / "figures" / "scale-100k.json").read_text())
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"scale": [{"chunks": 10, "query": {}}, point]}))
    docs_figures.keep_bench(run)
    assert json.loads((tmp_path / "scale-100k.json").read_text()) == point
    assert json.loads((tmp_path / "bench.json").read_text())["scale"][1] == point
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"sites": {}}))  # a run with no set in it
    with pytest.raises(SystemExit, match="no extractive run"):
        docs_figures.keep_eval(report)
