"""Golden outlines: each tests/fixtures/mdx/<case>.mdx against the <case>.outline.jsonl a human reviewed.

Regenerate after an intended change with
`UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_mdx_golden.py -p no:cacheprovider`
and review the diff of the .jsonl files before committing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ingest.errors import PageError
from ingest.parser import parse_text
from ingest.site import SiteConfig
from ingest.splitter import split_page

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mdx"
CASES = sorted(p.stem for p in FIXTURES.glob("*.mdx"))
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"


def outline(case: str) -> list[dict]:
    """What a reviewer wants to see of a page: page facts, warnings, headings, then chunks."""
    source = f"{case}.mdx"
    try:
        page = parse_text((FIXTURES / source).read_text(encoding="utf-8"), source, SiteConfig())
    except PageError as exc:
        return [{"error": str(exc)}]
    records: list[dict] = [{"page": page.slug, "title": page.title, "url": page.url,
                            "version": page.version, "access": list(page.access)}]
    records += [{"warning": w} for w in page.warnings]
    records += [{"heading": h.text, "level": h.level, "line": h.line, "anchor": h.anchor} for h in page.headings]
    records += [{"id": c.id, "anchor": c.anchor, "heading_path": list(c.heading_path),
                 "lines": [c.span.line_start, c.span.line_end], "text": c.text} for c in split_page(page)]
    return records


def test_every_fixture_has_a_golden_file():
    assert CASES, "no fixtures found"
    missing = [c for c in CASES if not (FIXTURES / f"{c}.outline.jsonl").exists()]
    assert UPDATE or not missing, f"run with UPDATE_GOLDEN=1 to create: {missing}"


@pytest.mark.parametrize("case", CASES)
def test_outline_matches_golden(case: str):
    golden = FIXTURES / f"{case}.outline.jsonl"
    actual = outline(case)
    if UPDATE:
        golden.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in actual), encoding="utf-8")
    expected = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert actual == expected
