"""Parse one MDX file into a `Page`: front matter, headings with the site's ids, sections of clean text.

markdown-it-py and python-frontmatter live only here. The text produced for
each block is what the model reads and what quotes are verified against, so it
is readable prose: markup dropped, link text kept, inline code kept in
backticks, code fences kept as fences, tables as ` | `-separated rows.
"""

from __future__ import annotations

import difflib
import functools
import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import frontmatter
import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from .documents import GROUP_RULE, PUBLIC, Block, Heading, Link, Page, Section, is_group_name
from .errors import PageError
from .ids import content_hash
from .mdx import GAP, SOFT, convert, find_fences, to_markdown
from .partials import Expansion, expand
from .site import SiteConfig
from .slugger import make_slugger

_EXPLICIT_ID = re.compile(r"\s*\{#(?P<id>[^}\s]+)\}\s*$")
_COMPONENT_TAG = re.compile(r"</?[A-Z][\w.]*(?:\s[^<>]*)?/?>")
_HTML_TAG = re.compile(r"<[^>]+>")
_HTML_HEADING = re.compile(r"^\s*<h([1-6])\b(?P<attrs>[^>]*)>(?P<text>.*?)</h\1>[ \t]*(?:\n|$)", re.IGNORECASE)
_ID_ATTR = re.compile(r"\bid=(?:\"([^\"]*)\"|'([^']*)')")
_JSX_HREF = re.compile(r"<[A-Za-z][^<>]*?\bhref=([\"'])(?P<href>[^\"']*)\1")
_SPACES = re.compile(r"[ \t]{2,}")


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """CommonMark + tables + strikethrough, HTML on (for JSX), indented code off (as in MDX)."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).disable("code")


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
    fm_lines = _front_matter(text, source)[1]
    expansion = expand(text, source, content_dir, skip_lines=fm_lines, global_folder=site.global_partials)
    return parse_text(expansion.text, source, site, expansion=expansion, raw=text)


def parse_text(text: str, source: str, site: SiteConfig, *, expansion: Expansion | None = None,
               raw: str = "") -> Page:
    """Parse MDX text; `source` is its path relative to the content root.

    With `expansion` (partials spliced in by `parse_page`), `text` is the
    expanded page and `raw` the page file's own text; errors and warnings
    name the file and line they were written on.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    origins = expansion.origins if expansion else ()

    def where(line: int) -> str:  # 1-based line of `text` -> "file:line" where it was written
        file, number = (origins[line - 1] if origins and 0 < line <= len(origins) else (source, line - 1))
        return f"{file}:{number + 1}"

    meta, fm_lines = _front_matter(text, source)
    converted = convert(text, skip_lines=fm_lines)
    if converted.errors:
        line, reason = converted.errors[0]
        location = where(line)
        if location.startswith(f"{source}:"):
            raise PageError(source, int(location.rsplit(":", 1)[1]), reason)
        raise PageError(source, None, f"{location}: {reason} (in a partial this page renders)")
    tokens = _markdown().parse(converted.markdown)
    slugger = make_slugger(site.slugger_name)
    headings = _headings(tokens, lambda text: site.rules.heading_id(slugger, text))

    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    current: Heading | None = None
    blocks: list[Block] = []
    start = fm_lines
    total_lines = text.count("\n") + 1

    def close(end: int) -> None:
        heading_path = tuple(t for _, t in path)
        sections.append(Section(current, heading_path if current else (), tuple(blocks), start, end))

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
        end = _matching_close(tokens, i)
        blocks.extend(_render_blocks(tokens[i : end + 1]))
        i = end + 1
    close(total_lines)

    title = str(meta.get("title") or _first_h1(list(headings.values())) or Path(source).stem)
    access = _access(meta, source, text)
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
        links=_located_links(_links(tokens, text, fm_lines), origins, source),
        warnings=tuple(f"{where(line)}: {reason}" for line, reason in converted.warnings)
        + (expansion.warnings if expansion else ()),
        origins=origins,
        included=((source, raw), *expansion.files) if origins and expansion else (),
    )


def _located_links(links: tuple[Link, ...], origins: tuple[tuple[str, int], ...], source: str) -> tuple[Link, ...]:
    """Links with the file and line they are written on (a partial's links are reported in the partial)."""
    if not origins:
        return links
    located = []
    for link in links:
        file, line = origins[link.line - 1] if 0 < link.line <= len(origins) else (source, link.line - 1)
        located.append(Link(link.target, line + 1, "" if file == source else file))
    return tuple(located)


def _headings(tokens: list[Token], heading_id: Callable[[str], str]) -> dict[tuple[int, int], Heading]:
    """Every heading by (token index, line in block), in document order, so duplicate numbering matches the site's.

    Headings nested in lists, quotes or components get ids on the site too
    (rehype-slug visits every heading); raw `<hN>` HTML/JSX headings do not,
    unless they carry an `id` attribute.
    """
    found: dict[tuple[int, int], Heading] = {}  # (token index, line within an HTML block)
    for i, token in enumerate(tokens):
        line = token.map[0] if token.map else 0
        if token.type == "heading_open":
            display, anchor_text, explicit = _heading_text(tokens[i + 1])
            anchor = explicit or heading_id(anchor_text)
            found[(i, 0)] = Heading(line=line + 1, level=int(token.tag[1]), text=display, anchor=anchor)
        elif token.type == "html_block":
            for k, text in enumerate(token.content.split("\n")):
                match = _HTML_HEADING.match(text)
                if match:
                    ident = _ID_ATTR.search(match["attrs"])
                    found[(i, k)] = Heading(line=line + k + 1, level=int(match.group(1)), text=_strip_tags(match["text"]),
                                                  anchor=(ident[1] or ident[2]) if ident else None)
    return found


def _strip_tags(raw: str) -> str:
    return " ".join(html.unescape(_HTML_TAG.sub(" ", raw)).replace(SOFT, "").replace(GAP, " ").split())


def _links(tokens: list[Token], text: str, fm_lines: int) -> tuple[Link, ...]:
    """Every link target with its source line: Markdown links and JSX `href` attributes outside code."""
    lines = text.split("\n")
    found: list[Link] = []
    for token in tokens:
        if token.type != "inline" or not token.map:
            continue
        first, last = token.map
        for child in token.children or []:
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                line = next((k for k in range(first, last) if href in lines[k]), first)
                found.append(Link(href, line + 1))
    in_fence: set[int] = set()
    for fence in find_fences(lines):
        in_fence.update(range(fence.start, fence.end))
    for k in range(fm_lines, len(lines)):
        if k not in in_fence:
            found.extend(Link(m["href"], k + 1) for m in _JSX_HREF.finditer(lines[k]))
    return tuple(sorted(set(found), key=lambda link: (link.line, link.target)))


def render_html(page: Page, *, link_base: str = "") -> str:
    """The page body as safe HTML with exactly the heading ids its chunks use.

    Raw HTML and JSX are never passed through (tags dropped, text escaped), so
    content cannot inject script into the docs viewer; site-root links get
    `link_base` in front so they work inside the viewer.
    """
    fm_lines = _front_matter(page.body, page.source)[1]
    md = _markdown()
    tokens = md.parse(to_markdown(page.body, skip_lines=fm_lines))
    anchors = {h.line: h.anchor for h in page.headings if h.anchor}
    for token in tokens:
        line = token.map[0] + 1 if token.map else 0
        if token.type == "heading_open" and line in anchors:
            token.attrSet("id", anchors[line])
        elif token.type == "html_block":
            token.content = _safe_html_block(token.content, line, anchors)
        elif token.type == "inline":
            for child in token.children or []:
                if child.type == "html_inline":
                    child.content = " " if child.content.lower().startswith("<br") else ""
                elif child.type == "text":
                    child.content = _COMPONENT_TAG.sub("", child.content).replace(SOFT, "").replace(GAP, " ")
                elif child.type == "link_open":
                    href = str(child.attrGet("href") or "")
                    if href.startswith("/") and not href.startswith("//") and link_base:
                        child.attrSet("href", link_base.rstrip("/") + href)
            if token.children and token.children[-1].type == "text":
                token.children[-1].content = _EXPLICIT_ID.sub("", token.children[-1].content)
    return str(md.renderer.render(tokens, md.options, {}))


def _safe_html_block(content: str, line: int, anchors: dict[int, str]) -> str:
    """A raw HTML block as escaped text: `<hN>` lines stay headings (with an id only if they had one), the rest a paragraph."""
    out: list[str] = []
    para: list[str] = []
    for k, text in enumerate(content.split("\n") + [""]):
        heading = _HTML_HEADING.match(text)
        if heading or k == content.count("\n") + 1:
            rest = _strip_tags("\n".join(para))
            out.append(f"<p>{html.escape(rest)}</p>\n" if rest else "")
            para = []
        if heading:
            level = heading.group(1)
            ident = f' id="{html.escape(anchors[line + k])}"' if (line + k) in anchors else ""
            out.append(f"<h{level}{ident}>{html.escape(_strip_tags(heading['text']))}</h{level}>\n")
        else:
            para.append(text)
    return "".join(out)


def _front_matter(text: str, source: str) -> tuple[dict[str, Any], int]:
    """YAML front matter and how many lines it takes; malformed YAML names its line."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        raise PageError(source, 1, "front matter opened with '---' but never closed")
    try:
        post = frontmatter.loads("\n".join(lines[: end + 1]) + "\n")
    except yaml.YAMLError:
        try:  # parse the block alone so the error marks count from the line after the opening '---'
            yaml.safe_load("\n".join(lines[1:end]))
            raise PageError(source, 1, "invalid YAML front matter")
        except yaml.YAMLError as exc:
            mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            reason = " ".join(str(p) for p in (getattr(exc, "context", None), getattr(exc, "problem", None)) if p)
            raise PageError(source, line, f"invalid YAML front matter: {reason or exc}") from exc
    block = yaml.safe_load("\n".join(lines[1:end]))  # python-frontmatter turns a non-mapping into {}: a public page
    if not isinstance(post.metadata, dict) or not isinstance(block, (dict, type(None))):
        raise PageError(source, 2, f"front matter must be a YAML mapping, got {type(block).__name__}")
    return dict(post.metadata), end + 1


def _access(meta: dict[str, Any], source: str, text: str = "") -> tuple[str, ...]:
    """Who may read the page: front matter `access` (a group or list of groups), default public.

    A key that looks like a misspelled `access` fails the page instead of
    silently publishing what the author meant to restrict. A group name outside
    the group alphabet fails the page too: the index keys groups by name, and
    `team.a` must never quietly become someone else's `team_a`.
    """
    for key in meta:
        if isinstance(key, str) and key != "access" and difflib.get_close_matches(key.strip().lower(), ["access"], cutoff=0.75):
            raise PageError(source, 1, f"front matter key {key!r} looks like a misspelled 'access'; "
                                       "write exactly 'access' (a misspelling would make the page public)")
    value = meta.get("access", PUBLIC)
    groups = [value] if isinstance(value, str) else value
    if not isinstance(groups, list) or not groups or not all(isinstance(g, str) and g.strip(" \t") for g in groups):
        raise PageError(source, 1, f"front matter 'access' must be a group name or a list of them, got {value!r}")
    names = sorted({g.strip(" \t") for g in groups})  # ASCII blanks only: "staff\xa0" must not become staff
    for name in names:
        if not is_group_name(name):
            raise PageError(source, _key_line(text, "access"),
                            f"group name {name!r} in 'access' is not allowed: use {GROUP_RULE}")
    return tuple(names)


def _key_line(text: str, key: str) -> int:
    """The 1-based line of a top-level front matter key (1 when it cannot be found)."""
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() in ("---", "..."):
            break
        if re.match(rf"{re.escape(key)}\s*:", line):
            return number
    return 1


def _first_h1(headings: list[Heading]) -> str | None:
    return next((h.text for h in headings if h.level == 1), None)


def _heading_text(inline: Token) -> tuple[str, str, str | None]:
    """(display text, text the slugger sees, explicit id) of a heading's inline token."""
    children = list(inline.children or [])
    explicit = None
    if children and children[-1].type == "text":
        match = _EXPLICIT_ID.search(children[-1].content)
        if match:
            explicit = match["id"]
            last = children[-1]
            children[-1] = Token(last.type, last.tag, last.nesting, content=last.content[: match.start()])
    display = _inline_text(children, code_ticks=False)
    anchor_text = _inline_text(children, code_ticks=False, for_anchor=True)
    return display.strip(), anchor_text, explicit


def _inline_text(children: list[Token], *, code_ticks: bool = True, for_anchor: bool = False) -> str:
    """Rendered text of inline tokens: what a reader sees, markup gone (JSX markers: see mdx.py)."""
    parts: list[str] = []
    gap = "" if for_anchor else " "
    for child in children:
        if child.type == "text":
            parts.append(_COMPONENT_TAG.sub("", child.content).replace(SOFT, "").replace(GAP, gap))
        elif child.type == "code_inline":
            parts.append(f"`{child.content}`" if code_ticks else child.content)
        elif child.type == "softbreak":
            parts.append(" ")
        elif child.type == "hardbreak":
            parts.append("\n")
        elif child.type == "html_inline" and child.content.lower().startswith("<br"):
            parts.append(gap)
        elif child.type == "image" and code_ticks:
            parts.append(_inline_text(list(child.children or []), code_ticks=code_ticks))
    text = "".join(parts)
    return text if for_anchor else _SPACES.sub(" ", text)


def _matching_close(tokens: list[Token], i: int) -> int:
    """Index of the token closing the block that opens at i (i itself for leaf blocks)."""
    if tokens[i].nesting != 1:
        return i
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


def _render_blocks(tokens: list[Token]) -> list[Block]:
    """One top-level block as clean text (a raw `<hN>` line and what follows it become two)."""
    head = tokens[0]
    if head.type == "html_block" and head.map:
        match = _HTML_HEADING.match(head.content)
        if match and match.end() < len(head.content.rstrip()):
            rest = Token("html_block", "", 0, content=head.content[match.end():], map=[head.map[0] + 1, head.map[1]])
            first = Token("html_block", "", 0, content=match.group(), map=[head.map[0], head.map[0] + 1])
            return _render_blocks([first]) + _render_blocks([rest])
    block = _render_block(tokens)
    return [block] if block is not None else []


def _render_block(tokens: list[Token]) -> Block | None:
    """One block as clean text, or None when nothing readable remains."""
    head = tokens[0]
    line_start, line_end = head.map if head.map else (0, 0)
    kind = {
        "paragraph_open": "paragraph",
        "heading_open": "heading",
        "bullet_list_open": "list",
        "ordered_list_open": "list",
        "table_open": "table",
        "fence": "code",
        "blockquote_open": "quote",
        "html_block": "html",
    }.get(head.type)
    if kind is None:
        return None
    if kind == "code":
        lang = head.info.split()[0] if head.info.strip() else ""
        ticks = "`" * max([3] + [len(m) + 1 for m in re.findall(r"^[ \t]*(`{3,})", head.content, re.MULTILINE)])
        text = f"{ticks}{lang}\n{head.content.rstrip()}\n{ticks}"
    elif kind == "html":
        heading = _HTML_HEADING.match(head.content)
        text = _strip_tags(heading["text"] if heading else head.content)
        if heading:
            kind = "html-heading"
    elif kind == "heading":
        text = _heading_text(tokens[1])[0]
    elif kind == "table":
        text = _render_table(tokens)
    elif kind == "list":
        text = "\n".join(_render_list(tokens, 0))
    elif kind == "quote":
        text = "\n".join(b.text for b in _render_children(tokens[1:-1]))
    else:
        text = _inline_text(list(tokens[1].children or [])).strip()
    text = text.strip("\n")
    if not text.strip():
        return None
    return Block(text=text, line_start=line_start, line_end=line_end, kind=kind)


def _render_children(tokens: list[Token]) -> list[Block]:
    blocks: list[Block] = []
    i = 0
    while i < len(tokens):
        end = _matching_close(tokens, i)
        blocks.extend(_render_blocks(tokens[i : end + 1]))
        i = end + 1
    return blocks


def _render_table(tokens: list[Token]) -> str:
    rows: list[list[str]] = []
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(_inline_text(list(token.children or [])).strip())
    return "\n".join(" | ".join(row) for row in rows)


def _render_list(tokens: list[Token], indent: int) -> list[str]:
    """List items as `- text` / `1. text` lines; nested lists indented two spaces."""
    lines: list[str] = []
    ordered = tokens[0].type == "ordered_list_open"
    number = int(tokens[0].attrGet("start") or 1) if ordered else 0
    i = 1
    while i < len(tokens) - 1:
        if tokens[i].type != "list_item_open":
            i += 1
            continue
        end = _matching_close(tokens, i)
        marker = f"{number}." if ordered else "-"
        number += 1
        item_text: list[str] = []
        nested: list[str] = []
        j = i + 1
        while j < end:
            close = _matching_close(tokens, j)
            if tokens[j].type in ("bullet_list_open", "ordered_list_open"):
                nested.extend(_render_list(tokens[j : close + 1], indent + 2))
            else:
                item_text.extend(block.text for block in _render_blocks(tokens[j : close + 1]))
            j = close + 1
        lines.append(" " * indent + f"{marker} " + " ".join(item_text))
        lines.extend(nested)
        i = end + 1
    return lines


# --- Inline Markdown for display (quotes and hover cards in the chat) ---

MARK_START, MARK_END = "\ue000", "\ue001"  # private-use sentinels: never in rendered output
_EMPHASIS_MARKS = "*_~"
_SENTINEL_SPLIT = re.compile(f"([{MARK_START}{MARK_END}])")
_ENCODED_SENTINEL = re.compile("%EE%80%8[01]", re.IGNORECASE)  # markdown-it percent-encodes them in URLs


@functools.lru_cache(maxsize=1)
def _inline_markdown() -> MarkdownIt:
    """Inline CommonMark for hostile text: raw HTML off, no images, entities left as typed.

    Chunk text is already rendered text (the parser decoded entities), so
    `&amp;` in it is what the docs page showed and must not be decoded twice.
    Every link is parsed — even `javascript:` — so the caller's policy, not
    markdown-it's, decides which become links; the rest show their text only.
    """
    md = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").disable(["image", "entity"])
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


def render_inline(
    markdown: str,
    *,
    link: Callable[[str], bool] | None = None,
    span: tuple[int, int] | None = None,
    clip: bool = False,
) -> str:
    """Safe HTML for one line of inline Markdown: code, emphasis and (allowed) links, everything else escaped.

    `link(href)` says which links stay links (default: none; their text is kept).
    `span` marks a character range of `markdown` with <mark> — or, with `clip`,
    renders only that range — while markup that crosses its edges stays balanced,
    so a quote that starts inside `a code span` never shows a stray backtick.
    """
    text = markdown.replace(MARK_START, "\ufffd").replace(MARK_END, "\ufffd")
    if span is not None:
        text = _with_sentinels(text, *span)
    tokens = _inline_markdown().parseInline(text)
    children = (tokens[0].children or []) if tokens else []
    return _InlineHtml(link or (lambda href: False), marking=span is not None, clip=clip).render(children)


def _with_sentinels(text: str, start: int, end: int) -> str:
    """`text` with MARK_START/MARK_END at the span's edges, moved inside emphasis runs at those edges.

    Placed between an emphasis run and its word, a sentinel reads like a letter
    to the delimiter rules, so `**bold**` around the edge still pairs up.
    """
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    while start < end and text[start] in _EMPHASIS_MARKS:
        start += 1
    while end > start and text[end - 1] in _EMPHASIS_MARKS:
        end -= 1
    if start >= end:
        return text
    return text[:start] + MARK_START + text[start:end] + MARK_END + text[end:]


class _InlineHtml:
    """Renders markdown-it inline tokens; only a fixed set of tags is ever produced, all text escaped."""

    TAGS = {"em": "em", "strong": "strong", "s": "s"}

    def __init__(self, allow: Callable[[str], bool], *, marking: bool, clip: bool) -> None:
        self.allow = allow
        self.marking = marking
        self.clip = clip
        self.inside = not marking  # within the span; with no span, everything is
        self.out: list[str] = []
        self.open: list[tuple[str, str] | None] = []  # (open tag, close tag); None for a link shown as text
        self.emitted = 0  # how many of `open` are written out (clip mode writes them only when needed)

    def render(self, children: list[Token]) -> str:
        for token in children:
            kind = token.type
            if kind in ("text", "code_inline"):
                self._text(token.content, code=kind == "code_inline")
            elif kind in ("softbreak", "hardbreak"):
                self._text(" ")
            elif kind.endswith("_open"):
                self._push(self._open_tag(token))
            elif kind.endswith("_close"):
                self._pop()
            else:
                self._text(token.content)
        while self.open:
            self._pop()
        return "".join(self.out)

    def _open_tag(self, token: Token) -> tuple[str, str] | None:
        if token.type == "link_open":
            href = _ENCODED_SENTINEL.sub(lambda m: MARK_END if m.group()[-1] == "1" else MARK_START,
                                         str(token.attrGet("href") or ""))
            self._toggle(href + str(token.attrGet("title") or ""))  # a span edge inside a URL still moves the mark
            clean = href.replace(MARK_START, "").replace(MARK_END, "")
            if not self.allow(clean):
                return None
            return f'<a href="{html.escape(clean, quote=True)}" target="_blank" rel="noopener">', "</a>"
        tag = self.TAGS.get(token.type.removesuffix("_open"))
        return (f"<{tag}>", f"</{tag}>") if tag else None

    def _push(self, tag: tuple[str, str] | None) -> None:
        self.open.append(tag)
        if not self.clip:
            self._flush()

    def _pop(self) -> None:
        tag = self.open.pop()
        if self.emitted > len(self.open):
            self.emitted = len(self.open)
            if tag is not None:
                self.out.append(tag[1])

    def _flush(self) -> None:
        """Write out the open tags not yet written (clip mode defers them until text inside the span needs them)."""
        for tag in self.open[self.emitted :]:
            if tag is not None:
                self.out.append(tag[0])
        self.emitted = len(self.open)

    def _toggle(self, text: str) -> None:
        for char in text:
            if char == MARK_START:
                self.inside = True
            elif char == MARK_END:
                self.inside = False

    def _text(self, content: str, *, code: bool = False) -> None:
        pieces: list[tuple[bool, str]] = []
        for part in _SENTINEL_SPLIT.split(content):
            if part in (MARK_START, MARK_END):
                self.inside = part == MARK_START
            elif part and (self.inside or not self.clip):
                pieces.append((self.inside, part))
        if not pieces:
            return
        self._flush()
        mark = self.marking and not self.clip
        body = "".join(f"<mark>{html.escape(p)}</mark>" if inside and mark else html.escape(p) for inside, p in pieces)
        self.out.append(f"<code>{body}</code>" if code else body)
