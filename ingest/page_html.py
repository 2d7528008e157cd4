"""A page as safe HTML for the bundled docs viewer, with exactly the heading ids its chunks use."""

from __future__ import annotations

import html

from .blocks import COMPONENT_TAG, EXPLICIT_ID, HTML_HEADING, markdown, strip_tags
from .documents import Page
from .front_matter import front_matter
from .mdx import GAP, NAME, SOFT, to_markdown


def render_html(page: Page, *, link_base: str = "") -> str:
    """The page body as safe HTML with exactly the heading ids its chunks use.

    Raw HTML and JSX are never passed through (tags dropped, text escaped), so
    content cannot inject script into the docs viewer; site-root links get
    `link_base` in front so they work inside the viewer.
    """
    fm_lines = front_matter(page.body, page.source).lines
    md = markdown()
    tokens = md.parse(to_markdown(page.body, skip_lines=fm_lines))
    anchors = {h.line: h.anchor for h in page.headings if h.anchor}
    for token in tokens:
        line = token.map[0] + 1 if token.map else 0
        if token.type == "heading_open" and line in anchors:
            token.attrSet("id", anchors[line])
        elif token.type == "html_block":
            token.content = _safe_html_block(token.content, line, anchors)
        elif token.type == "inline":
            for child in token.children or []:
                if child.type == "html_inline":
                    child.content = " " if child.content.lower().startswith("<br") else ""
                elif child.type == "text":
                    child.content = COMPONENT_TAG.sub("", child.content).replace(SOFT, "").replace(GAP, " ").replace(NAME, "")
                elif child.type == "link_open":
                    href = str(child.attrGet("href") or "")
                    if href.startswith("/") and not href.startswith("//") and link_base:
                        child.attrSet("href", link_base.rstrip("/") + href)
            if token.children and token.children[-1].type == "text":
                token.children[-1].content = EXPLICIT_ID.sub("", token.children[-1].content)
    return str(md.renderer.render(tokens, md.options, {}))


def _safe_html_block(content: str, line: int, anchors: dict[int, str]) -> str:
    """A raw HTML block as escaped text: `<hN>` lines stay headings (with an id only if they had one), the rest a paragraph."""
    out: list[str] = []
    para: list[str] = []
    for k, text in enumerate(content.split("\n") + [""]):
        heading = HTML_HEADING.match(text)
        if heading or k == content.count("\n") + 1:
            rest = strip_tags("\n".join(para))
            out.append(f"<p>{html.escape(rest)}</p>\n" if rest else "")
            para = []
        if heading:
            level = heading.group(1)
            ident = f' id="{html.escape(anchors[line + k])}"' if (line + k) in anchors else ""
            out.append(f"<h{level}{ident}>{html.escape(strip_tags(heading['text']))}</h{level}>\n")
        else:
            para.append(text)
    return "".join(out)
