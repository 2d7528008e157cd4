"""Split a page into chunks: one per section, long sections cut at block boundaries.

A section is the smallest unit a deep link can land on, so it is the natural
citation target. The embedding model reads at most 256 word-pieces (about 800
characters of prose with the heading path in front); a longer section is cut
between blocks, a paragraph longer than that between sentences and a long
list between its top-level items, so every part is fully embedded and each
part keeps the section's anchor. A code fence or table is never cut: an
oversized one stays whole in a part of its own.

Part spans are whole lines and contiguous; a paragraph written on one long
line gives parts that share that line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .blocks import LIST_MARKER
from .documents import Block, Chunk, Page, SourceSpan, joiner
from .ids import chunk_id, content_hash, doc_id
from .text import PROSE_CUT

MAX_CHUNK_CHARS = 800


def split_page(page: Page, *, max_chars: int = MAX_CHUNK_CHARS, groups: tuple[str, ...] = ()) -> list[Chunk]:
    """All chunks of a page, in document order; `groups` is the page's place in the site's navigation."""
    source_lines = page.body.split("\n")
    offsets: dict[str, list[int]] = {}
    chunks: list[Chunk] = []
    for section in page.sections:
        if not section.blocks:
            continue
        pieces = [piece for block in section.blocks for piece in _cut(block, max_chars, source_lines)]
        parts = _pack(tuple(pieces), max_chars, file_of=lambda block: page.locate(block.line_start)[0],
                      last_item=lambda block: _last_item(block, source_lines))
        anchor = section.heading.anchor or "" if section.heading else ""
        for number, blocks in enumerate(parts, start=1):
            text = "".join(joiner(block) * (k > 0) + block.text for k, block in enumerate(blocks))
            line_start = section.line_start if number == 1 else blocks[0].line_start
            line_end = (section.line_end if number == len(parts)
                        else max(parts[number][0].line_start, blocks[-1].line_end))
            file = page.locate(blocks[0].line_start)[0]
            if page.origins:  # partials spliced in: the span is in the file the part's text was written in
                if page.locate(line_start)[0] != file:
                    line_start = blocks[0].line_start
                last = max(line_start, line_end - 1)
                while last > line_start and page.locate(last)[0] != file:
                    last -= 1
                line_start, line_end = page.locate(line_start)[1], page.locate(last)[1] + 1
            text_of_file = page.file_text(file)
            if file not in offsets:
                offsets[file] = _line_offsets(text_of_file)
            line_offsets = offsets[file]
            span = SourceSpan(
                line_start=line_start + 1,
                line_end=max(line_start + 1, line_end),
                start=line_offsets[line_start],
                end=_span_end(line_offsets, text_of_file, line_end),
            )
            chunks.append(
                Chunk(
                    id=chunk_id(page.slug, anchor, number),
                    doc_id=doc_id(page.slug),
                    anchor=anchor,
                    url=f"{page.url}#{anchor}" if anchor else page.url,
                    title=page.title,
                    heading_path=section.path,
                    text=text,
                    source=file,
                    span=span,
                    doc_version=page.version,
                    hash=content_hash(page.title, " > ".join(section.path), text,
                                      *((" > ".join(groups),) if groups else ())),
                    access=page.access,
                    groups=groups,
                )
            )
    return chunks


_WORD = re.compile(r"\w+")


def _cut(block: Block, max_chars: int, source_lines: list[str]) -> list[Block]:
    """A block, or its pieces when it is prose longer than the budget (fences and tables stay whole)."""
    if len(block.text) <= max_chars or block.kind not in ("paragraph", "quote", "list"):
        return [block]
    if block.kind == "list":
        units = _items(block.text)
        sep = "\n"
    else:
        units = [u for u in PROSE_CUT.split(block.text) if u.strip()]
        sep = " "
    units = [piece for unit in units for piece in _hard_wrap(unit, max_chars)]
    texts: list[str] = []
    for unit in units:
        if texts and len(texts[-1]) + len(sep) + len(unit) <= max_chars:
            texts[-1] += sep + unit
        else:
            texts.append(unit)
    if len(texts) == 1:
        return [block]
    located = _locate(texts, block, source_lines)
    pieces = []
    for k, (text, (start, _)) in enumerate(zip(texts, located, strict=True)):
        if k == len(texts) - 1:
            end = block.line_end
        else:
            next_start, next_mid_line = located[k + 1]
            end = next_start + 1 if next_mid_line else max(next_start, start + 1)
        pieces.append(Block(text=text, line_start=start, line_end=end, kind="piece", apart=block.apart and k == 0))
    return pieces


def _items(text: str) -> list[str]:
    """A list's own items, each with the items nested under it (a nested list stands indented)."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    return re.split(rf"\n(?={indent}\S)", text)


def _last_item(block: Block, source_lines: list[str]) -> tuple[Block, Block] | None:
    """A list block (or a piece of one) as its items before the last and its last item; None when it holds one."""
    if block.kind not in ("list", "piece") or not LIST_MARKER.match(block.text):
        return None
    items = _items(block.text)
    if len(items) < 2:
        return None
    texts = ["\n".join(items[:-1]), items[-1]]
    (start, _), (last, mid_line) = _locate(texts, block, source_lines)
    end = last + 1 if mid_line else max(last, start + 1)
    return (Block(texts[0], start, end, kind="piece", apart=block.apart),
            Block(texts[1], last, block.line_end, kind="piece"))


def _hard_wrap(text: str, max_chars: int) -> list[str]:
    """A single sentence longer than the budget, cut between words as a last resort."""
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    for word in text.split(" "):
        if pieces and len(pieces[-1]) + 1 + len(word) <= max_chars:
            pieces[-1] += " " + word
        else:
            pieces.append(word)
    return pieces


def _locate(texts: list[str], block: Block, source_lines: list[str]) -> list[tuple[int, bool]]:
    """(source line, starts mid-line) of each piece, found by its first words, never before the previous piece."""
    located = [(block.line_start, False)]
    last = max(block.line_start, block.line_end - 1)
    for text in texts[1:]:
        words = _WORD.findall(text)[:3]
        found = (located[-1][0], True)
        if words:
            pattern = re.compile(r"\W+".join(re.escape(w) for w in words))
            for k in range(located[-1][0], last + 1):
                line = source_lines[k]
                match = pattern.search(line + " " + (source_lines[k + 1] if k + 1 <= last else ""))
                if match and match.start() < len(line):
                    found = (k, bool(line[: match.start()].strip(" \t>-*+0123456789.")))
                    break
        located.append((min(found[0], last), found[1]))
    return located


def _pack(blocks: tuple[Block, ...], max_chars: int,
          file_of: Callable[[Block], str] = lambda block: "",
          last_item: Callable[[Block], tuple[Block, Block] | None] = lambda block: None) -> list[list[Block]]:
    """Greedy packing of whole blocks into parts of at most `max_chars` (a lone big block stays whole).

    A part never mixes text from two files (a page and a partial it renders), so its source span is one range.
    A step's own code block (`Block.held`) never opens a part without its step: the step (the last item of the
    list block before it, cut off by `last_item`) moves on with it, or, alone in its part, keeps it there. So
    "3. Add the path … in `astro.config.mjs`:" never ends a part whose next part opens with its command, where no
    quote could show the two together.
    """
    parts: list[list[Block]] = [[]]
    size = 0
    for block in blocks:
        if parts[-1] and (size + len(block.text) + 2 > max_chars or file_of(block) != file_of(parts[-1][-1])):
            if not (block.held and file_of(block) == file_of(parts[-1][-1])):
                parts.append([])
            elif (cut := last_item(parts[-1][-1])) is not None:
                parts[-1][-1] = cut[0]
                parts.append([cut[1]])
            elif len(parts[-1]) > 1:
                parts.append([parts[-1].pop()])
            size = sum(len(b.text) + 2 for b in parts[-1])
        parts[-1].append(block)
        size += len(block.text) + 2
    return parts


def _line_offsets(text: str) -> list[int]:
    """Character offset of the start of each line, plus one past the end."""
    offsets = [0]
    for index, char in enumerate(text):
        if char == "\n":
            offsets.append(index + 1)
    offsets.append(len(text))
    return offsets


def _span_end(offsets: list[int], text: str, line_end: int) -> int:
    """Offset just past the last line of the span (its newline excluded)."""
    if line_end >= len(offsets) - 1:
        return len(text)
    return max(offsets[line_end] - 1, 0)
