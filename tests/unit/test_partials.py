"""Partials: content a page renders from a `_` file is indexed at that page, sourced to the partial's file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ingest.corpus import load_corpus
from ingest.splitter import split_page
from tests.trees import write_tree

REPO = Path(__file__).resolve().parents[2]

SHARED = """---
title: ignored
---

The retention window for exported audit archives is forty-two days after export.

## Setup

Run `ferry init` in the project root and commit the generated file.
"""




def site(tmp_path: Path, extra: dict[str, str] | None = None) -> Path:
    return write_tree(tmp_path, {
        "site.toml": '[site]\nbase_url = "/docs"\npreset = "docusaurus"\nglobal_partials = "partials"\n',
        "_shared/_archive.mdx": SHARED,
        "guides/export.mdx": ("---\ntitle: Export\n---\n\nimport Archive from '../_shared/_archive.mdx'\n\n"
                              "# Export\n\nIntro text of the export page.\n\n## Setup\n\nPage setup.\n\n"
                              "## Archives\n\n<Archive />\n\n## After\n\nDone.\n"),
        "admin/audit.mdx": ("---\ntitle: Audit\naccess: staff\n---\n\nimport Archive from '@site/docs/_shared/_archive.mdx'\n\n"
                            "## Retention\n\n<Archive />\n"),
        **(extra or {}),
    })


def chunks_by_id(root: Path) -> dict:
    corpus = load_corpus(root)
    assert not corpus.failures, corpus.failures
    return {chunk.id: chunk for chunk in corpus.all_chunks()}


def test_partials_are_not_pages(tmp_path: Path) -> None:
    corpus = load_corpus(site(tmp_path))
    assert sorted(p.source for p in corpus.pages) == ["admin/audit.mdx", "guides/export.mdx"]


def test_partial_content_sits_at_the_importing_page_with_its_headings(tmp_path: Path) -> None:
    chunks = chunks_by_id(site(tmp_path))
    archive = chunks["doc:guides/export#archives"]
    assert "forty-two days" in archive.text
    assert archive.url == "/docs/guides/export#archives"
    assert archive.heading_path == ("Export", "Archives")
    assert archive.title == "Export" and archive.access == ("public",)
    # The partial's heading continues the page's duplicate numbering: the page already has a "Setup".
    setup = chunks["doc:guides/export#setup-1"]
    assert "ferry init" in setup.text and setup.url == "/docs/guides/export#setup-1"
    after = chunks["doc:guides/export#after"]
    assert after.source == "guides/export.mdx" and after.text == "Done."


def test_partial_chunks_name_the_partial_file_and_its_lines(tmp_path: Path) -> None:
    root = site(tmp_path)
    chunks = chunks_by_id(root)
    partial_text = (root / "_shared/_archive.mdx").read_text(encoding="utf-8")
    lines = partial_text.split("\n")
    for cid in ("doc:guides/export#archives", "doc:guides/export#setup-1"):
        chunk = chunks[cid]
        assert chunk.source == "_shared/_archive.mdx"
        span = chunk.span
        assert partial_text[span.start:span.end].split("\n") == lines[span.line_start - 1:span.line_end]
        assert chunk.text.split("`")[0].split()[0] in partial_text[span.start:span.end]
    assert chunks["doc:guides/export#archives"].span.line_start == 5  # the paragraph, not the front matter
    page = chunks["doc:guides/export#after"]
    page_text = (root / "guides/export.mdx").read_text(encoding="utf-8")
    assert page_text[page.span.start:page.span.end].strip().endswith("Done.")
    assert page.span.line_start == page_text.split("\n").index("## After") + 1


def test_a_partial_on_two_pages_is_indexed_under_each_with_each_pages_access(tmp_path: Path) -> None:
    corpus = load_corpus(site(tmp_path))
    indexed = {chunk.id: chunk for chunk in corpus.chunks()}  # after the near-duplicate rule
    public = indexed["doc:guides/export#archives"]
    staff = indexed["doc:admin/audit#retention"]
    assert public.text == staff.text
    assert public.access == ("public",) and staff.access == ("staff",)
    assert staff.url == "/docs/admin/audit#retention"
    assert not corpus.duplicates


def test_restricted_page_does_not_lend_its_access_to_the_partial_elsewhere(tmp_path: Path) -> None:
    corpus = load_corpus(site(tmp_path))
    for chunk in corpus.chunks():
        if chunk.doc_id == "doc:guides/export":
            assert chunk.access == ("public",)
        if chunk.doc_id == "doc:admin/audit":
            assert chunk.access == ("staff",)


def test_global_partials_render_by_component_name(tmp_path: Path) -> None:
    root = site(tmp_path, {
        "partials/_header-timeouts.mdx": "### Timeouts {#Timeouts}\n",
        "api/blur.mdx": "---\ntitle: blur\n---\n\n## Rules\n\n<HeaderTimeouts />\n\n- `.blur()` can time out.\n",
    })
    page = load_corpus(root).page("api/blur")
    assert page is not None
    assert [(h.text, h.anchor) for h in page.headings] == [("Rules", "rules"), ("Timeouts", "Timeouts")]
    (timeouts,) = [c for c in split_page(page) if c.anchor == "Timeouts"]
    assert timeouts.source == "api/blur.mdx" and "can time out" in timeouts.text  # the page's list under it


def test_partial_inside_a_fence_is_code_not_an_include(tmp_path: Path) -> None:
    root = site(tmp_path, {"guides/howto.mdx": "---\ntitle: How\n---\n\nimport Archive from '../_shared/_archive.mdx'\n\n"
                                               "```mdx\n<Archive />\n```\n"})
    page = load_corpus(root).page("guides/howto")
    assert page is not None and "forty-two" not in page.body and not page.origins


def test_problems_in_partials_are_reported_at_the_partials_file_and_line(tmp_path: Path) -> None:
    root = site(tmp_path, {
        "_shared/_broken.mdx": "Intro.\n\nSee [the missing page](/nowhere).\n\n```js\nconst open = true\n",
        "_shared/_loop.mdx": "import Loop from './_loop.mdx'\n\n<Loop />\n",
        "guides/uses.mdx": ("---\ntitle: Uses\n---\n\nimport Broken from '../_shared/_broken.mdx'\n"
                            "import Loop from '../_shared/_loop.mdx'\nimport Gone from '../_shared/_gone.mdx'\n\n"
                            "<Broken />\n\n<Loop />\n\n<Gone />\n"),
    })
    corpus = load_corpus(root)
    warnings = "\n".join(corpus.warnings)
    assert "_shared/_broken.mdx:5: code fence is never closed" in warnings
    assert "_shared/_broken.mdx:3: broken link '/nowhere'" in warnings
    assert "_shared/_loop.mdx:3: <Loop /> renders _shared/_loop.mdx, which renders itself" in warnings
    assert "guides/uses.mdx: import of '../_shared/_gone.mdx': no such file" in warnings


def test_an_error_in_a_partial_fails_the_page_naming_the_partial(tmp_path: Path) -> None:
    root = site(tmp_path, {
        "_shared/_bad.mdx": "Text.\n\n<Tabs>\n\nnever closed\n",
        "guides/bad.mdx": "---\ntitle: Bad\n---\n\nimport Bad from '../_shared/_bad.mdx'\n\n<Bad />\n",
    })
    corpus = load_corpus(root)
    (failure,) = corpus.failures
    assert failure.source == "guides/bad.mdx"
    assert "_shared/_bad.mdx:3: <Tabs> is never closed" in str(failure)


def test_outline_and_headings_cli_show_partial_content_at_the_page(tmp_path: Path) -> None:
    root = site(tmp_path)
    result = subprocess.run([sys.executable, "-m", "ingest", "outline", str(root)], capture_output=True, text=True,
                            cwd=REPO, check=True)
    assert '"id": "doc:guides/export#archives"' in result.stdout
    assert '"source": "_shared/_archive.mdx"' in result.stdout
    headings = subprocess.run([sys.executable, "-m", "ingest", "headings", str(root)], capture_output=True, text=True,
                              cwd=REPO, check=True).stdout
    records = [json.loads(line) for line in headings.splitlines()]
    setup = next(r for r in records if r["url"] == "/docs/guides/export#setup-1")
    assert (setup["source"], setup["line"], setup["page"]) == ("_shared/_archive.mdx", 7, "guides/export.mdx")


def test_access_in_a_partial_is_ignored_loudly(tmp_path: Path) -> None:
    root = site(tmp_path, {"_shared/_secret.mdx": "---\naccess: staff\n---\n\nThe staff discount code is forty.\n",
                           "guides/public.mdx": "---\ntitle: Public\n---\n\nimport Secret from '../_shared/_secret.mdx'\n\n"
                                                "## Notes\n\n<Secret />\n\n## Again\n\n<Secret />\n"})
    corpus = load_corpus(root)
    chunks = [c for c in corpus.all_chunks() if c.doc_id == "doc:guides/public"]
    assert [c.access for c in chunks] == [("public",), ("public",)]  # what the real site shows: the page's readers see the partial
    assert sum(w.startswith("_shared/_secret.mdx:2: a partial has the access of each page that renders it")
               for w in corpus.warnings) == 1
