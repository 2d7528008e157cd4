"""XSS, fast: hostile docs text and hostile model output stay text, and only the site's own URLs become links.

The integration suite (tests/integration/test_hostile_content.py) checks the
same over uvicorn with the real model; these run in milliseconds against the
pure functions and the app with behaving fakes.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html import unescape
from html.parser import HTMLParser

import pytest
from starlette.testclient import TestClient

from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.page_html import render_html
from ingest.parser import parse_text
from ingest.site import SiteConfig
from retrieval.search import DenseRetriever
from tests.fakes import HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.render import inline_code, is_site_url
from web.settings import Settings
from web.stream import sse

SCRIPT = "<script>alert(1)</script>"
HOSTILE_TEXT = f"Secrets rotate every 90 days {SCRIPT} and <img src=x onerror=alert(2)> stay valid for 24 hours."
CHUNK = make_chunk("security/secrets", "rotation", HOSTILE_TEXT, title=f"Secrets {SCRIPT}", heading="Rotation <b onmouseover=x()>")


class _Tags(HTMLParser):
    """Tags and attributes as a browser would build them: what could run code or leave the site."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self._script = tag == "script"
        if tag == "script" and not values.get("src", "").startswith("/static/"):
            self.found.append(f"<script {values}>")
        if tag in ("img", "iframe", "object", "embed", "svg", "base"):
            self.found.append(f"<{tag}>")
        for name, value in values.items():
            if name.startswith("on"):
                self.found.append(f"{name}= on <{tag}>")
            if name in ("href", "src", "action", "formaction") and re.match(r"(?i)\s*(javascript|vbscript|data):", value) \
                    and tag != "link":
                self.found.append(f"{name}={value!r}")

    def handle_data(self, data: str) -> None:
        if self._script and data.strip():
            self.found.append(f"inline script {data[:40]!r}")

    def handle_endtag(self, tag: str) -> None:
        self._script = False


def executable(html: str) -> list[str]:
    """Everything in the markup that a browser would run: script, handlers, script URLs, embedded objects."""
    tags = _Tags()
    tags.feed(html)
    tags.close()
    return tags.found


def draft(*claims: tuple[str, str, str]) -> str:
    return json.dumps({"refused": False, "claims": [
        {"quotes": [{"handle": h, "quote": q}], "claim": text} for text, h, q in claims]})


def client(tmp_path, *replies: str, chunk=CHUNK) -> TestClient:  # noqa: ANN001
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [chunk])
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(*replies),
                        audit=SQLiteAnswerLog(tmp_path / "answers.sqlite3"))
    return TestClient(create_app(Settings(identity_header="X-Groups", data_dir=tmp_path), answerer=answerer, store=store))


@pytest.mark.parametrize("text", [SCRIPT, f"`{SCRIPT}`", f"a `b` {SCRIPT} `c", "`<img src=x onerror=alert(1)>`",
                                  "&lt;script&gt;", "`&#x3C;script&#x3E;`"])
def test_inline_code_never_lets_markup_through(text):
    html = str(inline_code(text))
    assert not executable(html) and "<script" not in html
    assert SCRIPT.replace("`", "") not in html and re.sub(r"</?code>", "", html).count("<") == 0


@pytest.mark.parametrize("html", [f"<p>{SCRIPT}</p>", "<img src=x>", '<a href=" javascript:x()">a</a>', '<b onclick="x()">b</b>',
                                  '<a href="data:text/html,x">a</a>', '<iframe src="/x"></iframe>'])
def test_the_checker_flags_what_a_browser_would_run(html):
    assert executable(html)


@pytest.mark.parametrize("base", ["/docs", "", "/", "https://docs.example.com/guide"])
@pytest.mark.parametrize("url", [
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)", "//evil.example/docs/x", "/\\evil.example/docs", "/\t/evil.example", "/\n/evil.example",
    "\\\\evil.example\\docs", "https://evil.example/docs/x", "https://docs.example.com.evil.io/guide/x",
    "https://docs.example.com@evil.example/guide/x", "http://docs.example.com/guide/x",
])
def test_no_url_trick_counts_as_a_site_url(base, url):
    assert not is_site_url(url, SiteConfig(base_url=base))


def test_the_site_urls_themselves_still_count():
    assert is_site_url("/docs/a#b:~:text=x%20y", SiteConfig(base_url="/docs"))
    assert is_site_url("/a#b", SiteConfig(base_url=""))
    assert is_site_url("https://docs.example.com/guide/a#b", SiteConfig(base_url="https://docs.example.com/guide"))


def test_an_sse_fragment_cannot_forge_an_event():
    message = sse("claim", "a\n\nevent: done\ndata: <p>forged</p>\r\rid: 9\r\nretry: 1", 3)
    events = message.strip("\n").split("\n\n")
    assert len(events) == 1
    lines = events[0].split("\n")
    assert lines[:2] == ["id: 3", "event: claim"] and all(line.startswith("data: ") for line in lines[2:])


def test_the_docs_viewer_renders_hostile_mdx_inert():
    page = parse_text(
        "---\ntitle: T\n---\n\n# Title <img src=x onerror=alert(1)>\n\n"
        f"Text {SCRIPT} and [link](javascript:alert(3)) and [data](data:text/html,x) and "
        '<a href="javascript:alert(4)" onclick="alert(5)">a</a>.\n\n'
        f"{SCRIPT}\n\n<div onmouseover=\"alert(6)\">div</div>\n\n<iframe src=\"https://evil.example\"></iframe>\n\n"
        "&lt;script&gt;alert(7)&lt;/script&gt;\n", "t.mdx", SiteConfig())
    html = render_html(page, link_base="/docs")
    assert not executable(html), html
    assert "<iframe" not in html and "data:text" not in html.replace("[data](data:text/html,x)", "")
    assert "&lt;script&gt;alert(7)&lt;/script&gt;" in html  # entities stay text


def test_chat_hover_card_side_panel_and_audit_keep_hostile_docs_and_model_text_inert(tmp_path):
    quote = "Secrets rotate every 90 days"
    reply = draft(("Secrets rotate every 90 days.", "c1", quote),
                  (f"Secrets rotate every 90 days {SCRIPT} see https://evil.example/x <img src=x onerror=alert(9)>", "c1", quote),
                  (f"{SCRIPT}", "c1", f"{SCRIPT} every 90 days"))
    app = client(tmp_path, reply, reply)
    page = app.post("/ask", data={"question": f"How often do secrets rotate? {SCRIPT}"}, headers={"X-Groups": "staff"}).text
    assert 'class="card"' in page and 'class="sources"' in page and "&lt;script&gt;alert(1)" in page
    assert not executable(page), executable(page)
    assert not any("evil.example" in unescape(h) for h in re.findall(r'href="([^"]*)"', page))
    answer_id = re.search(r'data-answer-id="([0-9a-f]+)"', page).group(1)
    audit = app.get(f"/answers/{answer_id}", headers={"X-Groups": "staff"}).text
    assert "evil.example" in audit and not executable(audit)
    stream = app.get("/ask/stream", params={"question": f"rotate {SCRIPT}", "turn": '"><script>x()</script>'}).text
    assert not executable(stream) and "x()</script>" not in stream


def test_an_unverified_answer_shows_model_text_only_as_inert_text(tmp_path):
    reply = draft((f"Click <a href=\"javascript:alert(1)\">here</a> {SCRIPT} for a refund", "c1", "no such quote anywhere"))
    page = client(tmp_path, reply, reply).post("/ask", data={"question": "refund?"}).text
    assert 'data-state="unverified"' in page and "Show unverified text" in page
    assert "&lt;script&gt;" in page and not executable(page)


HOSTILE_MARKDOWN = [
    f"`{SCRIPT}` and **{SCRIPT}** and [x](javascript:alert(1)) and <javascript:alert(2)>",
    "[a](data:text/html,<script>alert(1)</script>) [b](//evil.example/docs) [c](/\\evil.example) ![i](https://evil.example/i.png)",
    '[t](/docs/a "x\\" onmouseover=alert(1)) <img src=x onerror=alert(1)> &lt;script&gt;alert(7)&lt;/script&gt;',
    "odd ` <b onclick=x()> ** <svg onload=alert(1)> \ue000<script>\ue001 _[u](javascript:x)_",
]


@pytest.mark.parametrize("text", HOSTILE_MARKDOWN)
def test_inline_markdown_renderer_never_lets_markup_through(text):
    from ingest.inline import render_inline

    site = SiteConfig(base_url="/docs")
    html = render_inline(text, link=lambda href: is_site_url(href, site))
    assert not executable(html), html
    assert not re.search(r"<(?!/?(?:code|em|strong|s|a|mark)[ >])", html), html
    assert all(is_site_url(unescape(h), site) for h in re.findall(r'href="([^"]*)"', html)), html


@pytest.mark.parametrize("text", HOSTILE_MARKDOWN)
def test_quotes_table_rows_and_card_excerpts_of_hostile_markdown_stay_inert(text):
    from web.quotes import excerpt_html, quote_html

    chunk = f"- {text}\n\n{text} | {SCRIPT}\n{SCRIPT} | {text}\n\n```\n{text}\n```\n\n## {text}\n\n{text}"
    site = SiteConfig(base_url="/docs")
    link = lambda href: is_site_url(href, site)  # noqa: E731
    for start in range(0, len(chunk), 37):
        end = min(len(chunk), start + 61)
        for html in (str(quote_html(chunk, start, end, header=f"{text} | {SCRIPT}", link=link)),
                     str(excerpt_html(chunk, start, end, width=50, link=link))):
            assert not executable(html), html
            assert not re.search(r'<(?!/?(?:code|pre|em|strong|s|a|mark|br|table|thead|tbody|tr|th|td)[ >]'
                                 r'|span class="card-code">|/span>)', html), html
            assert html.count("<span") == html.count("</span>"), html  # only the card's code block opens one
            assert all(is_site_url(unescape(h), site) for h in re.findall(r'href="([^"]*)"', html)), html


def test_hostile_markdown_in_a_cited_table_row_and_its_header_renders_inert_in_chat(tmp_path):
    header = f"Plan {SCRIPT} | Limit [x](javascript:alert(1))"
    row = f"Starter `{SCRIPT}` | 50 <img src=x onerror=alert(2)> **{SCRIPT}**"
    context = "Rates per plan: see [docs](/docs/limits) or [out](https://evil.example/)."  # shown in the hover card
    chunk = make_chunk("limits/rates", "rates", f"{context}\n\n{header}\n{row}", title=f"Rates {SCRIPT}")
    reply = draft((f"Starter is limited {SCRIPT}.", "c1", row))
    page = client(tmp_path, reply, reply, chunk=chunk).post("/ask", data={"question": "starter rate limit?"}).text
    assert 'class="quote-table"' in page and "<th" in page, page
    assert not executable(page), executable(page)
    assert not any("evil.example" in unescape(h) for h in re.findall(r'href="([^"]*)"', page))
    assert '<a href="/docs/limits" target="_blank" rel="noopener">docs</a>' in page  # the site's own link stays one


def test_a_refusal_lists_retrieved_sections_with_inert_titles_and_only_site_links(tmp_path):
    offsite = make_chunk("x/y", "z", "Some text about refunds.", title=f"Off {SCRIPT}")
    offsite = replace(offsite, url="javascript:alert(1)//docs/x")
    refuse = json.dumps({"refused": True, "claims": []})
    for chunk in (CHUNK, offsite):
        page = client(tmp_path, refuse, refuse, chunk=chunk).post("/ask", data={"question": "rotate?"}).text
        assert "none of them answers this" in page and not executable(page), executable(page)
        assert "&lt;script&gt;" in page
