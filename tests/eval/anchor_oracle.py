"""Cited anchors checked against github-slugger itself (npm, under node), not against our own slugger.

`make eval`'s `anchor_validity` used to look a cited `#id` up in the HTML our
own renderer makes, whose ids come from the same headings and the same
slugger as the citation: it could hardly fail. For a site whose ids follow
github-slugger (the `github` slugger: rehype-slug, GitHub, content/), this
module asks the real package instead. Per page it takes the headings as a
reader's browser sees them (the text of each `<hN>` element of the rendered
page), hands every heading rehype-slug would slug to one `GithubSlugger`
instance in document order (so duplicate numbering is the package's own), and
keeps as-is the ids a page sets itself (`## Title {#id}`, `<h2 id="...">`).
A cited anchor is valid when the package would have put it on that page.

Other sluggers (Docusaurus, github-case) have no npm oracle here; for them
the eval falls back to the renderer check and says so in the report.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ORACLE_ENV = "GITHUB_SLUGGER_ORACLE_DIR"
ORACLE_SLUGGERS = frozenset({"github"})
_SCRIPT = r"""
import GithubSlugger from 'github-slugger'
import fs from 'node:fs'
const pages = JSON.parse(fs.readFileSync(0, 'utf8'))
const out = {}
for (const [page, texts] of Object.entries(pages)) {
  const slugger = new GithubSlugger()
  out[page] = texts.map((text) => slugger.slug(text))
}
process.stdout.write(JSON.stringify(out))
"""
# Ids an author sets on a heading: the `{#id}` suffix of a Markdown heading, the `id` of a raw HTML heading.
_EXPLICIT_ID = re.compile(r"^[ \t]*#{1,6}[ \t].*\{#([^}\s]+)\}[ \t]*$", re.MULTILINE)
_HTML_HEADING_ID = re.compile(r"<h[1-6]\b[^>]*?\bid=(?:\"([^\"]*)\"|'([^']*)')", re.IGNORECASE)
# A raw HTML heading line: in MDX it is JSX, which rehype-slug never sees.
_HTML_HEADING = re.compile(r"^[ \t]*<h([1-6])\b[^>]*>(.*?)</h\1>", re.IGNORECASE | re.MULTILINE)
_TAG = re.compile(r"<[^>]+>")


class _Headings(HTMLParser):
    """(id or None, text content) of every h1-h6 element, in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str | None, str]] = []
        self._open: tuple[str | None, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if re.fullmatch(r"h[1-6]", tag):
            self._open = (dict(attrs).get("id"), [])

    def handle_endtag(self, tag: str) -> None:
        if self._open is not None and re.fullmatch(r"h[1-6]", tag):
            self.found.append((self._open[0], "".join(self._open[1])))
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[1].append(data)


def oracle_folder(data_dir: Path) -> Path:
    """The folder holding node_modules/github-slugger; exits naming the fix when node or the package is missing."""
    folder = Path(os.environ.get(ORACLE_ENV) or data_dir / "oracle")
    if shutil.which("node") is None:
        raise SystemExit("anchor_validity needs node to run github-slugger; install node (CI does)")
    if not (folder / "node_modules" / "github-slugger").is_dir():
        raise SystemExit(f"no github-slugger under {folder}: run `make test` once, or "
                         f"`npm install --prefix {folder} github-slugger@2.0.0`, or set {ORACLE_ENV}")
    return folder


def heading_inputs(page_html: str, source: str) -> tuple[list[str], set[str]]:
    """(texts rehype-slug would slug, in order; ids the page sets itself) for one rendered page and its source."""
    fixed = set(_EXPLICIT_ID.findall(source)) | {a or b for a, b in _HTML_HEADING_ID.findall(source)}
    raw = {" ".join(_TAG.sub(" ", text).split()) for _, text in _HTML_HEADING.findall(source)}
    parser = _Headings()
    parser.feed(page_html)
    texts = [text for ident, text in parser.found
             if ident not in fixed and not (ident is None and " ".join(text.split()) in raw)]
    return texts, fixed


def oracle_slugs(pages: dict[str, list[str]], folder: Path) -> dict[str, list[str]]:
    """Page -> github-slugger's ids for its heading texts, one slugger per page, in one node run."""
    # --input-type=module with -e resolves `github-slugger` from the working directory: no file is written there.
    run = subprocess.run(["node", "--input-type=module", "-e", _SCRIPT], input=json.dumps(pages), capture_output=True,
                         text=True, check=True, cwd=folder.resolve())
    result: dict[str, list[str]] = json.loads(run.stdout)
    return result


def oracle_anchor_validity(corpus: Any, urls: Iterable[str], folder: Path) -> dict[str, bool]:
    """Cited URL -> whether github-slugger would have put its anchor on the cited page."""
    from ingest.page_html import render_html

    base = corpus.site.base_url.rstrip("/")
    targets: dict[str, tuple[str, str]] = {}
    for url in urls:
        parts = urlsplit(url)
        slug = parts.path[len(base):].strip("/") if parts.path.startswith(base) else parts.path.strip("/")
        targets[url] = (slug or "index", parts.fragment.split(":~:")[0])
    texts: dict[str, list[str]] = {}
    fixed: dict[str, set[str]] = {}
    for slug in {slug for slug, _ in targets.values()}:
        page = corpus.page(slug)
        if page is not None:
            texts[slug], fixed[slug] = heading_inputs(render_html(page), page.body)
    slugs = oracle_slugs(texts, folder) if texts else {}
    valid = {slug: set(slugs.get(slug, [])) | fixed[slug] for slug in texts}
    return {url: slug in valid and (not anchor or anchor in valid[slug]) for url, (slug, anchor) in targets.items()}
