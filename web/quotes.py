"""Quotes and hover-card excerpts shown the way the docs page shows them: Markdown rendered, never raw.

Chunk text keeps a little Markdown — code spans, list markers, table rows as
`a | b`, code fences — because quotes are verified against it verbatim. A
visitor should read "`ferry deploy` needs `--yes`" as code, a table row under
its column headers, a list item without its dash. Everything here is built
from `render_inline` (markdown-it, HTML off), so content can never inject
markup; a link stays a link only when the caller's `link` check accepts it.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from markupsafe import Markup

from ingest.blocks import table_cells
from ingest.inline import render_inline
from ingest.mdx import FENCE_LINE

EXCERPT_CHARS = 160
LinkCheck = Callable[[str], bool]

TEXT, ITEM, HEADING, ROW, CODE, FENCE, BLANK = "text", "item", "heading", "row", "code", "fence", "blank"
_MARKER = re.compile(r"^\s*(?:(?P<heading>#{1,6})|(?P<item>[-*+]|\d{1,3}[.)])|(?P<quote>>))(?:\s+|$)")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.-]{1,20}")  # a fence's language as a class name: nothing else reaches HTML
_SEPARATOR_CELL = re.compile(r"^[\s:|-]*$")
# Spans a cut must not fall inside: a code span, a link, strong/emphasis/strikethrough.
_ATOMIC = re.compile(r"(`+)(?:(?!\1).)+?\1|!?\[[^\]\n]*\]\([^)\n]*\)|\*\*[^*\n]+?\*\*|__[^_\n]+?__|~~[^~\n]+?~~"
                     r"|(?<![*\w])\*(?![\s*])[^*\n]+?(?<!\s)\*(?!\*)")


@dataclass(frozen=True)
class Line:
    """One line of chunk text: where its content starts (after any list/heading marker) and what it is."""

    start: int  # first character of the line
    body: int  # first character of its content
    end: int  # end of the line (before the newline)
    kind: str
    cells: tuple[tuple[int, int], ...] = ()  # (start, end) of each table cell, for rows


def lines(text: str) -> list[Line]:
    """Every line of `text`, classified like answer/contract/spans.py reads blocks: fences, tables, lists, headings, prose."""
    raw: list[Line] = []
    offset, fence = 0, ""
    for line in text.split("\n"):
        end = offset + len(line)
        opener = FENCE_LINE.match(line)
        if fence:
            closes = opener is not None and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence)
            raw.append(Line(offset, end, end, FENCE) if closes else Line(offset, offset, end, CODE))
            fence = "" if closes else fence
        elif opener:
            fence = opener.group(1)
            raw.append(Line(offset, end, end, FENCE))
        elif not line.strip():
            raw.append(Line(offset, end, end, BLANK))
        else:
            marker = _MARKER.match(line)
            kind = TEXT if marker is None else HEADING if marker["heading"] else ITEM if marker["item"] else TEXT
            body = offset + (marker.end() if marker else len(line) - len(line.lstrip()))
            raw.append(Line(offset, body, end, kind))
        offset = end + 1
    return _tables(text, raw)


def _tables(text: str, raw: list[Line]) -> list[Line]:
    """Mark runs of two or more plain lines that all have cells as table rows (a lone "a | b" line is prose)."""
    out = list(raw)
    i = 0
    while i < len(out):
        j = i
        while j < len(out) and out[j].kind == TEXT and len(_cells(text, out[j])) >= 2:
            j += 1
        if j - i >= 2:
            for k in range(i, j):
                cells = _cells(text, out[k])
                blank = all(_SEPARATOR_CELL.match(text[a:b]) for a, b in cells)
                out[k] = Line(out[k].start, out[k].body, out[k].end, BLANK if blank else ROW, () if blank else cells)
        i = max(j, i + 1)
    return out


def _cells(text: str, line: Line) -> tuple[tuple[int, int], ...]:
    """(start, end) in `text` of each cell of a table row line (ingest.blocks.table_cells reads the row)."""
    return tuple((line.body + a, line.body + b) for a, b in table_cells(text[line.body:line.end]))


def quote_html(text: str, start: int, end: int, *, header: str = "", link: LinkCheck | None = None) -> Markup:
    """The quote `text[start:end]` as the docs render it; table rows become a small table under `header`.

    Each line is rendered whole and clipped to the quote, so markup crossing the
    quote's edge (a code span it starts inside) stays balanced.
    """
    parts: list[str] = []
    rows: list[list[str]] = []
    code: list[str] = []  # consecutive lines of a code block the quote includes (a command it introduces)
    language = ""  # of the block being read: its opening fence names it, even when the quote starts below that
    for line in lines(text):
        if line.start >= end:
            break
        if line.kind == FENCE:
            if code:  # a closing fence: the block the quote holds ends here
                parts.append(_code(code, language))
                code = []
            opening = FENCE_LINE.match(text[line.start:line.end])
            language = text[line.start:line.end][opening.end():].strip().split(" ")[0] if opening else ""
        if line.end <= start:
            continue
        if line.kind == CODE:
            code.append(text[max(start, line.body):min(end, line.end)])
            continue
        if code and line.kind != BLANK:
            parts.append(_code(code, language))
            code = []
        if line.kind == ROW:
            rows.append([render_inline(text[a:b], span=(start - a, end - a), clip=True, link=link)
                         for a, b in line.cells])
            continue
        if rows:
            parts.append(_table(rows, header, link))
            rows = []
        if line.kind not in (FENCE, BLANK):
            body = text[line.body:line.end]
            shown = render_inline(body, span=(start - line.body, end - line.body), clip=True, link=link)
            if shown.strip():
                parts.append(_step(text, line, start) + shown)
    if code:
        parts.append(_code(code, language))
    if rows:
        parts.append(_table(rows, header, link))
    return Markup("<br>".join(p for p in parts if p))


_STEP = re.compile(r"\s*(\d{1,3})[.)]\s")


def _step(text: str, line: Line, start: int) -> str:
    """An ordered list item's number, shown before it when the quote holds the item from its start (the number
    is the page's, not part of the quoted text): steps 2 and 3 quoted read "2." and "3.", not as two steps."""
    step = _STEP.match(text, line.start, line.body) if line.kind == ITEM and start <= line.body else None
    return f'<span class="step">{step.group(1)}.</span> ' if step else ""


def _code(code: list[str], language: str = "") -> str:
    """Quoted lines of a code block as the page shows them: one preformatted block, line breaks kept.

    Lines are dedented together (a block inside a list item is indented in the source, not on the page), and
    the fence's language names the block, as the docs page does.
    """
    body = html.escape(textwrap.dedent("\n".join(code)))
    if not _LANGUAGE.fullmatch(language):
        return f'<pre class="quote-code"><code>{body}</code></pre>'
    return f'<pre class="quote-code" data-lang="{language}"><code class="language-{language}">{body}</code></pre>'


def _table(rows: list[list[str]], header: str, link: LinkCheck | None) -> str:
    """Quoted rows under their column headers; the header is context, styled apart from the quoted cells."""
    head = ""
    if header:
        probe = Line(0, 0, len(header), TEXT)
        cells = _cells(header, probe) or ((0, len(header)),)
        head = "<thead><tr>" + "".join(f'<th scope="col">{render_inline(header[a:b].strip(), link=link)}</th>'
                                       for a, b in cells) + "</tr></thead>"
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table class="quote-table">{head}<tbody>{body}</tbody></table>'


def excerpt_html(text: str, start: int, end: int, *, width: int = EXCERPT_CHARS,
                 link: LinkCheck | None = None) -> Markup:
    """The quote in its surroundings for the hover card, quote in <mark>, cut at word boundaries.

    No raw Markdown survives: markers and pipes are dropped, and a cut never
    lands inside a code span, link or emphasis, which would leave a stray
    backtick or `**` behind.
    """
    table = lines(text)
    lo, hi = _window(text, table, start, end, width)
    parts: list[str] = []
    code: list[tuple[int, int]] = []  # the lines of a code block being shown, kept as lines: indentation is meaning
    block = False  # the last part is a code block, which ends its own line
    last = -2  # index of the last line shown: a prose line right after a prose line continues its paragraph
    for index, line in enumerate(table):
        if line.kind == CODE and line.start < hi and line.end > lo:
            code.append((max(lo, line.body), min(hi, line.end)))
            last = index
            continue
        if code and line.kind != BLANK:
            shown_code = _code_block(text, code, start, end)
            parts += [shown_code] if shown_code else []
            block, code = bool(shown_code) or block, []
        if not (line.start < hi and line.end > lo) or line.kind in (FENCE, BLANK):
            continue
        a, b = max(lo, line.body), min(hi, line.end)
        if line.kind == ROW:
            cells = [(max(a, x), min(b, y)) for x, y in line.cells if min(b, y) > max(a, x)]
            shown = " · ".join(render_inline(text[x:y], span=(start - x, end - x), link=link) for x, y in cells)
        else:
            shown = render_inline(text[a:b], span=(start - a, end - a), link=link)
        if not shown.strip():
            continue
        if parts and not block:
            parts.append(" " if last == index - 1 and table[last].kind == line.kind == TEXT else "<br>")
        parts.append(shown)
        block, last = False, index
    if code:
        parts.append(_code_block(text, code, start, end))
    before = "…" if text[:lo].strip() else ""
    after = "…" if text[hi:].strip() else ""
    return Markup(before + "".join(parts) + after)


def _code_block(text: str, code: list[tuple[int, int]], start: int, end: int) -> str:
    """Code lines of the excerpt as one block, line breaks and indentation kept, less the indentation they all share
    (a block inside a list item); a span styled as a block: the card sits inside a paragraph, where a <pre> would
    end it."""
    filled = [text[a:b] for a, b in code if text[a:b].strip()]
    shared = min((len(line) - len(line.lstrip(" ")) for line in filled), default=0)
    body = "\n".join(_marked(text, min(a + shared, b), b, start, end) for a, b in code).strip("\n")
    return f'<span class="card-code"><code>{body}</code></span>' if filled else ""


def _marked(text: str, a: int, b: int, start: int, end: int) -> str:
    """`text[a:b]` escaped, with the part inside [start, end) in <mark> (for code lines, which are not Markdown)."""
    s, e = min(max(start, a), b), max(min(end, b), a)
    inner = f"<mark>{html.escape(text[s:e])}</mark>" if e > s else ""
    return html.escape(text[a:s]) + inner + html.escape(text[e:b])


def _overlapping(table: list[Line], start: int, end: int) -> Iterator[Line]:
    return (line for line in table if line.start < end and line.end > start)


def _window(text: str, table: list[Line], start: int, end: int, width: int) -> tuple[int, int]:
    """[lo, hi) around the quote, about `width` characters each side, snapped to words and whole markup."""
    lo, hi = max(0, start - width), min(len(text), end + width)
    if lo > 0 and not text[lo - 1].isspace():
        gap = re.compile(r"\s").search(text, lo, start)
        lo = gap.end() if gap else start
    if hi < len(text) and not text[hi].isspace():
        gaps = [m.start() for m in re.finditer(r"\s", text[end:hi])]
        hi = end + gaps[-1] if gaps else end
    for line in table:
        if line.kind == CODE:  # a code line is shown whole: a cut in its indentation would change the code
            lo = line.start if line.start < lo < line.end and line.start < start else lo
            hi = line.end if line.start < hi < line.end and line.end > end else hi
        if line.kind in (TEXT, ITEM, HEADING, ROW):
            for match in _ATOMIC.finditer(text, line.body, line.end):
                if match.start() < lo < match.end():
                    lo = match.end() if match.end() <= start else match.start()
                if match.start() < hi < match.end():
                    hi = match.start() if match.start() >= end else match.end()
    return lo, hi
