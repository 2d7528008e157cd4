"""The docs viewer HTML: headings carry exactly the anchors the chunks use, raw HTML never passes through."""

from __future__ import annotations

import re

from ingest.page_html import render_html
from ingest.parser import parse_text
from ingest.site import SiteConfig

MDX = """# Guide

## Webhooks <Badge text="new" />

> ### Quoted heading

- ### Listed heading

<h3>Raw heading</h3>
<h4 id="raw-id">Raw with id</h4>

<Callout>Do <b>not</b> share keys.</Callout>

<script>alert(1)</script>
<img src=x onerror="alert(2)">

## Setup {#explicit}

[Link](/api/keys)
"""


def test_every_heading_gets_its_anchor_and_raw_headings_get_none():
    page = parse_text(MDX, "guide.mdx", SiteConfig())
    assert [(h.text, h.level, h.anchor) for h in page.headings] == [
        ("Guide", 1, "guide"), ("Webhooks", 2, "webhooks-"), ("Quoted heading", 3, "quoted-heading"),
        ("Listed heading", 3, "listed-heading"), ("Raw heading", 3, None), ("Raw with id", 4, "raw-id"),
        ("Setup", 2, "explicit"),
    ]
    body = render_html(page, link_base="/docs")
    assert re.findall(r'<h\d id="([^"]+)"', body) == [h.anchor for h in page.headings if h.anchor]
    assert "<h3>Raw heading</h3>" in body


def test_raw_html_and_jsx_never_reach_the_viewer():
    body = render_html(parse_text(MDX, "guide.mdx", SiteConfig()), link_base="/docs")
    assert "<script" not in body and "onerror" not in body and "<img" not in body and "<Callout" not in body
    assert "Do not share keys." in body
    assert "\ue000" not in body and "\ue001" not in body and "{#explicit}" not in body
    assert 'href="/docs/api/keys"' in body


def test_nested_headings_are_text_in_their_section_not_chunk_boundaries():
    page = parse_text(MDX, "guide.mdx", SiteConfig())
    anchors = [s.heading.anchor for s in page.sections if s.heading]
    assert anchors == ["guide", "webhooks-", "explicit"]
    webhooks = page.sections[1]
    assert [b.text for b in webhooks.blocks][:2] == ["Quoted heading", "- Listed heading"]
