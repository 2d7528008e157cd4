"""MDX → CommonMark, line for line, so markdown-it-py can parse what MDX sites contain.

MDX adds ESM (`import`/`export`), JSX blocks and inline JSX, `{…}` expressions,
`{/* */}` comments and (on Docusaurus/Starlight) `:::` admonitions on top of
Markdown, and it has no indented code blocks. Rather than a second parser, we
rewrite those constructs into blank lines or plain Markdown while keeping every
line in place: markdown-it's line maps then point at the real source lines,
which is what chunk spans and the link checker report.

Inline JSX tags become one of two marker characters so the parser can render
them the way the site does: `SOFT` vanishes everywhere (a reader sees the
element's text children, rehype-slug sees them too, untrimmed), `GAP` is a
space in readable text but nothing in an anchor (`<br/>`, table cells, blocks).
A tab's name, bracketed by `NAME`, is a paragraph of its own whatever the
lines around its tag hold.
Code fences and inline code spans are copied untouched: `import` inside a
fence is code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .jsx import MAX_TAG_CHARS, scan_tag, skip_braces, strip_esm_and_expressions

SOFT = "\ue000"
GAP = "\ue001"
NAME = "\ue002"  # brackets a tab's name: the parser reads it as a paragraph of its own (blocks.py)

# A fence opens a line, or a list item's first line ("2. ```sh": CommonMark lets an item start with a code block).
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
# A line of chunk or page text that opens or closes a fenced code block (three or more backticks or tildes):
# the one definition every reader of it uses (quote spans, the verifier, quotes on the page, Copy answer,
# written answers, the Markdown copy of a page).
FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)", re.DOTALL)
_HTML_HEADING_LINE = re.compile(r"^[ \t]*<h([1-6])\b[^<>]*>.*</h\1>[ \t]*$", re.IGNORECASE | re.MULTILINE)
_ADMONITION_OPEN = re.compile(
    r"^\s*:{3,}(?P<kind>[A-Za-z][\w-]*)(?:\[(?P<title>[^\]]*)\]|[ \t]+(?P<legacy>[^{\s].*?))?\s*(?P<attrs>\{[^}]*\})?\s*$"
)
_ADMONITION_LINE = re.compile(r"^[ \t]*:{3,}[A-Za-z].*$", re.MULTILINE)
_SPECIAL = re.compile(r"[<{]")
_ADMONITION_CLOSE = re.compile(r"^\s*:{3,}\s*$")
_ATTR_TITLE = re.compile(r"title=(?:\"([^\"]*)\"|'([^']*)')")
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_VOID_HTML = frozenset({"br", "hr", "img", "input", "meta", "link", "source", "wbr", "col", "area", "embed", "track"})
_INLINE_HTML = frozenset({"a", "abbr", "b", "code", "em", "i", "kbd", "mark", "q", "s", "small", "span", "strong", "sub", "sup", "u", "var", "del", "ins"})


@dataclass(frozen=True)
class Fence:
    """A fenced code block's lines (0-based, end exclusive) in the source; `closed` False if it runs to the end."""

    start: int
    end: int
    closed: bool = True


@dataclass(frozen=True)
class Converted:
    """The CommonMark text plus what MDX would have rejected (`errors`) or what looks wrong (`warnings`), by 1-based line."""

    markdown: str
    errors: tuple[tuple[int, str], ...] = ()
    warnings: tuple[tuple[int, str], ...] = ()
    apart: tuple[int, ...] = ()  # 0-based lines where a tab or a tabs component closes (`TAB_ENDS`)


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
            if end < len(lines) or not match["indent"].strip():
                fences.append(Fence(i, min(end + 1, len(lines)), closed=end < len(lines)))
                i = end + 1
                continue
        # a fence on an item's line that is never closed ("2. ~~~ marks a fence in Markdown.") ends with its item,
        # as Markdown closes it, not at the end of the file: no JSX scanning stops for it
        i += 1
    return fences


def to_markdown(source: str, *, skip_lines: int = 0) -> str:
    """Rewrite MDX into CommonMark with the same number of lines (`skip_lines` blanks the front matter)."""
    return convert(source, skip_lines=skip_lines).markdown


# Components whose attributes a reader sees as text on a Mintlify page (`component_text`): a step's or tab's title,
# a changelog entry's label, and an API field's name, type and default.
_TITLED = frozenset({"Step", "Tab", "Accordion", "Card", "Expandable", "Update"})
# A tab's name is text on every site generator (the button a reader picks it by). Flattened into one run of blocks,
# a sentence closing one tab would sit right before the next tab's command and read as introducing it; the name of
# every tab after the first stands between them, under any preset. The first tab's name is left out: the sentence
# before the tabs introduces its block ("Add the adapter with the `ferry add` command." and `npx ferry add node`).
_TABS = frozenset({"Tab", "TabItem", "Tabs.Tab"})  # Mintlify; Docusaurus and Starlight; Nextra
# Where one of these closes, what comes next is another tab, or after the tabs: never what a sentence before it
# introduces ("Yarn 1 is no longer supported." closing the last tab, then a block below the tabs). Whether or not a
# name can be shown, the parser keeps the blocks either side apart (`Block.apart`).
TAB_ENDS = _TABS | {"Tabs"}
_HEADING_NEXT = re.compile(r"\s*\n\s*(?:#{1,6}\s|<h[1-6]\b)", re.IGNORECASE)  # a component opening on a heading: its title would end the section before
_FIELDS = frozenset({"ParamField", "ResponseField"})
_FIELD_NAMES = ("path", "query", "body", "header", "name")
_STRING = re.compile(r"""["'`]([^"'`{}$]+)["'`]""")
_ATTR = re.compile(r"""([A-Za-z_][\w-]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|\{\s*(?:"([^"]*)"|'([^']*)'|([^{}]*?))\s*\}))?""")


def component_label(name: str, tag: str) -> str:
    """The text a page shows for a component's opening tag, or "" for one it shows none for (titles and fields
    on a Mintlify page; a tab's name, from its title, label or value, on every site generator).

    `<Step title="Install the CLI">` reads "Install the CLI:"; `<ParamField path="id" type="string" default="x"
    required>` reads "`id` (string, default: `x`, required):"; `<Update label="2025-06-01">` reads "2025-06-01:".
    The colon joins the label to the text under it, as the page shows them together.
    """
    attrs: dict[str, str] = {}
    written: dict[str, str] = {}  # what the page shows of each: a string, or the one string an expression holds
    for match in _ATTR.finditer(tag[len(name) + 1:].rstrip("/>")):
        value = next((g for g in match.groups()[1:] if g is not None), None)
        attrs[match.group(1)] = " ".join(value.split()) if value is not None else "true"
        literal = next((g for g in match.groups()[1:5] if g is not None), None)
        if literal is None and match.group(6):  # `label={translate({message: "macOS"})}`: the message, not the call
            strings = _STRING.findall(match.group(6))
            literal = strings[0] if len(strings) == 1 else None
        if literal is not None:
            written[match.group(1)] = " ".join(literal.split())
    if name in _TITLED or name in _TABS:
        label = written.get("title") or written.get("label") or (written.get("value", "") if name == "TabItem" else "")
        return f"{label}:" if label.strip() else ""
    if name in _FIELDS:
        field = next((attrs[k] for k in _FIELD_NAMES if attrs.get(k)), "")
        if not field:
            return ""
        details = [attrs["type"]] if attrs.get("type") else []
        details += [f"default: `{attrs['default']}`"] if attrs.get("default") else []
        details += ["required"] if attrs.get("required") == "true" else []
        return f"`{field}`" + (f" ({', '.join(details)})" if details else "") + ":"
    return ""


def convert(source: str, *, skip_lines: int = 0, component_text: bool = False) -> Converted:
    """Rewrite MDX into CommonMark with the same number of lines, noting what MDX itself would reject.

    `component_text`: components' titles and API fields' attributes become text (the Mintlify preset). A tab's
    name after the first tab of its group is text under any preset (`_TABS`).
    """
    lines = source.split("\n")
    for i in range(min(skip_lines, len(lines))):
        lines[i] = ""
    errors: list[tuple[int, str]] = []
    warnings: list[tuple[int, str]] = []
    in_fence = [False] * len(lines)
    for fence in find_fences(lines):
        opening = _FENCE_OPEN.match(lines[fence.start])
        info = opening["info"].strip() if opening else ""
        if info.startswith("mdx-code-block"):  # Docusaurus: MDX written inside a fence is rendered, not shown
            lines[fence.start] = ""
            if fence.closed:
                lines[fence.end - 1] = ""
            continue
        if not fence.closed:
            warnings.append((fence.start + 1, "code fence is never closed, so it runs to the end of the file"))
        for i in range(fence.start, fence.end):
            in_fence[i] = True

    scanner = _JsxScanner(errors, warnings, component_text=component_text)
    i = 0
    while i < len(lines):
        if in_fence[i]:
            scanner.fence_line()
            i += 1
            continue
        j = i
        while j < len(lines) and not in_fence[j]:
            j += 1
        lines[i:j] = scanner.rewrite("\n".join(lines[i:j]), first_line=i).split("\n")
        i = j
    scanner.finish()

    out: list[str] = []
    for i, line in enumerate(lines):
        if not in_fence[i]:
            line = _admonition(line)
            if not line.replace(SOFT, "").replace(GAP, "").replace(NAME, "").strip():
                line = ""
        out.append(line)
    markdown = "\n".join(_dedent_components(out, scanner.depth_at, in_fence))
    return Converted(markdown, tuple(errors), tuple(warnings), tuple(scanner.apart))


def _admonition(line: str) -> str:
    """`:::note`, `:::tip[Title]`, `:::note Title`, `:::note{title="T"}` keep only their title; closers vanish."""
    match = _ADMONITION_OPEN.match(line)
    if match:
        attr = _ATTR_TITLE.search(match["attrs"] or "")
        title = (match["title"] or match["legacy"] or (attr and (attr[1] or attr[2])) or "").strip()
        return f"{title}:" if title else ""
    return "" if _ADMONITION_CLOSE.match(line) else line


def _blank(text: str) -> str:
    """Nothing but the newlines, so line numbers survive."""
    return "\n" * text.count("\n")


class _JsxScanner:
    """Rewrites runs of non-fence text and tracks component nesting across them (components can wrap fences)."""

    def __init__(self, errors: list[tuple[int, str]], warnings: list[tuple[int, str]], *,
                 component_text: bool = False) -> None:
        self.errors = errors
        self.warnings = warnings
        self.component_text = component_text
        self.stack: list[tuple[str, int]] = []
        self.tabs: dict[tuple[int, str, int], int] = {}  # tabs opened so far under each open element
        self.apart: list[int] = []  # 0-based lines where a tab or a tabs component closes
        self.depth_at: list[int] = []  # per source line: component nesting at the start of the line

    def rewrite(self, run: str, *, first_line: int) -> str:
        run = _MDX_COMMENT.sub(lambda m: SOFT + _blank(m.group()), run)
        run = _HTML_COMMENT.sub(lambda m: SOFT + _blank(m.group()), run)
        unclosed: list[int] = []
        original = run.split("\n")
        run = strip_esm_and_expressions(run, unclosed)
        for k in unclosed:
            statement = " ".join(original[k].split())
            statement = statement if len(statement) <= 40 else statement[:39] + "…"
            self.warnings.append((first_line + k + 1, f"`{statement}` opens a bracket that never closes, so the rest "
                                  "of the page is read as code and not indexed"))
        protected = sorted([(m.start(), m.end()) for m in _CODE_SPAN.finditer(run)]
                           + [(m.start(), m.end()) for m in _HTML_HEADING_LINE.finditer(run)]
                           + [(m.start(), m.end()) for m in _ADMONITION_LINE.finditer(run)])
        start_depth = len(self.stack)
        pieces: list[str] = []
        depth_after: dict[int, int] = {}  # run-relative line -> nesting after the tags that start on it
        pos = last_end = 0
        p = 0
        counted = (0, 0)  # (offset, its run-relative line): newlines are counted once, not per tag
        budget = 2 * len(run) + 50_000  # characters scanned looking for tag and brace ends: keeps hostile input linear
        i = _next_special(run, 0)
        while i >= 0:
            while p < len(protected) and protected[p][1] <= i:
                p += 1
            if p < len(protected) and protected[p][0] <= i:
                i = _next_special(run, protected[p][1])
                continue
            if run[i] == "{":  # an inline `{expression}`: rendered by the site, unknown here, so dropped
                close = None if run.startswith("{#", i) or budget <= 0 else skip_braces(run, i, i + budget)
                budget -= (close or min(len(run), i + MAX_TAG_CHARS)) - i
                if close is not None:
                    pieces.append(run[pos:i])
                    pieces.append(SOFT + _blank(run[i:close]))
                    pos = close
                i = _next_special(run, close or i + 1)
                continue
            tag = scan_tag(run, i, i + budget) if budget > 0 else None
            budget -= (tag[0] if tag else min(len(run), i + 64)) - i
            if tag is None:
                i = _next_special(run, i + 1)
                continue
            end, name, kind = tag
            line = counted[1] + run.count("\n", counted[0], i)
            counted = (i, line)
            later_tab = name in _TABS and kind == "open" and self._count_tab() > 1
            if name in TAB_ENDS and kind in ("close", "self"):
                self.apart.append(first_line + line)
            self._nest(name, kind, first_line + line + 1)
            depth_after[line] = len(self.stack)
            block_html = bool(name) and not name[:1].isupper() and name.lower() not in _INLINE_HTML
            marker = GAP if (pieces and i == last_end) or block_html else SOFT
            label = ""
            # Under `component_text` (Mintlify) every title shows, its first `<Tab>`'s too, as it always has.
            if kind != "close" and not _HEADING_NEXT.match(run, end) and (later_tab or (
                    self.component_text and name != "TabItem")):
                label = component_label(name, run[i:end])
            if label and later_tab:
                label = NAME + label + NAME
            pieces.append(run[pos:i])
            pieces.append(marker + label + _blank(run[i:end]))
            pos = last_end = end
            i = _next_special(run, end)
        pieces.append(run[pos:])
        depth = start_depth
        for k in range(run.count("\n") + 1):
            self.depth_at.append(depth)
            depth = depth_after.get(k, depth)
        return "".join(pieces)

    def fence_line(self) -> None:
        self.depth_at.append(len(self.stack))

    def _count_tab(self) -> int:
        """Counts a tab opening under the innermost open element; how many it has opened, this one included."""
        parent = (len(self.stack), *self.stack[-1]) if self.stack else (0, "", 0)
        self.tabs[parent] = self.tabs.get(parent, 0) + 1
        return self.tabs[parent]

    def _nest(self, name: str, kind: str, line: int) -> None:
        if kind == "self" or name.lower() in _VOID_HTML:
            return
        if kind == "open":
            self.stack.append((name, line))
            return
        names = [n for n, _ in self.stack]
        if name in names:
            while self.stack:
                open_name, open_line = self.stack.pop()
                if open_name == name:
                    break
                if open_name[:1].isupper():
                    self.errors.append((open_line, f"<{open_name}> is never closed (found </{name}> first)"))
        elif name[:1].isupper() or name == "":
            self.errors.append((line, f"closing tag </{name}> has no matching opening tag"))

    def finish(self) -> None:
        for name, line in self.stack:
            if name[:1].isupper() or name == "":
                self.errors.append((line, f"<{name}> is never closed"))


def _next_special(s: str, start: int) -> int:
    """Index of the next `<` or `{` at or after start, -1 if none."""
    match = _SPECIAL.search(s, start)
    return match.start() if match else -1


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
        indents = [len(line) - len(line.lstrip(" \t")) for line in lines[i:j] if line.strip()]
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
