"""The performance page's publish table is rendered from a bench run's JSON, never typed by hand."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from tests.bench.tables import main, publish_table

DOCS = Path(__file__).resolve().parents[2] / "docs"
RUN = DOCS / "figures" / "scale-100k.json"


def test_the_docs_table_is_what_its_recorded_run_renders():
    assert (DOCS / "_publish-100k.mdx").read_text() == publish_table(json.loads(RUN.read_text()), source=RUN.name)
    assert "<Publish100k />" in (DOCS / "performance.mdx").read_text()


def test_each_figure_comes_from_the_run(tmp_path):
    point = copy.deepcopy(json.loads(RUN.read_text()))
    point["query_after_reingest"]["first_query_seconds"] = 12.345
    point["during_reingest"]["during"]["over_1s"] = 4242
    point["during_reingest"]["p95_during_over_steady"] = 9.87
    table = publish_table(point)
    assert "| 12.35 s |" in table and ", 4242 |" in table and "(9.87×)" in table
    report = tmp_path / "bench.json"
    report.write_text(json.dumps({"scale": [{"chunks": 10, "query": {}}, point]}))
    out = tmp_path / "table.mdx"
    assert main([str(report), "--write", str(out)]) == 0 and out.read_text() == publish_table(point, source="bench.json")
    assert main([str(report), "--point", "0"]) == 2  # a --url point has no publish figures: said, not a KeyError
