"""Parse one MDX file into a `Page`: front matter, headings with the site's ids, sections of clean text.

The pieces live beside it: MDX to CommonMark (mdx.py, jsx.py), partials
(partials.py), front matter and access (front_matter.py), tokens to headings
and readable text (blocks.py), link extraction (links.py). The HTML the docs
viewer shows is page_html.py; inline Markdown for quotes is inline.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .blocks import headings as find_headings
from .blocks import markdown, matching_close, render_blocks
from .documents import Block, Heading, Page, Section
from .errors import PageError
from .front_matter import FrontMatter, front_matter, page_access
from .ids import content_hash
from .links import located_links, page_links
from .mdx import convert
from .partials import Expansion, expand
from .site import SiteConfig
from .slugger import make_slugger

MAX_PAGE_BYTES = 2_000_000


def read_source(path: Path, source: str) -> str:
    """Decode a content file; invalid UTF-8 is an error naming the byte offset's line.

    Pages over `MAX_PAGE_BYTES` are refused: markdown-it-py parses ~0.1-0.2 MB/s
    here, and a multi-megabyte page is generated output, not prose to cite.
    """
    size = path.stat().st_size
    if size > MAX_PAGE_BYTES:
        raise PageError(source, None, f"file is {size:,} bytes; pages over {MAX_PAGE_BYTES:,} bytes are not ingested (split it)")
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PageError(source, line, f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc


def parse_page(path: Path, content_dir: Path, site: SiteConfig) -> Page:
    """Parse the file at `path` (inside `content_dir`) into a Page, with the partials it renders spliced in."""
    source = path.relative_to(content_dir).as_posix()
    text = read_source(path, source).replace("\r\n", "\n").replace("\r", "\n")
    fm = front_matter(text, source)
    access = page_access(fm, source)  # first: a page that fails further on still says who may read it
    try:
        expansion = expand(text, source, content_dir, skip_lines=fm.lines, global_folder=site.global_partials,
                           partial_folders=site.rules.partial_folders, root_imports=site.rules.root_imports)
    except PageError as exc:
        raise exc.with_access(access) from exc
    return parse_text(expansion.text, source, site, expansion=expansion, raw=text)


def parse_text(text: str, source: str, site: SiteConfig, *, expansion: Expansion | None = None,
               raw: str = "") -> Page:
    """Parse MDX text; `source` is its path relative to the content root.

    With `expansion` (partials spliced in by `parse_page`), `text` is the
    expanded page and `raw` the page file's own text; errors and warnings
    name the file and line they were written on. Front matter is read first:
    a failure further on carries the page's access (see `PageError.access`).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    fm = front_matter(text, source)
    access = page_access(fm, source)
    try:
        return _parse_body(text, source, site, fm, access, expansion, raw)
    except PageError as exc:
        raise exc.with_access(access) from exc


def _parse_body(text: str, source: str, site: SiteConfig, fm: FrontMatter, access: tuple[str, ...],
                expansion: Expansion | None, raw: str) -> Page:
    """Everything after the front matter: headings with the site's ids, sections, links, warnings."""
    origins = expansion.origins if expansion else ()

    def where(line: int) -> str:  # 1-based line of `text` -> "file:line" where it was written
        file, number = (origins[line - 1] if origins and 0 < line <= len(origins) else (source, line - 1))
        return f"{file}:{number + 1}"

    meta, fm_lines = fm.meta, fm.lines
    converted = convert(text, skip_lines=fm_lines, component_text=site.rules.component_text)
    if converted.errors:
        line, reason = converted.errors[0]
        location = where(line)
        if location.startswith(f"{source}:"):
            raise PageError(source, int(location.rsplit(":", 1)[1]), reason)
        raise PageError(source, None, f"{location}: {reason} (in a partial this page renders)")
    tokens = markdown().parse(converted.markdown)
    slugger = make_slugger(site.slugger_name)
    headings = find_headings(tokens, lambda text: site.rules.heading_id(slugger, text))

    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    current: Heading | None = None
    blocks: list[Block] = []
    start = fm_lines
    total_lines = text.count("\n") + 1

    def close(end: int) -> None:
        heading_path = tuple(t for _, t in path)
        kept = _kept_apart(blocks, converted.apart)
        sections.append(Section(current, heading_path if current else (), kept, start, end))

    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open" and token.level == 0:
            line = token.map[0] if token.map else 0
            close(line)
            current = headings[(i, 0)]
            while path and path[-1][0] >= current.level:
                path.pop()
            path.append((current.level, current.text))
            blocks, start = [], line
            i += 3
            continue
        end = matching_close(tokens, i)
        blocks.extend(render_blocks(tokens[i : end + 1]))
        i = end + 1
    close(total_lines)

    title = str(meta.get("title") or _first_h1(list(headings.values())) or Path(source).stem)
    page_hash = content_hash(text)
    slug = site.rules.page_slug(source, meta)
    return Page(
        source=source,
        slug=slug,
        url=site.page_url(slug),
        title=title,
        version=str(meta.get("version") or page_hash[:12]),
        access=access,
        front_matter=meta,
        body=text,
        hash=page_hash,
        sections=tuple(s for s in sections if s.heading is not None or s.blocks),
        headings=tuple(headings.values()),
        links=located_links(page_links(tokens, text, fm_lines), origins, source),
        warnings=tuple(f"{where(line)}: {reason}" for line, reason in converted.warnings)
        + (expansion.warnings if expansion else ()),
        origins=origins,
        included=((source, raw), *expansion.files) if origins and expansion else (),
    )


def _first_h1(headings: list[Heading]) -> str | None:
    return next((h.text for h in headings if h.level == 1), None)


def _kept_apart(blocks: list[Block], ends: tuple[int, ...]) -> tuple[Block, ...]:
    """The blocks, each marked `apart` when a tab or a tabs component closes between it and the block before: on
    the last line of that block ("… restart.</TabItem>") or on a line between them. Each close parts one pair of
    blocks; a tab's name comes apart already (blocks.py), and spends the close before it."""
    out: list[Block] = []
    waiting = sorted(ends)
    for block in blocks:
        before = out[-1] if out else None
        if block.apart:  # a later tab's name (blocks.py): the close before it, on its lines or earlier, is spent
            waiting = [line for line in waiting if line >= block.line_end]
        elif before is not None and any(before.line_end - 1 <= line < block.line_start for line in waiting):
            waiting = [line for line in waiting if line >= block.line_start]
            block = replace(block, apart=True)
        out.append(block)
    return tuple(out)
