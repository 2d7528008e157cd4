"""Inline Markdown for display (quotes and hover cards in the chat): safe HTML, a fixed set of tags.

Chunk text is rendered text; a quote of it is shown with its code spans,
emphasis and allowed links, everything else escaped. A quote's span is marked
(or clipped to) without leaving markup unbalanced at its edges.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.token import Token

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
