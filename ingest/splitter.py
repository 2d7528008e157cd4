"""Split a page into chunks: one per section, long sections cut at block boundaries.

A section is the smallest unit a deep link can land on, so it is the natural
citation target. The embedding model reads at most 256 word-pieces (about 800
characters of prose with the heading path in front); a longer section is cut
between blocks, never inside a code fence, table or list, so every part is
fully embedded and each part keeps the section's anchor.
"""

from __future__ import annotations

from .documents import Block, Chunk, Page, Section, SourceSpan
from .ids import chunk_id, content_hash, doc_id

MAX_CHUNK_CHARS = 800


def split_page(page: Page, *, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """All chunks of a page, in document order."""
    line_offsets = _line_offsets(page.body)
    chunks: list[Chunk] = []
    for section in page.sections:
        if not section.blocks:
            continue
        parts = _pack(section.blocks, max_chars)
        anchor = section.heading.anchor or "" if section.heading else ""
        for number, blocks in enumerate(parts, start=1):
            text = "\n\n".join(block.text for block in blocks)
            line_start = section.line_start if number == 1 else blocks[0].line_start
            line_end = section.line_end if number == len(parts) else parts[number][0].line_start
            span = SourceSpan(
                line_start=line_start + 1,
                line_end=max(line_start + 1, line_end),
                start=line_offsets[line_start],
                end=_span_end(line_offsets, page.body, line_end),
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
                    source=page.source,
                    span=span,
                    doc_version=page.version,
                    hash=content_hash(page.title, " > ".join(section.path), text),
                    access=page.access,
                )
            )
    return chunks


def _pack(blocks: tuple[Block, ...], max_chars: int) -> list[list[Block]]:
    """Greedy packing of whole blocks into parts of at most `max_chars` (a lone big block stays whole)."""
    parts: list[list[Block]] = [[]]
    size = 0
    for block in blocks:
        if parts[-1] and size + len(block.text) + 2 > max_chars:
            parts.append([])
            size = 0
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


def section_of(page: Page, anchor: str) -> Section | None:
    """The section a deep link lands on, if the page has it."""
    for section in page.sections:
        if section.heading is not None and section.heading.anchor == anchor:
            return section
    return None
