"""A model's reply read as the units a written answer is checked by: sentences and steps, their quote numbers, and
the command block after each.

Small models write the same answer many ways: numbers after the period or before it, "[1][2]" or "[1] [2]", a
fence opened at the end of a sentence's line, bold inside a sentence, numbered steps or bullets. Reading all of
them the same way is what lets `written.read_reply` check each sentence against the quotes it names; nothing here
judges a sentence.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection

from ingest.mdx import FENCE_LINE

from .spans import inside_code, sentence_starts

SENTENCE_ENDS = (".", "!", "?")
_MARKERS = re.compile(r"\s*\[(\d{1,2})\]")
_MARKER_RUN = re.compile(r"(?:\s*\[\d{1,2}\])+")  # quote numbers written together ("[1][2]", " [1] [2]")
_STEP = re.compile(r"^\s*(\d{1,2})[.)]\s+")
_BULLET = re.compile(r"^\s*[-*•]\s+")
# A fence the model opens at the end of a sentence's line ("Run the command ```sh"): the block starts there.
_FENCE_IN_LINE = re.compile(r"(?<=[^\s`~])[ \t]*(?=(?:`{3,}|~{3,})[\w+-]*[ \t]*$)")
# Bold or italic asterisks ("**Escape special characters:**"): the page shows sentences as text. Underscores are
# left alone ("__init__.py" is a file name), and so is code ("`ls *foo*`").
_EMPHASIS = re.compile(r"(?<![\w`*])(\*{1,2})(?=\S)([^`*\n]+?)(?<=\S)\1(?![\w`*])")
CODE_SPAN = re.compile(r"(`+)[^`]*?\1")


def fence_cut(line: str) -> list[str]:
    """A prose line and the fence it opens at its end, as two lines; the line alone when it opens none (a line that
    is a fence, or one ending in an inline ```span``` opened on it)."""
    found = _FENCE_IN_LINE.search(line)
    if found is None or "```" in line[: found.start()] or "~~~" in line[: found.start()]:
        return [line]
    return [line[: found.start()], line[found.end():]]


def unemphasized(line: str) -> str:
    """A prose line without its bold and italic asterisks, code spans untouched (before it is cut into sentences,
    so bold across two sentences loses both its markers)."""
    pieces, last = [], 0
    for span in CODE_SPAN.finditer(line):
        pieces += [_EMPHASIS.sub(r"\2", line[last: span.start()]), span.group()]
        last = span.end()
    return "".join([*pieces, _EMPHASIS.sub(r"\2", line[last:])])


def units(text: str, given: Collection[int] = ()) -> list[tuple[str, int, str]]:
    """(sentence or step, its step number or 0, the code block right after it) in reply order."""
    read: list[tuple[str, int, str]] = []
    lines = [part for line in text.strip().split("\n") for part in fence_cut(line)]
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE_LINE.match(line)
        if fence:  # a code block belongs to the unit before it
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence.group(1))), len(lines))
            code = "\n".join(lines[i + 1:end]).strip("\n")
            if read and not read[-1][2]:
                read[-1] = (read[-1][0], read[-1][1], code)
            elif code and not read:  # a reply opening on a block: a unit of its own (a block after a block goes)
                read.append(("", 0, code))
            i = end + 1
            continue
        line = unemphasized(line)
        step = _STEP.match(line)
        if step:
            read.append((line[step.end():], int(step.group(1)), ""))
        elif _BULLET.match(line):
            read.append((_BULLET.sub("", line), 0, ""))
        elif line.strip():
            read += [(sentence, 0, "") for sentence in _sentences(line, given)]
        i += 1
    # markers written after the sentence's period ("… command. [2]", "… again. [1] [2]") are read as that sentence's
    merged: list[tuple[str, int, str]] = []
    for unit in read:
        if merged and _MARKER_RUN.fullmatch(unit[0]) and not unit[1]:
            merged[-1] = (merged[-1][0] + " " + unit[0], merged[-1][1], merged[-1][2] or unit[2])
        else:
            merged.append(unit)
    return merged


def _outside_code(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """The pattern's matches that are not inside a `code span` ("`argv[1]`" is code, not a quote number)."""
    return [m for m in pattern.finditer(text) if not inside_code(text, m.start())]


def numbered(unit: str) -> tuple[str, list[int]]:
    """A unit's text without its quote numbers, and the numbers."""
    found = _outside_code(_MARKERS, unit)
    text, last = "", 0
    for match in found:
        text, last = text + unit[last:match.start()], match.end()
    return " ".join((text + unit[last:]).split()), [int(m.group(1)) for m in found]


def _sentences(line: str, given: Collection[int]) -> list[str]:
    """A prose line's sentences, each ending in the quote numbers that are its own.

    The segmenter reads the line without the numbers: seeing them, it does not cut "… replayed [1][2]. Retained …".
    Numbers inside a sentence, or after its end with nothing but a period after them ("… again. [1] [2]", "…
    hooks. [2]."), are that sentence's. Numbers between two sentences ("… kept. [1] Retained …") may close the one
    before or open the one after, and small models write both: they are neither's, so each is shown only if quotes
    support it, as an unnumbered sentence is; unless they name a quote the model was not given, which drops both.
    """
    text, runs, last = "", [], 0
    for match in _outside_code(_MARKER_RUN, line):
        text += line[last:match.start()]
        last = match.end()
        # "… hooks. [2].": a period closes the numbers too, so they are the sentence's before them (one period kept)
        closing = line[last:last + 1] in SENTENCE_ENDS and text.rstrip()[-1:] in ("", *SENTENCE_ENDS)
        last += 1 if closing else 0
        runs.append((len(text), "".join(match.group().split()), closing))
    text += line[last:]
    if not text.strip():  # numbers alone on a line: `units` gives them to the sentence before
        return ["".join(run for _, run, _ in runs)] if runs else []
    starts = [s for s in sentence_starts(text) if not inside_code(text, s)] or [0]
    cited = [""] * len(starts)
    for at, run, closing in runs:
        before = max(0, bisect.bisect_right(starts, at - 1) - 1)  # the sentence holding the character before it
        rest = text[at:]
        after = bisect.bisect_right(starts, at + len(rest) - len(rest.lstrip())) - 1
        between = not closing and after != before and text[:at].rstrip()[-1:] in SENTENCE_ENDS
        unknown = any(int(n) not in given for n in _MARKERS.findall(run))
        for owner in ((before, after) if unknown else ()) if between else (before,):
            cited[owner] += run
    sentences = [(text[a:b].strip() + " " + numbers).strip()
                 for a, b, numbers in zip(starts, [*starts[1:], len(text)], cited, strict=True)]
    return [sentence for sentence in sentences if sentence]
