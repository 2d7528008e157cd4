"""The configuration table has one source: docs/configuration.mdx. The README shows the same rows, and every
variable the settings classes read is in it: a hand edit to one copy, or a new setting left out, fails here.
"""

from __future__ import annotations

import re

from tests.conftest import REPO

SETTINGS = ("ingest/settings.py", "retrieval/settings.py", "answer/settings.py", "web/settings.py")
_READ = re.compile(r"""(?:env(?:iron)?\.get|env_path|_whole|_seconds)\(\s*(?:env,\s*)?["']([A-Z][A-Z0-9_]+)["']""")
_README_LINK = re.compile(r"\]\(docs/([\w/-]+)\.mdx(#[\w-]+)?\)")


def table(text: str, after: str) -> list[str]:
    """The rows of the first Markdown table after the line `after` (header and separator left out)."""
    lines = text.split(after, 1)[1].split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows[2:]


def docs_rows() -> list[str]:
    return table((REPO / "docs" / "configuration.mdx").read_text(encoding="utf-8"), "## Environment variables")


def test_the_readme_shows_the_docs_table_row_for_row():
    readme = table((REPO / "README.md").read_text(encoding="utf-8"), "## Configuration")
    as_docs = [_README_LINK.sub(lambda m: f"](/{m.group(1)}{m.group(2) or ''})", row) for row in readme]
    assert as_docs == docs_rows()


def test_every_variable_the_settings_read_is_in_the_table():
    read = {name for path in SETTINGS for name in _READ.findall((REPO / path).read_text(encoding="utf-8"))}
    assert {"CONTENT_DIR", "LLM_ROLE", "DATABASE_URL"} <= read  # the pattern still finds what the classes read
    documented = " ".join(row.split("|")[1] for row in docs_rows())
    assert sorted(name for name in read if f"`{name}`" not in documented) == []
