"""Front matter: the YAML block at the top of a page, and who may read the page (`access`).

python-frontmatter and PyYAML live only here. Errors name the line an author
must fix; a key that looks like a misspelled `access` fails the page rather
than publishing what was meant to be restricted.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import frontmatter
import yaml

from .documents import GROUP_RULE, PUBLIC, is_group_name
from .errors import PageError


def front_matter(text: str, source: str) -> tuple[dict[str, Any], int]:
    """YAML front matter and how many lines it takes; malformed YAML names its line."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        raise PageError(source, 1, "front matter opened with '---' but never closed")
    try:
        post = frontmatter.loads("\n".join(lines[: end + 1]) + "\n")
    except yaml.YAMLError:
        try:  # parse the block alone so the error marks count from the line after the opening '---'
            yaml.safe_load("\n".join(lines[1:end]))
            raise PageError(source, 1, "invalid YAML front matter")
        except yaml.YAMLError as exc:
            mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            reason = " ".join(str(p) for p in (getattr(exc, "context", None), getattr(exc, "problem", None)) if p)
            raise PageError(source, line, f"invalid YAML front matter: {reason or exc}") from exc
    block = yaml.safe_load("\n".join(lines[1:end]))  # python-frontmatter turns a non-mapping into {}: a public page
    if not isinstance(post.metadata, dict) or not isinstance(block, (dict, type(None))):
        raise PageError(source, 2, f"front matter must be a YAML mapping, got {type(block).__name__}")
    return dict(post.metadata), end + 1


def page_access(meta: dict[str, Any], source: str, text: str = "") -> tuple[str, ...]:
    """Who may read the page: front matter `access` (a group or list of groups), default public.

    A key that looks like a misspelled `access` fails the page instead of
    silently publishing what the author meant to restrict. A group name outside
    the group alphabet fails the page too: the index keys groups by name, and
    `team.a` must never quietly become someone else's `team_a`.
    """
    for key in meta:
        if isinstance(key, str) and key != "access" and difflib.get_close_matches(key.strip().lower(), ["access"], cutoff=0.75):
            raise PageError(source, 1, f"front matter key {key!r} looks like a misspelled 'access'; "
                                       "write exactly 'access' (a misspelling would make the page public)")
    value = meta.get("access", PUBLIC)
    groups = [value] if isinstance(value, str) else value
    if not isinstance(groups, list) or not groups or not all(isinstance(g, str) and g.strip(" \t") for g in groups):
        raise PageError(source, 1, f"front matter 'access' must be a group name or a list of them, got {value!r}")
    names = sorted({g.strip(" \t") for g in groups})  # ASCII blanks only: "staff\xa0" must not become staff
    for name in names:
        if not is_group_name(name):
            raise PageError(source, _key_line(text, "access"),
                            f"group name {name!r} in 'access' is not allowed: use {GROUP_RULE}")
    return tuple(names)


def _key_line(text: str, key: str) -> int:
    """The 1-based line of a top-level front matter key (1 when it cannot be found)."""
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() in ("---", "..."):
            break
        if re.match(rf"{re.escape(key)}\s*:", line):
            return number
    return 1
