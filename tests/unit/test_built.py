"""Anchors checked against a built site: `check-built`, and heading ids taken from the HTML with `built_dir`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ingest.built import check_built, read_built_page
from ingest.corpus import load_corpus
from ingest.errors import SiteConfigError

REPO = Path(__file__).resolve().parents[2]

INTRO = """---
title: Intro
---

# Intro

Hello there.

## Install

Run the installer.

## 15.21.0

Fixed the flaky retries.

## Gone heading

This section is not on the built page.

<Rules />
"""

OTHER = """---
title: Other
---

## Links

See [the rules](/docs/guides/intro#rules) and [the release](/docs/guides/intro#15-21-0).
"""

INTRO_HTML = """<!doctype html><html><body><nav id="nav"><h2>Menu</h2></nav><article>
<h1 id="intro">Intro<a class="hash-link" href="#intro" title="Direct link">&#8203;</a></h1><p>Hello there.</p>
<h2 class="anchor" id="install">Install<a class="hash-link" href="#install">#</a></h2><p>Run the installer.</p>
<h2 class="anchor" id="15-21-0">15.21.0<a class="hash-link" href="#15-21-0">#</a></h2><p>Fixed the flaky retries.</p>
<h3 id="rules">Rules</h3><p>Rendered by a component.</p><img src="x.png"><br>
</article></body></html>"""

OTHER_HTML = '<html><body><h2 id="links">Links</h2><p>See <a href="/docs/guides/intro#rules">the rules</a>.</p></body></html>'


def make_site(tmp_path: Path, *, built_dir: str | None = None) -> Path:
    content = tmp_path / "docs"
    (content / "guides").mkdir(parents=True)
    config = '[site]\nbase_url = "/docs"\npreset = "docusaurus"\n'
    if built_dir:
        config += f'built_dir = "{built_dir}"\n'
    (content / "site.toml").write_text(config)
    (content / "guides" / "intro.mdx").write_text(INTRO)
    (content / "guides" / "other.mdx").write_text(OTHER)
    (content / "guides" / "unbuilt.mdx").write_text("---\ntitle: Unbuilt\n---\n\nNot in the build.\n\n## Part\n\nText.\n")
    build = tmp_path / "build"
    (build / "docs" / "guides" / "intro").mkdir(parents=True)
    (build / "docs" / "guides" / "intro" / "index.html").write_text(INTRO_HTML)
    (build / "docs" / "guides" / "other.html").write_text(OTHER_HTML)
    return content


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ingest", *args], capture_output=True, text=True, cwd=REPO)


def test_reader_takes_ids_and_heading_text_without_anchor_decorations(tmp_path: Path) -> None:
    make_site(tmp_path)
    page = read_built_page(tmp_path / "build" / "docs" / "guides" / "intro" / "index.html")
    assert [(h.level, h.text, h.id) for h in page.headings] == [
        (2, "Menu", ""), (1, "Intro", "intro"), (2, "Install", "install"), (2, "15.21.0", "15-21-0"), (3, "Rules", "rules")]
    assert {"nav", "intro", "install", "15-21-0", "rules"} <= page.ids


def test_check_built_reports_missing_pages_and_ids_as_file_line(tmp_path: Path) -> None:
    content = make_site(tmp_path)
    result = run("check-built", str(tmp_path / "build"), str(content))
    assert result.returncode == 1
    lines = result.stdout.strip().split("\n")
    assert any(line.startswith("guides/intro.mdx:13: doc:guides/intro#15210: id '15210' is not on the built page")
               for line in lines), lines
    assert any(line.startswith("guides/intro.mdx:17: doc:guides/intro#gone-heading: id 'gone-heading'") for line in lines)
    assert any(line.startswith("guides/unbuilt.mdx:4: doc:guides/unbuilt: page /docs/guides/unbuilt is not in the built")
               for line in lines), lines
    assert any(line.startswith("guides/unbuilt.mdx:7: doc:guides/unbuilt#part:") for line in lines)
    assert not any("#install" in line or "guides/other" in line for line in lines)  # both file layouts are found
    assert len(lines) == 4


def test_check_built_passes_on_a_matching_build(tmp_path: Path) -> None:
    content = make_site(tmp_path)
    (content / "guides" / "unbuilt.mdx").unlink()
    (content / "guides" / "intro.mdx").write_text(INTRO.replace("## 15.21.0", "## 15.21.0 {#15-21-0}")
                                                  .replace("## Gone heading\n\nThis section is not on the built page.\n", ""))
    result = run("check-built", str(tmp_path / "build"), str(content))
    assert result.returncode == 0, result.stdout
    assert result.stdout == ""


def test_built_dir_takes_heading_ids_from_the_html(tmp_path: Path) -> None:
    content = make_site(tmp_path, built_dir="../build")
    corpus = load_corpus(content)
    intro = corpus.page("guides/intro")
    assert intro is not None
    assert [h.anchor for h in intro.headings] == ["intro", "install", "15-21-0", "gone-heading"]
    ids = {chunk.id for chunk in corpus.chunks()}
    assert "doc:guides/intro#15-21-0" in ids and "doc:guides/intro#15210" not in ids
    chunk = next(c for c in corpus.chunks() if c.id == "doc:guides/intro#15-21-0")
    assert chunk.url == "/docs/guides/intro#15-21-0" and "flaky retries" in chunk.text
    warnings = "\n".join(corpus.warnings)
    assert "guides/intro.mdx:17: heading 'Gone heading' is not on the built page" in warnings
    assert "guides/unbuilt.mdx:1: no built page for /docs/guides/unbuilt" in warnings
    # A link to a heading only the HTML has (rendered by a component) is not broken; neither is the renamed one.
    assert not [link for link in corpus.broken_links if link.source == "guides/other.mdx"]
    result = run("check-built", str(tmp_path / "build"), str(content))
    lines = result.stdout.strip().split("\n")
    assert result.returncode == 1 and len(lines) == 3  # the unmatched heading and the unbuilt page's two chunks
    assert lines[0].startswith("guides/intro.mdx:17: doc:guides/intro#gone-heading")


def test_a_missing_built_dir_is_a_configuration_error(tmp_path: Path) -> None:
    content = make_site(tmp_path, built_dir="../nowhere")
    with pytest.raises(SiteConfigError, match="build the site first"):
        load_corpus(content)
    assert run("check-built", str(tmp_path / "nowhere"), str(content)).returncode == 2


def test_check_built_library_call(tmp_path: Path) -> None:
    content = make_site(tmp_path)
    corpus = load_corpus(content)
    problems = check_built(corpus.chunks(), corpus.pages, tmp_path / "build" / "docs", corpus.site)
    assert {p.chunk_id for p in problems} == {"doc:guides/intro#15210", "doc:guides/intro#gone-heading",
                                              "doc:guides/unbuilt", "doc:guides/unbuilt#part"}  # DIR = the docs root
