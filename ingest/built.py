"""The built site as the final word on anchors: check chunks against it, or take heading ids from it.

Rules reproduce a site generator, but a site can patch its generator (cypress
docs turn `15.21.0` into `15-21-0`) or render headings from components, and
no rule set can know that. The HTML the site build wrote can:

- `check_built(corpus, built_dir)` reports every chunk whose page has no built
  HTML file or whose anchor is no `id` in it (`python -m ingest check-built`);
- `adopt_built_ids(page, built_dir)` (with `built_dir` in `site.toml`) gives
  each heading the id of the built heading with the same text, in order, and
  reports the headings it could not match. Ids of built headings no source
  heading matches (rendered by components) become valid link targets.

A page with URL path `/a/b` is `DIR/a/b/index.html` or `DIR/a/b.html`; when
the base URL has a path (`/docs`), `DIR` may be the site root or the docs root.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .documents import Chunk, Heading, Page
from .site import SiteConfig
from .text import plain_words

_SKIP_CLASSES = ("hash-link", "anchor-link", "heading-anchor", "sr-only", "headerlink")


@dataclass(frozen=True)
class BuiltHeading:
    level: int
    text: str
    id: str


@dataclass(frozen=True)
class BuiltPage:
    """What the link checker and the anchor rules need from one built HTML page."""

    path: Path
    ids: frozenset[str]
    headings: tuple[BuiltHeading, ...]


@dataclass(frozen=True)
class BuiltProblem:
    """A chunk whose deep link would not land: its file:line, the chunk and why."""

    source: str
    line: int
    chunk_id: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.chunk_id}: {self.reason}"


class _Reader(HTMLParser):
    """Every `id` attribute, and each h1-h6 with its visible text (anchor-link decorations left out)."""

    _VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                       "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.headings: list[BuiltHeading] = []
        self._open: list[tuple[str, bool]] = []  # (tag, text inside is decoration)
        self._heading: tuple[int, str, list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if values.get("id"):
            self.ids.add(values["id"])
        if tag in self._VOID:
            return
        skipping = (bool(self._open) and self._open[-1][1]) or any(
            c in _SKIP_CLASSES for c in values.get("class", "").split())
        self._open.append((tag, skipping))
        if self._heading is None and re.fullmatch(r"h[1-6]", tag):
            self._heading = (int(tag[1]), values.get("id", ""), [])

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if values.get("id"):
            self.ids.add(values["id"])

    def handle_endtag(self, tag: str) -> None:
        if all(open_tag != tag for open_tag, _ in self._open):
            return
        while self._open:
            open_tag, _ = self._open.pop()
            if self._heading is not None and open_tag == f"h{self._heading[0]}":
                level, ident, parts = self._heading
                self.headings.append(BuiltHeading(level, " ".join("".join(parts).split()), ident))
                self._heading = None
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._heading is not None and not (self._open and self._open[-1][1]):
            self._heading[2].append(data)


def read_built_page(path: Path) -> BuiltPage:
    reader = _Reader()
    reader.feed(path.read_text(encoding="utf-8", errors="replace"))
    reader.close()
    return BuiltPage(path, frozenset(reader.ids), tuple(reader.headings))


def built_file(built_dir: Path, page_url: str, site: SiteConfig) -> Path | None:
    """The HTML file the site build wrote for a page URL, or None."""
    path = unquote(urlsplit(page_url).path).strip("/")
    base = urlsplit(site.base_url).path.strip("/")
    candidates = [path]
    if base and (path == base or path.startswith(base + "/")):
        candidates.append(path[len(base):].strip("/"))
    for rel in candidates:
        files = (built_dir / rel / "index.html", built_dir / f"{rel}.html") if rel else (built_dir / "index.html",)
        for file in files:
            if file.is_file():
                return file
    return None


def _key(text: str) -> str:
    return " ".join(plain_words(text))


def adopt_built_ids(page: Page, built_dir: Path, site: SiteConfig) -> Page:
    """The page with each heading's id taken from the built heading of the same text (see module docstring)."""
    file = built_file(built_dir, page.url, site)
    if file is None:
        return dataclasses.replace(page, warnings=(*page.warnings, f"{page.source}:1: no built page for {page.url} in "
                                                   f"{built_dir}: heading ids are computed by the preset's rules"))
    built = read_built_page(file)
    renamed: dict[int, Heading] = {}
    warnings: list[str] = []
    cursor = 0
    used: set[int] = set()
    for heading in page.headings:
        key = _key(heading.text)
        match = next((k for k in range(cursor, len(built.headings)) if _key(built.headings[k].text) == key), None)
        if match is None:
            if heading.anchor is not None:
                where = page.locate(heading.line - 1)
                warnings.append(f"{where[0]}:{where[1] + 1}: heading {heading.text!r} is not on the built page "
                                f"{file}; its id stays {heading.anchor!r}")
            continue
        cursor = match + 1
        used.add(match)
        ident = built.headings[match].id
        if ident and ident != heading.anchor:
            renamed[heading.line] = dataclasses.replace(heading, anchor=ident)
    extra = tuple(h.id for k, h in enumerate(built.headings) if k not in used and h.id)
    headings = tuple(renamed.get(h.line, h) for h in page.headings)
    sections = tuple(dataclasses.replace(s, heading=renamed[s.heading.line])
                     if s.heading is not None and s.heading.line in renamed else s for s in page.sections)
    return dataclasses.replace(page, headings=headings, sections=sections, warnings=(*page.warnings, *warnings),
                               built_ids=extra)


def check_built(chunks: list[Chunk], pages: tuple[Page, ...], built_dir: Path, site: SiteConfig) -> list[BuiltProblem]:
    """Every chunk whose page has no built HTML or whose anchor is no id on it, in file/line order."""
    by_doc = {f"doc:{page.slug}": page for page in pages}
    cache: dict[str, BuiltPage | None] = {}
    problems: list[BuiltProblem] = []
    for chunk in chunks:
        page = by_doc.get(chunk.doc_id)
        url = page.url if page is not None else chunk.url.split("#", 1)[0]
        if url not in cache:
            file = built_file(built_dir, url, site)
            cache[url] = read_built_page(file) if file is not None else None
        built = cache[url]
        if built is None:
            problems.append(BuiltProblem(chunk.source, chunk.span.line_start, chunk.id,
                                         f"page {url} is not in the built site {built_dir}"))
        elif chunk.anchor and chunk.anchor not in built.ids:
            problems.append(BuiltProblem(chunk.source, chunk.span.line_start, chunk.id,
                                         f"id {chunk.anchor!r} is not on the built page {built.path}"))
    return sorted(problems, key=lambda p: (p.source, p.line, p.chunk_id))
