"""Authoring slips around front matter fail closed: 18 ways a restricted page's block can be misplaced or misread.

A hostile tester published `access: [staff]` pages five ways (a blank line, an
`import`, a JSX or HTML comment before `---`, TOML `+++`) and the block became
body text: the page was public and quoted. Each variant here is a file on
disk, read as ingest reads it: either its access is read (`staff`) or the page
is withheld with the line to fix, never published with its access ignored.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.errors import PageError
from ingest.parser import parse_page
from ingest.site import SiteConfig

BLOCK = "---\ntitle: Payroll\naccess: [staff]\n---\n"
BODY = "\n# Payroll\n\nSalaries are paid on the 25th of each month.\n"
READ = "staff"  # the block is read: the page is for staff only

VARIANTS: list[tuple[str, bytes, str | int]] = [
    # (name, file bytes, READ or the 1-based line the withheld page is reported at)
    ("on the first line", (BLOCK + BODY).encode(), READ),
    ("after a byte order mark", b"\xef\xbb\xbf" + (BLOCK + BODY).encode(), READ),
    ("with Windows line ends", (BLOCK + BODY).replace("\n", "\r\n").encode(), READ),
    ("with spaces after its fences", (BLOCK.replace("---\n", "---   \n") + BODY).encode(), READ),
    ("after a blank line", ("\n" + BLOCK + BODY).encode(), 2),
    ("after two blank lines and spaces", ("\n  \n" + BLOCK + BODY).encode(), 3),
    ("after an import", ("import Note from '../components/Note';\n" + BLOCK + BODY).encode(), 2),
    ("after a multi-line import", ("import {\n  Tabs,\n  Tab,\n} from '@site/tabs';\n\n" + BLOCK + BODY).encode(), 6),
    ("after an export", ("export const owner = 'people-team';\n" + BLOCK + BODY).encode(), 2),
    ("after a JSX comment", ("{/* internal */}\n" + BLOCK + BODY).encode(), 2),
    ("after a multi-line JSX comment", ("{/*\n  internal page\n*/}\n" + BLOCK + BODY).encode(), 4),
    ("after an HTML comment", ("<!-- internal -->\n" + BLOCK + BODY).encode(), 2),
    ("after a Markdown comment", ("[//]: # (internal)\n" + BLOCK + BODY).encode(), 2),
    ("indented", ("  " + BLOCK.replace("\n", "\n  ", 3) + BODY).encode(), 1),
    ("in TOML", ("+++\ntitle = \"Payroll\"\naccess = [\"staff\"]\n+++\n" + BODY).encode(), 1),
    ("with a language after its fence", (BLOCK.replace("---\n", "---yaml\n", 1) + BODY).encode(), 1),
    ("followed by a second block", ("---\ntitle: Payroll\n---\n\n---\naccess: [staff]\n---\n" + BODY).encode(), 5),
    ("marked draft", ("---\ntitle: Payroll\ndraft: true\n---\n" + BODY).encode(), 3),
]
UNPUBLISHED = [("private", "private: true"), ("restricted", "restricted: [staff]"), ("draft", "draft: yes")]


def _page(tmp_path: Path, data: bytes):  # noqa: ANN202
    (tmp_path / "payroll.mdx").write_bytes(data)
    return parse_page(tmp_path / "payroll.mdx", tmp_path, SiteConfig())


def test_there_are_eighteen_variants():
    assert len(VARIANTS) == 18 and len({name for name, _, _ in VARIANTS}) == 18


@pytest.mark.parametrize(("name", "data", "expected"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_a_restricted_page_is_read_as_restricted_or_withheld_never_public(tmp_path, name, data, expected):
    if expected == READ:
        page = _page(tmp_path, data)
        assert page.access == ("staff",), name
        return
    with pytest.raises(PageError) as caught:
        _page(tmp_path, data)
    assert caught.value.withheld, f"{name}: a failure that keeps old chunks is not enough"
    assert caught.value.line == expected, (name, str(caught.value))


@pytest.mark.parametrize(("key", "line"), UNPUBLISHED)
def test_a_page_the_site_does_not_publish_is_never_indexed(tmp_path, key, line):
    with pytest.raises(PageError) as caught:
        _page(tmp_path, f"---\ntitle: Payroll\n{line}\n---\n{BODY}".encode())
    assert caught.value.withheld and caught.value.line == 3 and repr(key) in str(caught.value)


@pytest.mark.parametrize("text", [
    "import Note from './note';\n\n# Setup\n\nText.\n",  # imports, no front matter
    "import Note from './note';\n\n---\n\nA thematic break after an import, then prose.\n",
    "# Title\n\nProse.\n\n---\n\nkey: value text after a rule mid-page.\n",
    "---\ntitle: Setup\ndraft: false\n---\n\nimport Note from './note';\n\n# Setup\n",  # imports after front matter
])
def test_pages_without_a_misplaced_block_are_published_as_before(tmp_path, text):
    assert _page(tmp_path, text.encode()).access == ("public",)
