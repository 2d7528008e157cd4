"""MDX → CommonMark, line for line, so markdown-it-py can parse what MDX sites contain.

MDX adds ESM (`import`/`export`), JSX blocks and inline JSX, `{/* */}`
comments and (on Docusaurus/Starlight) `:::` admonitions on top of Markdown,
and it has no indented code blocks. Rather than a second parser, we rewrite
those constructs into blank lines or plain Markdown while keeping every line
in place: markdown-it's line maps then point at the real source lines, which
is what chunk spans and the link checker report.

Code fences are copied untouched: `import` inside a fence is code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ESM = re.compile(r"^(import|export)\b")
_JSX_TAG = r"<\s*/?\s*[A-Za-z][\w.:-]*(?:\s+(?:[^<>{}\"']|\"[^\"]*\"|'[^']*'|\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})*)?\s*/?\s*>"
_JSX_ONLY_LINE = re.compile(rf"^\s*(?:{_JSX_TAG}\s*)+$")
_JSX_OPEN_START = re.compile(r"^\s*<[A-Z][\w.]*(\s|$)")
_JSX_FRAGMENT = re.compile(r"^\s*</?>\s*$")
_OPEN_TAG = re.compile(r"<\s*([A-Za-z][\w.:-]*)(?:[^<>]*?)(/?)\s*>")
_CLOSE_TAG = re.compile(r"<\s*/\s*[A-Za-z][\w.:-]*\s*>")
_ADMONITION_OPEN = re.compile(r"^\s*:{3,}(?P<kind>[A-Za-z][\w-]*)(?:\[(?P<title>[^\]]*)\]|[ \t]+(?P<legacy>\S.*?))?\s*(?:\{[^}]*\})?\s*$")
_ADMONITION_CLOSE = re.compile(r"^\s*:{3,}\s*$")
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_VOID_HTML = frozenset({"br", "hr", "img", "input", "meta", "link", "source", "wbr", "col", "area", "embed"})


@dataclass(frozen=True)
class Fence:
    """A fenced code block's lines (0-based, end exclusive) in the source."""

    start: int
    end: int


def _blank(text: str) -> str:
    """Spaces for everything but newlines, so offsets and line numbers survive."""
    return re.sub(r"[^\n]", " ", text)


def find_fences(lines: list[str]) -> list[Fence]:
    """Fenced code blocks, at any indentation (MDX has no indented code)."""
    fences: list[Fence] = []
    i = 0
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i])
        if match and not (match["fence"][0] == "`" and "`" in match["info"]):
            char, size = match["fence"][0], len(match["fence"])
            closing = re.compile(rf"^[ \t]*{re.escape(char)}{{{size},}}[ \t]*$")
            end = i + 1
            while end < len(lines) and not closing.match(lines[end]):
                end += 1
            fences.append(Fence(i, min(end + 1, len(lines))))
            i = end + 1
        else:
            i += 1
    return fences


def _strip_comments(text: str) -> str:
    text = _MDX_COMMENT.sub(lambda m: _blank(m.group()), text)
    return _HTML_COMMENT.sub(lambda m: _blank(m.group()), text)


def _tag_depth_change(line: str) -> int:
    """How a line of JSX tags changes component nesting (+1 open, -1 close, 0 self-closing)."""
    depth = 0
    for match in re.finditer(rf"{_JSX_TAG}", line):
        tag = match.group()
        if _CLOSE_TAG.fullmatch(tag.strip()):
            depth -= 1
        else:
            name = _OPEN_TAG.match(tag)
            if name and not name.group(2) and not tag.rstrip().endswith("/>") and name.group(1).lower() not in _VOID_HTML:
                depth += 1
    return depth


def _esm_end(lines: list[str], i: int) -> int:
    """The line after an `import`/`export` statement that starts on line i."""
    depth = 0
    j = i
    while j < len(lines):
        depth += lines[j].count("{") + lines[j].count("(") + lines[j].count("[")
        depth -= lines[j].count("}") + lines[j].count(")") + lines[j].count("]")
        j += 1
        if depth <= 0 and not lines[j - 1].rstrip().endswith(("=", ",", "=>")):
            break
    return j


def to_markdown(source: str, *, skip_lines: int = 0) -> str:
    """Rewrite MDX into CommonMark with the same number of lines.

    `skip_lines` blanks the first lines (the front matter block).
    """
    lines = source.split("\n")
    for i in range(min(skip_lines, len(lines))):
        lines[i] = ""
    fences = find_fences(lines)
    in_fence = [False] * len(lines)
    for fence in fences:
        for i in range(fence.start, fence.end):
            in_fence[i] = True

    # Comments can span lines, so strip them per run of non-fence lines.
    i = 0
    while i < len(lines):
        if in_fence[i]:
            i += 1
            continue
        j = i
        while j < len(lines) and not in_fence[j]:
            j += 1
        chunk = _strip_comments("\n".join(lines[i:j]))
        lines[i:j] = chunk.split("\n")
        i = j

    out: list[str] = []
    depth = 0
    depth_at: list[int] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if in_fence[i]:
            out.append(line)
            depth_at.append(depth)
            i += 1
            continue
        if _ESM.match(line):
            end = _esm_end(lines, i)
            for _ in range(i, end):
                out.append("")
                depth_at.append(depth)
            i = end
            continue
        if _JSX_ONLY_LINE.match(line) or _JSX_FRAGMENT.match(line):
            depth = max(0, depth + _tag_depth_change(line))
            out.append("")
            depth_at.append(depth)
            i += 1
            continue
        if _JSX_OPEN_START.match(line) and ">" not in line:
            # A component whose attributes span several lines: blank up to its `>`.
            j = i
            while j < len(lines) and ">" not in lines[j]:
                j += 1
            tag_text = " ".join(lines[i : j + 1])
            closes_itself = tag_text.rstrip().endswith("/>")
            for _ in range(i, min(j + 1, len(lines))):
                out.append("")
                depth_at.append(depth)
            if not closes_itself:
                depth += 1
            i = j + 1
            continue
        admonition = _ADMONITION_OPEN.match(line)
        if admonition:
            title = (admonition["title"] or admonition["legacy"] or "").strip()
            out.append(f"{title}:" if title else "")
            depth_at.append(depth)
            i += 1
            continue
        if _ADMONITION_CLOSE.match(line):
            out.append("")
            depth_at.append(depth)
            i += 1
            continue
        out.append(line)
        depth_at.append(depth)
        i += 1
    return "\n".join(_dedent_components(out, depth_at, in_fence))


def _dedent_components(lines: list[str], depth_at: list[int], in_fence: list[bool]) -> list[str]:
    """Remove the indentation authors add inside components, so fences and lists parse.

    Each run of lines inside a component is shifted left by the run's smallest
    indentation; relative indentation (nested lists, code) is kept.
    """
    result = list(lines)
    i = 0
    while i < len(lines):
        if depth_at[i] == 0 or not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and depth_at[j] > 0 and (lines[j].strip() or j == i or _run_continues(lines, depth_at, j)):
            j += 1
        indents = [len(l) - len(l.lstrip(" \t")) for l in lines[i:j] if l.strip()]
        shift = min(indents) if indents else 0
        if shift:
            for k in range(i, j):
                result[k] = lines[k][shift:] if lines[k][:shift].strip() == "" else lines[k].lstrip()
        i = j
    return result


def _run_continues(lines: list[str], depth_at: list[int], j: int) -> bool:
    """A blank line inside a component keeps the run going if more component text follows."""
    k = j
    while k < len(lines) and not lines[k].strip():
        k += 1
    return k < len(lines) and depth_at[k] > 0
