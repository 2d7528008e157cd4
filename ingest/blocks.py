"""markdown-it tokens to readable text: headings with their ids, blocks of clean prose.

The text produced for each block is what the model reads and what quotes are
verified against, so it is readable prose: markup dropped, link text kept,
inline code kept in backticks, code fences kept as fences, tables as
` | `-separated rows. markdown-it-py is configured here, once, for the parser
and the HTML renderer alike.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Iterator
from dataclasses import replace

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .documents import Block, Heading
from .mdx import GAP, NAME, SOFT

EXPLICIT_ID = re.compile(r"\s*\{#(?P<id>[^}\s]+)\}\s*$")
COMPONENT_TAG = re.compile(r"</?[A-Z][\w.]*(?:\s[^<>]*)?/?>")
_HTML_TAG = re.compile(r"<[^>]+>")
HTML_HEADING = re.compile(r"^\s*<h([1-6])\b(?P<attrs>[^>]*)>(?P<text>.*?)</h\1>[ \t]*(?:\n|$)", re.IGNORECASE)
_ID_ATTR = re.compile(r"\bid=(?:\"([^\"]*)\"|'([^']*)')")
_SPACES = re.compile(r"[ \t]{2,}")


@functools.lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    """CommonMark + tables + strikethrough, HTML on (for JSX), indented code off (as in MDX)."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).disable("code")


def headings(tokens: list[Token], heading_id: Callable[[str], str]) -> dict[tuple[int, int], Heading]:
    """Every heading by (token index, line in block), in document order, so duplicate numbering matches the site's.

    Headings nested in lists, quotes or components get ids on the site too
    (rehype-slug visits every heading); raw `<hN>` HTML/JSX headings do not,
    unless they carry an `id` attribute.
    """
    found: dict[tuple[int, int], Heading] = {}  # (token index, line within an HTML block)
    for i, token in enumerate(tokens):
        line = token.map[0] if token.map else 0
        if token.type == "heading_open":
            display, anchor_text, explicit = heading_text(tokens[i + 1])
            anchor = explicit or heading_id(anchor_text)
            found[(i, 0)] = Heading(line=line + 1, level=int(token.tag[1]), text=display, anchor=anchor)
        elif token.type == "html_block":
            for k, text in enumerate(token.content.split("\n")):
                match = HTML_HEADING.match(text)
                if match:
                    ident = _ID_ATTR.search(match["attrs"])
                    found[(i, k)] = Heading(line=line + k + 1, level=int(match.group(1)), text=strip_tags(match["text"]),
                                            anchor=(ident[1] or ident[2]) if ident else None)
    return found


_NAMED = re.compile(f"{NAME}([^{NAME}]*){NAME}")  # a tab's name (mdx.py)


def strip_tags(raw: str) -> str:
    return " ".join(html.unescape(_HTML_TAG.sub(" ", raw)).replace(SOFT, "").replace(GAP, " ").replace(NAME, "").split())


def heading_text(inline: Token) -> tuple[str, str, str | None]:
    """(display text, text the slugger sees, explicit id) of a heading's inline token."""
    children = list(inline.children or [])
    explicit = None
    if children and children[-1].type == "text":
        match = EXPLICIT_ID.search(children[-1].content)
        if match:
            explicit = match["id"]
            last = children[-1]
            children[-1] = Token(last.type, last.tag, last.nesting, content=last.content[: match.start()])
    display = _inline_text(children, code_ticks=False).replace(NAME, "")
    anchor_text = _inline_text(children, code_ticks=False, for_anchor=True).replace(NAME, "")
    return display.strip(), anchor_text, explicit


def _inline_text(children: list[Token], *, code_ticks: bool = True, for_anchor: bool = False) -> str:
    """Rendered text of inline tokens: what a reader sees, markup gone (JSX markers: see mdx.py)."""
    parts: list[str] = []
    gap = "" if for_anchor else " "
    for child in children:
        if child.type == "text":
            parts.append(COMPONENT_TAG.sub("", child.content).replace(SOFT, "").replace(GAP, gap))
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


def matching_close(tokens: list[Token], i: int) -> int:
    """Index of the token closing the block that opens at i (i itself for leaf blocks)."""
    if tokens[i].nesting != 1:
        return i
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


def render_blocks(tokens: list[Token]) -> list[Block]:
    """One top-level block as clean text (a raw `<hN>` line and what follows it become two)."""
    head = tokens[0]
    if head.type == "html_block" and head.map:
        match = HTML_HEADING.match(head.content)
        if match and match.end() < len(head.content.rstrip()):
            rest = Token("html_block", "", 0, content=head.content[match.end():], map=[head.map[0] + 1, head.map[1]])
            first = Token("html_block", "", 0, content=match.group(), map=[head.map[0], head.map[0] + 1])
            return render_blocks([first]) + render_blocks([rest])
    if head.type in _LIST_OPEN and _holds_blocks(tokens):
        return _list_blocks(tokens)
    block = _render_block(tokens)
    if block is None:
        return []
    if block.kind != "paragraph" or NAME not in block.text:
        return [replace(block, text=block.text.replace(NAME, ""))] if NAME in block.text else [block]
    # A tab's name is a paragraph of its own, apart from what the lines around its tag hold ("… restart." above it):
    # it starts a tab, so nothing before it introduces what follows it (`Block.apart`).
    pieces = [(piece.strip(), k % 2 == 1) for k, piece in enumerate(_NAMED.split(block.text))]
    return [replace(block, text=piece, apart=named) for piece, named in pieces if piece.replace(NAME, "")]


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
        heading = HTML_HEADING.match(head.content)
        text = strip_tags(heading["text"] if heading else head.content)
        if heading:
            kind = "html-heading"
    elif kind == "heading":
        text = heading_text(tokens[1])[0]
    elif kind == "table":
        text = _render_table(tokens)
    elif kind == "list":
        text = "\n".join(_render_list(tokens, 0))
    elif kind == "quote":
        children = _render_children(tokens[1:-1])
        # a code block no item holds stands after a blank line, so it never reads as a step's command (`HELD`)
        text = "".join(("\n\n" if b.kind == "code" and not b.held else "\n") * bool(k) + b.text
                       for k, b in enumerate(children))
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
        end = matching_close(tokens, i)
        blocks.extend(render_blocks(tokens[i : end + 1]))
        i = end + 1
    return blocks


CELL_SEPARATOR = " | "  # between the cells of a table row in chunk text


def table_cells(line: str) -> tuple[tuple[int, int], ...]:
    """(start, end) in `line` of each cell of a table row as chunk text stores it ("a | b | c").

    The one rule for reading a row back (quote spans, quotes rendered as tables): a separator inside a `code
    span` does not split; leading and trailing pipes and blanks are not part of a cell; fewer than two cells is
    no row, ().
    """
    start, end = 0, len(line)
    while start < end and line[start] in "| ":
        start += 1
    while end > start and line[end - 1] in "| ":
        end -= 1
    cells: list[tuple[int, int]] = []
    cell, ticks, k = start, 0, start
    while k < end:
        if line[k] == "`":
            ticks += 1
        elif line.startswith(CELL_SEPARATOR, k) and ticks % 2 == 0:
            cells.append((cell, k))
            cell = k = k + len(CELL_SEPARATOR)
            continue
        k += 1
    cells.append((cell, end))
    return tuple(cells) if len(cells) >= 2 else ()


def _render_table(tokens: list[Token]) -> str:
    rows: list[list[str]] = []
    for token in tokens:
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(_inline_text(list(token.children or [])).strip())
    return "\n".join(CELL_SEPARATOR.join(row) for row in rows)


# A line of chunk text that opens a list item, as `_render_list` and `_list_blocks` write it ("- ", "3. ", indented
# two spaces a level): the one definition every reader of list lines uses (the splitter, quote spans).
LIST_MARKER = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+")
_LIST_OPEN = ("bullet_list_open", "ordered_list_open")
_OWN_BLOCKS = ("fence", "table_open", "blockquote_open")  # blocks a list item's line cannot hold
_TEXT_LIKE = ("paragraph", "html", "heading", "html-heading")  # an item's text, on its line as before


def _holds_blocks(tokens: list[Token]) -> bool:
    """Whether a list's items hold a code block, a table, a quote or tabs (a tab's name: mdx.py), at any depth."""
    return any(t.type in _OWN_BLOCKS or (t.type == "inline" and NAME in t.content) for t in tokens[1:-1])


def _list_blocks(tokens: list[Token], indent: int = 0) -> list[Block]:
    """A list whose items hold blocks, as the page shows it: each item's text a list line, and what the item holds
    after it (a command, a table, tabs) a block of its own, where it stands.

    Joined into its item's one line, a fenced command read as words of a sentence: quoted from its middle, cut
    before its closing fence, one tab's command run into the next tab's name. Apart, the item's sentence
    is quoted with the command it holds (`Block.held`: "1. Install the plugin:" and its `npm install …`), a tab's
    name stands before its tab's block, and a quote never starts or stops inside code. Items of plain text keep
    their lines, nested lists indented under them; numbering goes on after a block ("2." after the first step's
    command), a nested list that holds blocks indented under its item.
    """
    out: list[Block] = []
    lines: list[str] = []
    span = [0, 0]  # source lines of the list lines not yet emitted

    def flush() -> None:
        if lines:
            out.append(Block(text="\n".join(lines), line_start=span[0], line_end=span[1], kind="list"))
            lines.clear()

    for marker, item, children in _items(tokens):
        text: list[str] = []
        nested: list[str] = []
        held: list[Block] = []  # the item's blocks from its first block that is not text on its line
        by_nested = False
        item_lines = item.map or (0, 0)
        text_end = item_lines[0] + 1
        for child in children:
            if child[0].type in _LIST_OPEN:
                if held or _holds_blocks(child):
                    by_nested = by_nested or not held  # what a nested list holds is its items', never this item's
                    held.extend(_list_blocks(child, indent + 2))  # under its item, as the page nests it
                else:
                    nested.extend(_render_list(child, indent + 2))
                    text_end = (child[0].map or item_lines)[1]
                continue
            for block in render_blocks(child):  # text before a block or a tab's name stays on the item's line
                if held or nested or block.kind not in _TEXT_LIKE or block.apart:
                    held.append(block)
                else:
                    text.append(block.text)
                    text_end = max(text_end, block.line_end)
        if text or nested:
            if not lines:
                span[0] = item_lines[0]
            lines.append(" " * indent + f"{marker} " + " ".join(text))
            lines.extend(nested)
            span[1] = text_end
        if held:
            flush()
            if text and not nested and not by_nested and held[0].kind == "code" and not held[0].apart:
                held[0] = replace(held[0], held=True)  # the item's own command, quoted with it (`HELD`)
            out.extend(held)
    flush()
    return out


def _items(tokens: list[Token]) -> Iterator[tuple[str, Token, list[list[Token]]]]:
    """Each item of a list: its marker ("3." from the list's start, or "-"), its opening token, its child blocks."""
    ordered = tokens[0].type == "ordered_list_open"
    number = int(tokens[0].attrGet("start") or 1) if ordered else 0
    i = 1
    while i < len(tokens) - 1:
        if tokens[i].type != "list_item_open":
            i += 1
            continue
        end = matching_close(tokens, i)
        children: list[list[Token]] = []
        j = i + 1
        while j < end:
            close = matching_close(tokens, j)
            children.append(tokens[j : close + 1])
            j = close + 1
        yield (f"{number}." if ordered else "-"), tokens[i], children
        number += 1
        i = end + 1


def _render_list(tokens: list[Token], indent: int) -> list[str]:
    """List items as `- text` / `1. text` lines; nested lists indented two spaces."""
    lines: list[str] = []
    for marker, _, children in _items(tokens):
        item_text: list[str] = []
        nested: list[str] = []
        for child in children:
            if child[0].type in _LIST_OPEN:
                nested.extend(_render_list(child, indent + 2))
            else:
                item_text.extend(block.text for block in render_blocks(child))
        lines.append(" " * indent + f"{marker} " + " ".join(item_text))
        lines.extend(nested)
    return lines
