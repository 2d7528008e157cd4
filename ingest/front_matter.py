"""Front matter: the YAML block at the top of a page, and who may read the page (`access`).

python-frontmatter and PyYAML live only here. Errors name the line an author must fix. Anything
that leaves the page's access in doubt fails the page rather than publishing
what was meant to be restricted: YAML that does not parse, a repeated key
(PyYAML would silently keep the last one), a key that looks like a misspelled
`access`, or an `access` value that is not a list of group names.

So does a block the site generator would not read as front matter at all:
one that does not start on the first line (a blank line, an `import`, a
comment before it), TOML between `+++` fences, a second block after the
first. Published as they are, its `access: [staff]` would be body text and
the page public. And a page its own front matter keeps off the site (`draft`,
`private`, `restricted`) is never published here either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from .documents import GROUP_RULE, PUBLIC, is_group_name
from .errors import PageError

ACCESS = "access"
_FENCE = re.compile(r"^-{3,}\s*$")  # python-frontmatter's own boundary: what opens a block there opens it here
# What may stand before a block that was meant as front matter without hiding it from the reader of the file:
# blank lines, imports and exports, and comments (MDX, HTML, Markdown link-reference style).
_IMPORT = re.compile(r"^\s*(?:import|export)\b")
_ONE_LINE_COMMENT = re.compile(r"^\s*(?:\{/\*.*\*/\}|<!--.*-->|\[//\]:\s*#.*)\s*$")
_OPENS_COMMENT = {"{/*": "*/}", "<!--": "-->"}
# A fence of front matter in any form a generator might have been meant to read: `---`, `---yaml`, `+++`.
_ANY_FENCE = re.compile(r"^\s*(?:-{3,}[a-z]*|\+{3,})\s*$")
_KEY_LINE = re.compile(r"^\s*[\w-]+\s*[:=]")  # `access: [staff]` or TOML's `access = ["staff"]`
# Keys that keep a page off the site when set: such a page is never published here.
UNPUBLISHED = ("draft", "private", "restricted")
# A key this many single-character edits (insert, delete, replace, swap neighbours) or fewer from `access`,
# ignoring case, blanks, `-` and `_`, is read as an attempted restriction: `Access`, `acess`, `accesss`, `axcess`.
MAX_ACCESS_EDITS = 2


@dataclass(frozen=True)
class FrontMatter:
    """A page's front matter: its values, how many lines the block takes, and the line of each top-level key."""

    meta: dict[str, Any] = field(default_factory=dict)
    lines: int = 0  # the block's lines, both fences included (0 for a page without front matter)
    key_lines: dict[str, int] = field(default_factory=dict)  # 1-based line of each top-level key, as written

    def line_of(self, key: str) -> int:
        """Where an error about `key` points an author (line 1 when the key is not written)."""
        return self.key_lines.get(key, 1)


class RepeatedKeyError(yaml.YAMLError):
    """A mapping names the same key twice; PyYAML would keep the last value without a word."""

    def __init__(self, key: object, first: int, again: int) -> None:
        self.key, self.first, self.again = key, first, again
        super().__init__(f"key {key!r} appears twice")


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a repeated key instead of keeping the last one."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)  # `<<` merges first: a merged `access` overridden below is a repeat too
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line
                try:
                    if key in seen:
                        raise RepeatedKeyError(key, seen[key], line)
                    seen[key] = line
                except TypeError:  # an unhashable key: the base class reports it
                    break
        return super().construct_mapping(node, deep=deep)


def front_matter(text: str, source: str) -> FrontMatter:
    """The YAML front matter of a page; anything that does not load as one mapping is a PageError at its line.

    python-frontmatter finds the block (fences of three or more dashes, as site generators read them); the
    block is then loaded here, strictly. A block that is opened but never closed by a dash fence — a YAML
    `...` end marker included, which the generators do not read as one — fails the page, never reads as none.
    """
    lines = text.split("\n")
    if not _FENCE.match(lines[0]):
        displaced = _displaced_block(lines, 0)
        if displaced is not None:
            raise PageError(source, displaced + 1, _not_front_matter(lines[displaced], displaced == 0))
        return FrontMatter()
    try:
        block, _ = YAMLHandler().split(text)
    except ValueError as exc:
        raise PageError(source, 1, "front matter opened with '---' but never closed") from exc
    inner = block.removeprefix("\n").removesuffix("\n")  # the lines between the fences, as the page numbers them
    value, key_lines = _load(inner, source)
    if not isinstance(value, (dict, type(None))):
        raise PageError(source, 2, f"front matter must be a YAML mapping, got {type(value).__name__}")
    size = (inner.count("\n") + 1 if inner else 0) + 2
    second = _displaced_block(lines, size)
    if second is not None:
        raise PageError(source, second + 1, "a second front matter block after the first is read as body text: "
                                            "merge its keys into the first block")
    return FrontMatter(dict(value or {}), size, key_lines)


def _displaced_block(lines: list[str], start: int) -> int | None:
    """The 0-based line of a front matter block that starts after `start` behind blanks, imports or comments.

    Only a fence followed by a `key:` line counts: a thematic break (`---`) after an import, followed by prose,
    is body text as written.
    """
    i = start
    while i < len(lines):
        line = lines[i].lstrip("\ufeff")
        stripped = line.strip()
        if not stripped or _ONE_LINE_COMMENT.match(line):
            i += 1
        elif _IMPORT.match(line):
            i = _end_of_statement(lines, i) + 1
        elif stripped[:4] in _OPENS_COMMENT or stripped[:3] in _OPENS_COMMENT:
            closing = _OPENS_COMMENT["{/*" if stripped.startswith("{/*") else "<!--"]
            while i < len(lines) and closing not in lines[i]:
                i += 1
            i += 1
        else:
            break
    if i >= len(lines) or not _ANY_FENCE.match(lines[i].lstrip("\ufeff")):
        return None
    following = next((line for line in lines[i + 1:] if line.strip()), "")
    return i if _KEY_LINE.match(following) else None


def _end_of_statement(lines: list[str], i: int) -> int:
    """The last line of the import or export starting at line `i` (one spread over lines ends at its `from`)."""
    j = i
    while j < len(lines) and "{" in lines[i] and "}" not in lines[j] and j - i < 50:
        j += 1
    return j


def _not_front_matter(line: str, first: bool) -> str:
    """Why a block the author meant as front matter is not read as one, and the fix."""
    if line.strip().startswith("+"):
        return "TOML front matter (+++) is not read: write YAML between '---' lines on the first line of the file"
    if first and not _FENCE.match(line):
        return ("front matter must open with '---' alone at the start of the first line "
                f"(this one is {line.strip()!r}): as written, the site shows it as body text")
    return ("front matter must start on the first line of the file: anything before '---' (a blank line, an import, "
            "a comment) makes the site read the block as body text; move it to the top")


def _load(block: str, source: str) -> tuple[Any, dict[str, int]]:
    """Load the block between the fences (its line 0 is the page's line 2), with each top-level key's line."""
    loader = _StrictLoader(block)
    try:
        node = loader.get_single_node()
        value = loader.construct_document(node) if node is not None else None
    except RepeatedKeyError as exc:
        raise PageError(source, exc.again + 2, f"front matter key {exc.key!r} is written twice (lines "
                                               f"{exc.first + 2} and {exc.again + 2}); YAML would keep only the "
                                               "last one, so write it once") from exc
    except yaml.YAMLError as exc:
        context = str(getattr(exc, "context", None) or "")
        opened = "flow" in context or "quoted" in context  # a bracket or quote left open: the fix is where it opened
        marks = ("context_mark", "problem_mark") if opened else ("problem_mark", "context_mark")
        mark = getattr(exc, marks[0], None) or getattr(exc, marks[1], None)
        line = mark.line + 2 if mark is not None else 1
        reason = " ".join(str(p) for p in (context, getattr(exc, "problem", None)) if p)
        raise PageError(source, line, f"invalid YAML front matter: {reason or exc}") from exc
    finally:
        loader.dispose()
    key_lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key_lines.setdefault(str(key_node.value), key_node.start_mark.line + 2)
    return value, key_lines


def page_access(fm: FrontMatter, source: str) -> tuple[str, ...]:
    """Who may read the page: front matter `access` (a group or list of groups), default public.

    A key that looks like a misspelled `access` fails the page instead of
    silently publishing what the author meant to restrict. A group name outside
    the group alphabet fails the page too: the index keys groups by name, and
    `team.a` must never quietly become someone else's `team_a`.
    """
    for key in fm.meta:
        if isinstance(key, str) and key != ACCESS and looks_like_access(key):
            raise PageError(source, fm.line_of(key),
                            f"front matter key {key!r} looks like a misspelled {ACCESS!r}: write exactly "
                            f"{ACCESS!r} to restrict the page, or rename the key if it is not a restriction")
    for key in UNPUBLISHED:
        if fm.meta.get(key) not in (None, False):
            raise PageError(source, fm.line_of(key),
                            f"front matter {key!r} is set ({fm.meta[key]!r}): the site does not publish this page, so "
                            f"it is not indexed; to restrict a page instead, write {ACCESS}: [group]")
    value = fm.meta.get(ACCESS, PUBLIC)
    groups = [value] if isinstance(value, str) else value
    if not isinstance(groups, list) or not groups or not all(isinstance(g, str) and g.strip(" \t") for g in groups):
        raise PageError(source, fm.line_of(ACCESS),
                        f"front matter 'access' must be a group name or a list of them, got {value!r}")
    names = sorted({g.strip(" \t") for g in groups})  # ASCII blanks only: "staff\xa0" must not become staff
    for name in names:
        if not is_group_name(name):
            raise PageError(source, fm.line_of(ACCESS),
                            f"group name {name!r} in 'access' is not allowed: use {GROUP_RULE}")
    return tuple(names)


def looks_like_access(key: str) -> bool:
    """True for a key an author most likely meant as `access` (see MAX_ACCESS_EDITS)."""
    folded = "".join(ch for ch in key.casefold() if ch not in " \t-_")
    return _edits(folded, ACCESS, MAX_ACCESS_EDITS) <= MAX_ACCESS_EDITS


def _edits(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance between `a` and `b` (limit + 1 when their lengths alone rule it out)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1]
