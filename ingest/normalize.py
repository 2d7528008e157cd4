"""Normalization for the verbatim-quote check, keeping a map back to the original text.

It lives beside `text.py` because the key terms a claim is checked on are read
from normalized text too: one fold, so a quote and its key terms agree on
every character.

A quote counts as verbatim when it is a substring of the chunk after both are
normalized the same way: Unicode NFKC, case folded, typographic quotes and
dashes made plain, Markdown markup (`*`, backticks, link syntax) removed and
whitespace collapsed. Nothing else is forgiven: a paraphrase, a changed
number or a dropped word is not a match. The offset map lets a verified quote
be highlighted at its exact place in the chunk.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_TRANSLATE = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
        "\u00ab": '"', "\u00bb": '"',
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
        "\u2026": "...",
    }
)
# Markdown markup normalization drops: a quote may leave it out, and a match never starts or ends on it.
MARKUP = "`*"
_DROP = frozenset(MARKUP)
_NO_MARKUP = str.maketrans("", "", MARKUP)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True)
class Normalized:
    """Normalized text and, for each of its characters, the offset of the source character."""

    text: str
    origin: tuple[int, ...]

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The [start, end) range in the original text covered by normalized [start, end)."""
        return self.origin[start], self.origin[end - 1] + 1


@lru_cache(maxsize=1024)
def normalize(text: str) -> Normalized:
    """Normalize text for quote matching, remembering where each character came from.

    Cached: a request normalizes the same chunk for every quote, the misattribution scan and the retry.
    Runs of printable ASCII take a fast path; everything else is folded character by character.
    """
    chars: list[str] = []
    origin: list[int] = []
    pending_space = False
    position = 0
    for run in _PLAIN.finditer(text):
        pending_space = _fold_into(text, position, run.start(), chars, origin, pending_space)
        if pending_space and chars:
            chars.append(" ")
            origin.append(run.start())
        pending_space = False
        chars.append(run.group().lower())  # ASCII: lower == NFKC + casefold, same length
        origin.extend(range(run.start(), run.end()))
        position = run.end()
    _fold_into(text, position, len(text), chars, origin, pending_space)
    return Normalized("".join(chars), tuple(origin))


_PLAIN = re.compile(r"[\x21-\x29\x2b-\x5f\x61-\x7e]+")  # printable ASCII except space and MARKUP


def _fold_into(text: str, start: int, end: int, chars: list[str], origin: list[int], pending_space: bool) -> bool:
    """Fold text[start:end] one character at a time; returns whether a space is pending."""
    for index in range(start, end):
        for out in _fold(text[index]):
            if out == " ":
                pending_space = True
                continue
            if pending_space and chars:
                chars.append(" ")
                origin.append(index)
            pending_space = False
            chars.append(out)
            origin.append(index)
    return pending_space


_FOLDED: dict[str, tuple[str, ...]] = {}


def _fold(char: str) -> tuple[str, ...]:
    """What one source character becomes: kept characters, " " for whitespace, nothing for markup/controls."""
    folded = _FOLDED.get(char)
    if folded is not None:
        return folded
    if char in _DROP:
        folded = ()
    else:
        parts = []
        for out in unicodedata.normalize("NFKC", char).translate(_TRANSLATE).casefold():
            if out.isspace():
                parts.append(" ")
            elif unicodedata.category(out) not in ("Cf", "Cc"):
                parts.append(out)
        folded = tuple(parts)
    if len(_FOLDED) < 20_000:  # bounded: distinct code points seen, not texts
        _FOLDED[char] = folded
    return folded


def without_markup(text: str) -> str:
    """The text with its MARKUP characters removed: what a quote's length is measured on."""
    return text.translate(_NO_MARKUP)


def normalize_quote(quote: str) -> str:
    """A model's quote, normalized; Markdown links count as their text."""
    text = normalize(_MD_LINK.sub(r"\1", quote)).text
    return text.strip().strip("\"'").strip()  # quote marks around a quote are not part of it


def find_quote(quote: str, chunk_text: str) -> tuple[int, int] | None:
    """Where `quote` occurs in `chunk_text` (original offsets), or None when it is not verbatim."""
    needle = normalize_quote(quote)
    if not needle:
        return None
    haystack = normalize(chunk_text)
    at = haystack.text.find(needle)
    if at < 0:
        return None
    return haystack.source_span(at, at + len(needle))
