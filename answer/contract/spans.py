"""Quotable units of a chunk: whole sentences, list items and table rows, with their offsets.

A quote is only as good as its edges. Cutting at every ". " breaks "e.g. a
proxy" and "Tern 2+, a.k.a. Gull, uses …"; cutting inside a code span leaves a
stray backtick. Sentence boundaries come from a maintained segmenter (syntok),
never from a list of abbreviations. This module segments chunk text once, keeping character offsets, so
an extracted quote is always a run of whole units and can be highlighted at
its exact place. Table rows carry their header row as context (a row alone
reads "Starter | 50 | 100"); the header row itself is never a unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from syntok.segmenter import analyze

from ingest.blocks import LIST_MARKER, table_cells
from ingest.documents import APART, HELD
from ingest.mdx import FENCE_LINE
from ingest.normalize import without_markup

SENTENCE, ITEM, ROW = "sentence", "item", "row"

_HEADING = re.compile(r"^#{1,6}\s")
MIN_QUOTE_CHARS = 12  # the verifier's minimum quote length, after markup is dropped


@dataclass(frozen=True)
class Unit:
    """One quotable unit of a chunk: `text == chunk_text[start:end]`."""

    kind: str  # sentence / item / row
    start: int
    end: int
    text: str
    block: int  # index of the paragraph, list or table it belongs to
    position: int  # index of the unit inside its block
    header: str = ""  # a table row's header row ("Plan | Requests per second | Burst")


def units(text: str) -> list[Unit]:
    """Every quotable unit of `text` in reading order; fenced code and headings are skipped."""
    found: list[Unit] = []
    layout = _blocks(text)
    for number, (start, end, kind) in enumerate(layout):
        block = text[start:end]
        if kind == "table":
            found.extend(_rows(block, start, number))
        elif kind == "list":
            found.extend(_items(block, start, number))
        elif kind == "prose":
            found.extend(_sentences(block, start, number, SENTENCE, 0))
    # Too short to quote once markup is dropped (the verifier's rule), unless a whole table row or a tab's name,
    # which is quoted with its block ("Windows:" and the command no sentence of the page gives).
    return [u for u in found if not _too_short(u.text) or u.kind == ROW or _names_a_tab(text, u, layout)]


def crosses_apart(text: str, start: int, end: int) -> bool:
    """Whether [start, end) of chunk text runs across a tab's end (`APART` between two blocks): from one tab into
    another, or past the tabs, text the page never shows together."""
    found = _blocks(text)
    return any(start < a_end and b_start < end and APART in text[a_end:b_start]
               for (_, a_end, _), (b_start, _, _) in pairwise(found))


def _names_a_tab(text: str, unit: Unit, layout: list[tuple[int, int, str]]) -> bool:
    start, end, _ = layout[unit.block]
    return (unit.kind == SENTENCE and unit.block + 1 < len(layout) and layout[unit.block + 1][2] == "code"
            and _label(text[start:end]))


LABEL_WORDS = 4  # words a tab's name may have: more is a sentence of its own
MAX_INTRODUCED_CHARS = 600  # a block longer than this is left on the page: the quote would bury the answer


def introduced_block(text: str, unit: Unit, found: list[tuple[int, int, str]] | None = None) -> tuple[int, int, str] | None:
    """(start, end, kind) of the code block, list or table that `unit` introduces, when it does.

    "Create a project with the following command:" says nothing without the command: a sentence that
    ends its paragraph with a colon is quoted with the block right after it (verbatim, like any quote).
    So is one ending its paragraph with a period right before a code block ("Add the adapter with the
    `ferry add` command."): the command sits in the block, and quoted without it the answer is useless. A
    list or table after a period is only what comes next on the page, not something the sentence announces.
    Before a tabs component that is the first tab's block; never a block after a tab ends (`ingest.documents.APART`
    in the chunk text between them), which is another tab's or comes after the tabs. A list's last item ending in a
    colon introduces the same way, and a step is quoted with the command it holds, whatever it ends with
    (`ingest.documents.HELD`: "- Disable window frames with `frame="none"`" and its example).
    """
    ending = unit.text.rstrip("*_ ")
    if unit.kind not in (SENTENCE, ITEM):
        return None
    found = found if found is not None else _blocks(text)
    if unit.block + 1 >= len(found) or text[unit.end:found[unit.block][1]].strip():
        return None  # the sentence does not end its paragraph ("Note: …" inside a sentence run)
    start, end, kind = found[unit.block + 1]
    gap = text[found[unit.block][1]:start]
    if unit.kind == ITEM and gap == HELD and kind == "code":
        return (start, end, kind) if end - start <= MAX_INTRODUCED_CHARS else None  # the item's own command
    if not ending.endswith((":", "." if unit.kind == SENTENCE else ":")) or APART in gap:
        return None  # says nothing of a block after it, or a tab ends between them (another tab's, or after them)
    if kind == "list" and unit.block + 2 < len(found) and text[end:found[unit.block + 2][0]] == HELD:
        return None  # a list whose last step holds a command: announced without it, the quote would stop short
    wanted = ("code", "list", "table") if ending.endswith(":") else ("code",)
    if kind not in wanted or end - start > MAX_INTRODUCED_CHARS:
        return None
    return start, end, kind


def _label(block: str) -> bool:
    """A line naming the block after it, not saying anything: a tab's name ("pnpm:", "macOS and Linux:")."""
    return "\n" not in block and block.endswith(":") and len(block.split()) <= LABEL_WORDS and not sentence_starts(block)[1:]


def whole_code(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to every fenced code block it reaches into: a block is quoted whole or not at all.

    A quote that stops inside a block drops what it stopped before (`key: "value` without its closing quote,
    copied, breaks the reader's config), and one starting inside it loses the opening fence that says it is code.
    """
    for block_start, block_end, kind in _blocks(text):
        if kind == "code" and block_start < end and start < block_end:
            start, end = min(start, block_start), max(end, block_end)
    return start, end


# The first word of a short answer a FAQ paragraph opens with ("No.", "Yes!", "Not yet.", "Only in CI.").
_ANSWER_WORDS = frozenset(("yes", "no", "nope", "yep", "not", "only", "correct", "sometimes", "partly", "partially",
                           "usually", "never", "always"))


def answer_word_before(text: str, start: int) -> int:
    """Where a quote starting at `start` begins when it takes the short answer that opens its paragraph.

    FAQ answers often open with a sentence too short to quote alone ("No.", "Yes!", "Not yet."), then
    explain: "No. A self-hosted version is not available at this time." For a yes/no question, the quote
    without its "No." leaves the visitor to work the answer out. `start` itself unless the paragraph's first
    sentence sits right before it, whole, under `MIN_QUOTE_CHARS` and opening with an answer word ("See FAQ."
    and "Q: Why?" are no answer).
    """
    for block_start, block_end, kind in _blocks(text):
        if kind == "prose" and block_start < start < block_end:
            block = text[block_start:block_end]
            first = block_start + len(block) - len(block.lstrip())
            cuts = [at for at in sentence_starts(block) if block_start + at > first]
            opening = text[first:start]
            words = re.findall(r"[a-z]+", opening.lower())
            if cuts and block_start + cuts[0] == start and _too_short(opening) and words and words[0] in _ANSWER_WORDS:
                return first
            return start
    return start


def table_header(text: str, offset: int) -> str:
    """The header row of the table whose row contains `offset`, or "" when it is not in a table row."""
    for start, end, kind in _blocks(text):
        if kind == "table" and start <= offset < end:
            lines = text[start:end].split("\n")
            header = lines[0].strip()
            first_row_at = start + len(lines[0]) + 1
            return header if offset >= first_row_at else ""
    return ""


def is_table_row(text: str, quote: str) -> bool:
    """True when `quote` is exactly one whole data row of a table in `text`."""
    wanted = quote.strip()
    return bool(wanted) and any(u.kind == ROW and u.text == wanted for u in units(text))


def blocks(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each block of `text`, in the numbering `Unit.block` uses."""
    return _blocks(text)


def _blocks(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each block separated by blank lines; kind is prose, list, table, code or heading."""
    blocks: list[tuple[int, int, str]] = []
    lines = text.split("\n")
    offset = 0
    current: list[tuple[int, str]] = []
    fence: str | None = None

    def close() -> None:
        if current:
            start = current[0][0]
            end = current[-1][0] + len(current[-1][1])
            blocks.append((start, end, _kind([line for _, line in current])))
            current.clear()

    for line in lines:
        marker = FENCE_LINE.match(line)
        if fence is not None:
            current.append((offset, line))
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
                close()
        elif marker:
            close()
            fence = marker.group(1)
            current.append((offset, line))
        elif not line.strip():
            close()
        elif _HEADING.match(line):
            close()
            current.append((offset, line))
            close()
        else:
            current.append((offset, line))
        offset += len(line) + 1
    close()
    return blocks


def _kind(lines: list[str]) -> str:
    first = lines[0]
    if FENCE_LINE.match(first):
        return "code"
    if _HEADING.match(first):
        return "heading"
    if LIST_MARKER.match(first):
        return "list"
    if len(lines) >= 2 and all(table_cells(line) for line in lines):
        return "table"
    return "prose"


def _rows(block: str, base: int, number: int) -> list[Unit]:
    lines = block.split("\n")
    header = lines[0].strip()
    out: list[Unit] = []
    offset = base + len(lines[0]) + 1
    for position, line in enumerate(lines[1:]):
        stripped = line.strip()
        if stripped and not re.fullmatch(r"[\s|:-]+", stripped):
            lead = len(line) - len(line.lstrip())
            out.append(Unit(ROW, offset + lead, offset + lead + len(stripped), stripped, number, position, header))
        offset += len(line) + 1
    return out


def _items(block: str, base: int, number: int) -> list[Unit]:
    """List items (continuation lines joined); an item of several sentences yields each sentence."""
    items: list[tuple[int, int]] = []
    offset = 0
    first = LIST_MARKER.match(block)
    indent = len(first.group(1)) if first else 0  # a nested list that holds blocks stands indented under its item
    for line in block.split("\n"):
        marker = LIST_MARKER.match(line)
        if marker and len(marker.group(1)) <= indent + 1:  # an item of this list starts here
            items.append((offset + marker.end(), offset + len(line)))
        elif items:
            items[-1] = (items[-1][0], offset + len(line))
        offset += len(line) + 1
    out: list[Unit] = []
    for start, end in items:
        segment = block[start:end]
        pieces = _sentences(segment, base + start, number, ITEM, len(out))
        out.extend(pieces)
    return out


def _sentences(segment: str, base: int, number: int, kind: str, first_position: int) -> list[Unit]:
    cuts = [0, *(at for at in sentence_starts(segment) if at and not inside_code(segment, at)), len(segment)]
    out: list[Unit] = []
    for a, b in pairwise(cuts):
        piece = segment[a:b]
        lead = len(piece) - len(piece.lstrip())
        text = piece.strip()
        if text:
            out.append(Unit(kind, base + a + lead, base + a + lead + len(text), text, number, first_position + len(out)))
    return out


@lru_cache(maxsize=8192)
def sentence_starts(text: str) -> tuple[int, ...]:
    """Where each sentence of `text` starts, by syntok's segmenter (cached: the same sections come back).

    Measured on boundary cases from real docs ("a.k.a.", "e.g.", "approx.", "30 sec.", "Version 2.4.", file
    names, code spans): syntok cut 14 of 15 right, pysbd and the hand-written regex it replaces 12,
    sentencex 11. A cut inside a `code span` is the caller's to drop: syntok does not know Markdown.
    """
    return tuple(sentence[0].offset for paragraph in analyze(text) for sentence in paragraph if sentence)


def _too_short(sentence: str) -> bool:
    return len(without_markup(sentence).strip()) < MIN_QUOTE_CHARS


def inside_code(text: str, at: int) -> bool:
    """True when position `at` is inside a `code span` (an odd number of backticks before it)."""
    return text.count("`", 0, at) % 2 == 1
