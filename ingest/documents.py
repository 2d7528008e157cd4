"""The data ingest produces: pages, their headings, and the chunks citations point at.

Everything here is a frozen value. A `Chunk` carries all a citation needs
(durable id, deep-link URL, the exact text quotes are checked against, where it
came from in the source file, and the version/hash that tells a later reader
whether the source has changed) so nothing downstream has to re-read content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

PUBLIC = "public"

# Group names are ASCII letters, digits, `-` and `_`, starting with a letter or digit, at most 64 long.
# The index stores a group as the metadata key `acl_<name>` verbatim, so the alphabet is what keeps that
# encoding exact: no two names share a key, and nothing needs escaping (or can be escaped into a collision).
GROUP_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
GROUP_RULE = "ASCII letters, digits, '-' and '_' (starting with a letter or digit, at most 64 characters)"


def is_group_name(name: object) -> bool:
    """True for a string in the group alphabet, exactly (no surrounding space, no Unicode look-alikes)."""
    return isinstance(name, str) and GROUP_NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class SourceSpan:
    """Where a chunk's section sits in its source file.

    `lines` is 1-based and inclusive; `start`/`end` are 0-based character
    offsets, end exclusive, into the file as decoded text.
    """

    line_start: int
    line_end: int
    start: int
    end: int


@dataclass(frozen=True)
class Heading:
    """A heading as the site renders it: its rendered text and the id it gets."""

    line: int  # 1-based line in the source file
    level: int
    text: str
    anchor: str | None  # None for raw HTML headings, which the site renders without an id


@dataclass(frozen=True)
class Block:
    """One Markdown block rendered to clean text, with its source lines (0-based, end exclusive)."""

    text: str
    line_start: int
    line_end: int
    kind: str  # paragraph, list, table, code, quote, html
    apart: bool = False  # a tab closes between the block before and this one: joined to it by `APART`, not "\n\n"
    held: bool = False  # a code block the list item before it holds (a step's command): joined to it by `HELD`


# Between two blocks a tab's end separates in chunk text (mdx.TAB_ENDS): one blank line more than between any two
# blocks. Markdown reads both the same; a sentence ending its block never introduces the block after this gap.
APART = "\n\n\n"
# Between a list item and the code block it holds (`ingest.blocks`): no blank line, so the chunk text says the
# command is the item's own, as the page shows it inside the item; Markdown still reads a list, then a code block.
HELD = "\n"


def joiner(block: Block) -> str:
    """What chunk text puts between `block` and the block before it."""
    return APART if block.apart else HELD if block.held else "\n\n"


@dataclass(frozen=True)
class Link:
    """A link written in a page, kept so the link checker can report file:line without re-parsing."""

    target: str  # the href as written
    line: int  # 1-based line in the source file
    source: str = ""  # the file it is written in when that is a partial the page renders ("" = the page)


@dataclass(frozen=True)
class Section:
    """A heading and the blocks under it, up to the next heading of any level."""

    heading: Heading | None  # None for the text before the first heading
    path: tuple[str, ...]  # heading texts from the top level down to this one
    blocks: tuple[Block, ...]
    line_start: int  # 0-based, inclusive
    line_end: int  # 0-based, exclusive


@dataclass(frozen=True)
class Page:
    """One parsed MDX file."""

    source: str  # path relative to the content root, with forward slashes
    slug: str  # e.g. "billing/refunds"; the site path without base URL
    url: str  # page URL on the site, no fragment
    title: str
    version: str
    access: tuple[str, ...]
    front_matter: dict[str, Any] = field(hash=False, compare=False)
    body: str = field(repr=False)  # the source text (front matter included), as decoded, partials spliced in
    hash: str = ""
    sections: tuple[Section, ...] = field(default=(), repr=False)
    headings: tuple[Heading, ...] = field(default=(), repr=False)  # every heading, nested ones included, in order
    links: tuple[Link, ...] = field(default=(), repr=False)
    warnings: tuple[str, ...] = field(default=(), repr=False)  # "file:line: reason", the page is still used
    # With partials spliced in (partials.py), `body` is the page as rendered: `origins` gives, per line of it,
    # (file, 0-based line) in the file it came from, and `included` the text of each file (the page's own too).
    origins: tuple[tuple[str, int], ...] = field(default=(), repr=False)
    included: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    # With `built_dir`: ids of built headings no source heading matched (rendered by components); links may target them.
    built_ids: tuple[str, ...] = field(default=(), repr=False)

    def locate(self, line: int) -> tuple[str, int]:
        """(file, 0-based line) a 0-based line of `body` was written on: the page itself or a partial."""
        if self.origins and 0 <= line < len(self.origins):
            return self.origins[line]
        return self.source, line

    def file_text(self, source: str) -> str:
        """The text of the page's own file or of a partial it renders (spans are offsets into it)."""
        return dict(self.included).get(source, self.body)


@dataclass(frozen=True)
class Chunk:
    """The smallest unit a citation can point at: one section, or one part of a long one."""

    id: str  # doc:<slug>#<anchor>[~part]
    doc_id: str  # doc:<slug>
    anchor: str  # "" for the text before the first heading
    url: str  # <page url>#<anchor>
    title: str  # page title
    heading_path: tuple[str, ...]
    text: str
    source: str
    span: SourceSpan
    doc_version: str
    hash: str
    access: tuple[str, ...] = (PUBLIC,)
    groups: tuple[str, ...] = ()  # the sidebar groups a navigation file puts the page under (navigation.py)

    @property
    def embedding_text(self) -> str:
        """What the embedder reads: where the text sits on the site, then the text."""
        context = " > ".join((*self.groups, self.title, *self.heading_path[-2:]))
        return f"{context}\n{self.text}"

    def readable_by(self, groups: frozenset[str]) -> bool:
        """True when any of the reader's groups may read this chunk."""
        return any(group in groups for group in self.access)
