"""The JavaScript inside MDX that the MDX converter (mdx.py) must step over without parsing it.

JSX tags whose attribute values hold `>`, newlines or `{…}`; brace expressions
with nested braces and strings; ESM `import`/`export` statements that span
lines. Each scanner returns where the construct ends, so the converter can
blank it while keeping every line in place. Scans are bounded
(`MAX_TAG_CHARS`) so hostile input stays linear.
"""

from __future__ import annotations

import re

_ESM = re.compile(r"^(import|export)[\s{*]")
_NAME = re.compile(r"[A-Za-z][\w.:-]*")
_ATTR_NAME = re.compile(r"[A-Za-z_:$@][\w.:$@-]*")
_BRACE_EVENT = re.compile(r"[{}\"'`]")
MAX_TAG_CHARS = 20_000


def skip_braces(s: str, i: int, limit: int | None = None) -> int | None:
    """Index after the `}` matching the `{` at i (looking no further than `limit`), skipping JS strings; None if unbalanced."""
    depth = 0
    limit = min(len(s), i + MAX_TAG_CHARS, limit if limit is not None else len(s))
    match = _BRACE_EVENT.search(s, i, limit)
    while match:
        c = match.group()
        j = match.start()
        if c in "\"'`":
            end = s.find(c, j + 1, limit)
            if end < 0:
                return None
            match = _BRACE_EVENT.search(s, end + 1, limit)
            continue
        depth += 1 if c == "{" else -1
        if depth == 0:
            return j + 1
        match = _BRACE_EVENT.search(s, j + 1, limit)
    return None


def _skip_space(s: str, j: int) -> int:
    while j < len(s) and s[j] in " \t\r\n":
        j += 1
    return j


def scan_tag(s: str, i: int, limit: int | None = None) -> tuple[int, str, str] | None:
    """A JSX tag starting at s[i] == '<': (end index, name, kind open|close|self); None if it is not a tag.

    Attribute values may hold `>`, newlines and `{…}` expressions with nested
    braces and strings, as JSX allows.
    """
    j = i + 1
    kind = "open"
    if s.startswith("/", j):
        kind, j = "close", j + 1
    if s.startswith(">", j):
        return j + 1, "", kind
    name = _NAME.match(s, j)
    if not name:
        return None
    j = name.end()
    limit = min(len(s), i + MAX_TAG_CHARS, limit if limit is not None else len(s))
    while j < limit:
        j = _skip_space(s, j)
        if s.startswith(">", j):
            return j + 1, name.group(), kind
        if s.startswith("/>", j) and kind == "open":
            return j + 2, name.group(), "self"
        if kind == "close":
            return None
        if s.startswith("{", j):
            end = skip_braces(s, j, limit)
            if end is None:
                return None
            j = end
            continue
        attr = _ATTR_NAME.match(s, j)
        if not attr:
            return None
        j = _skip_space(s, attr.end())
        if not s.startswith("=", j):
            continue
        j = _skip_space(s, j + 1)
        if j < len(s) and s[j] in "\"'":
            end = s.find(s[j], j + 1, limit)
            if end < 0:
                return None
            j = end + 1
        elif s.startswith("{", j):
            end = skip_braces(s, j, limit)
            if end is None:
                return None
            j = end
        else:
            return None
    return None


def strip_esm_and_expressions(run: str, unclosed: list[int] | None = None) -> str:
    """Blank `import`/`export` statements and flow `{expressions}` that start a block (after a blank line).

    A statement whose brackets never close runs to the end of the text; its
    first line (0-based, in `run`) is added to `unclosed` so the author hears of it.
    """
    lines = run.split("\n")
    i = 0
    while i < len(lines):
        flow_start = i == 0 or not lines[i - 1].strip()
        if flow_start and _ESM.match(lines[i]):
            end = _statement_end(lines, i)
            if end >= len(lines) and unclosed is not None and _open_brackets(lines[i:end]) > 0:
                unclosed.append(i)
        elif flow_start and lines[i].lstrip().startswith("{") and not lines[i].lstrip().startswith("{#"):
            text = "\n".join(lines[i:])
            start = text.index("{")
            close = skip_braces(text, start)
            rest_of_line = text[close:].split("\n", 1)[0] if close is not None else "x"
            if close is None or rest_of_line.strip():
                i += 1
                continue
            end = i + text.count("\n", 0, close) + 1
        else:
            i += 1
            continue
        for k in range(i, end):
            lines[k] = ""
        i = end
    return "\n".join(lines)


def _open_brackets(lines: list[str]) -> int:
    """Brackets opened and not closed in these lines of JavaScript (strings skipped)."""
    code = [re.sub(r"\"[^\"]*\"|'[^']*'|`[^`]*`", "", line) for line in lines]
    return sum(line.count(c) for line in code for c in "{([") - sum(line.count(c) for line in code for c in "})]")


def _statement_end(lines: list[str], i: int) -> int:
    """The line after an ESM statement starting on line i: brackets balanced (strings skipped), no dangling operator."""
    depth = 0
    j = i
    while j < len(lines):
        code = re.sub(r"\"[^\"]*\"|'[^']*'|`[^`]*`", "", lines[j])
        depth += sum(code.count(c) for c in "{([") - sum(code.count(c) for c in "})]")
        j += 1
        if depth <= 0 and not code.rstrip().endswith(("=", ",", "=>", "(", "{", "[")):
            break
    return j
