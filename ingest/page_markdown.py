"""A page as plain Markdown, for readers that are programs: `/docs/<path>.md` and `/llms-full.txt`.

Coding assistants read Markdown far better than the viewer's HTML, and MDX is
not Markdown: imports, JSX and `{…}` expressions would reach them as noise.
The page goes through the same MDX → CommonMark rewrite the parser and the
viewer use (`mdx.to_markdown`), so a reader sees the text the chunks were cut
from; the markers inline JSX leaves behind are resolved as the viewer resolves
them, explicit heading ids are dropped, and site-root links get `link_base`.
"""

from __future__ import annotations

import re

from .blocks import COMPONENT_TAG, EXPLICIT_ID
from .documents import Page
from .front_matter import front_matter
from .mdx import GAP, NAME, SOFT, find_fences, to_markdown

_ATX_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]")
_H1 = re.compile(r"^[ \t]{0,3}#[ \t]+(?P<text>.+?)[ \t#]*$")
_ROOT_LINK = re.compile(r"\]\(/(?!/)")


def page_markdown(page: Page, *, link_base: str = "", source: str = "") -> str:
    """The page as Markdown: `# title`, its description as a quote, a `Source:` line with its URL, then the body.

    `link_base` goes in front of site-root links (`[x](/billing/refunds)`), so
    they resolve wherever the reader fetched the page; `source` is the page's
    address to print (default: its URL on the site, which may be root-relative).
    """
    lines = _body_lines(page, link_base)
    title = page.title
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is not None and (h1 := _H1.match(lines[first])):
        title = h1["text"]
        lines = lines[first + 1 :]
    head = [f"# {' '.join(title.split())}", ""]
    description = page.front_matter.get("description")
    if isinstance(description, str) and description.strip():
        head += [f"> {' '.join(description.split())}", ""]
    head += [f"Source: {source or page.url}", ""]
    return "\n".join(head + _squeezed(lines)).strip() + "\n"


def _body_lines(page: Page, link_base: str) -> list[str]:
    """The body's lines after the MDX rewrite, outside code fences tidied the way the viewer renders them."""
    lines = to_markdown(page.body, skip_lines=front_matter(page.body, page.source).lines).split("\n")
    out: list[str] = []
    for line, code in zip(lines, in_code(lines), strict=True):
        if not code:
            line = COMPONENT_TAG.sub("", line).replace(SOFT, "").replace(GAP, " ").replace(NAME, "").rstrip()
            if _ATX_HEADING.match(line):
                line = EXPLICIT_ID.sub("", line)
            if link_base:
                line = _ROOT_LINK.sub(f"]({link_base.rstrip('/')}/", line)
        out.append(line)
    return out


def _squeezed(lines: list[str]) -> list[str]:
    """At most one blank line in a row (JSX and front matter leave runs of them); code keeps its own blank lines."""
    out: list[str] = []
    for line, code in zip(lines, in_code(lines), strict=True):
        if not code and not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
    return out


def in_code(lines: list[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced code block (its fences included): the MDX converter's own
    reading (`ingest.mdx.find_fences`), a fence on a list item's first line ("2. ```sh") included."""
    marks = [False] * len(lines)
    for fence in find_fences(lines):
        for i in range(fence.start, fence.end):
            marks[i] = True
    return marks
