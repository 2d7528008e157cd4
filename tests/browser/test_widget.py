"""The embeddable widget on someone else's site: a static docs build on another origin, one script tag.

The host is a static site (pages rendered from a copy of a few content/ pages,
as an Astro or Docusaurus build would serve them) on its own origin; the chat
server indexes the same pages with `base_url` pointing at that host and allows
its origin in CORS_ORIGINS. A chip in the widget must open the host's page at
the heading, with the quote highlighted by the browser's text fragment.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import CONTENT
from tests.integration.conftest import serve
from tests.processes import free_port

from .silence import given_up, silence_streams
from .test_chat import QUESTION

pytestmark = [pytest.mark.integration, pytest.mark.browser]
PAGES = ("getting-started/installation.mdx", "getting-started/quickstart.mdx", "api/rate-limits.mdx")


class StaticSite(http.server.SimpleHTTPRequestHandler):
    """Serves `/docs/a/b` from `docs/a/b.html`, like a static docs build with clean URLs."""

    def translate_path(self, path: str) -> str:
        local = super().translate_path(path)
        return local + ".html" if not Path(local).exists() and Path(local + ".html").exists() else local

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass


@pytest.fixture(scope="module")
def sites(tmp_path_factory, real_embedder) -> Iterator[tuple[str, str, Path]]:
    from answer.generate import ExtractiveGenerator
    from answer.log.sqlite import SQLiteAnswerLog
    from answer.pipeline import Answerer
    from ingest.corpus import load_corpus
    from ingest.page_html import render_html
    from retrieval.indexer import sync_index
    from retrieval.services import open_retriever
    from retrieval.store import ChromaStore
    from web.app import create_app
    from web.settings import Settings

    root = tmp_path_factory.mktemp("widget")
    host_port = free_port()
    host = f"http://127.0.0.1:{host_port}"
    content = root / "content"
    for page in PAGES:
        (content / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CONTENT / page, content / page)
    site = (CONTENT / "site.toml").read_text().replace('base_url = "/docs"', f'base_url = "{host}/docs"')
    (content / "site.toml").write_text(site.replace('search_url = "/docs/search?q={query}"', 'search_url = ""'))
    corpus = load_corpus(content)
    store = ChromaStore(path=str(root / "chroma"))
    sync_index(corpus, store, real_embedder)

    www = root / "www"
    settings = Settings(content_dir=content, data_dir=root / "data", cors_origins=host)
    retriever = open_retriever(settings, store=store, embedder=real_embedder)
    answerer = Answerer(retriever, ExtractiveGenerator(real_embedder), audit=SQLiteAnswerLog(root / "answers.sqlite3"))
    with serve(create_app(settings, answerer=answerer, store=store)) as server:
        tag = f'<script src="{server}/widget.js" data-label="Ask the docs" defer></script>'  # in the site's layout
        for page in corpus.pages:  # the "real" docs site: static HTML with the same heading ids
            out = www / "docs" / f"{page.slug}.html"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(f"<!doctype html><html><head><meta charset=utf-8><title>{page.title}</title>"
                           f"<style>h2{{margin-top:900px}} button{{background:red !important}}</style>{tag}</head>"
                           f"<body><main>{render_html(page, link_base=host + '/docs')}</main></body></html>")
        (www / "index.html").write_text(
            "<!doctype html><html><head><meta charset=utf-8><title>Host docs</title>"
            "<style>* { font-family: serif !important; color: green !important; } .chip { display:none !important }</style>"
            "</head><body><h1>Host docs home</h1><p id=host-text>The host page's own content.</p>"
            f"{tag}</body></html>")
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", host_port), functools.partial(StaticSite, directory=str(www)))
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield host, server, root
        finally:
            httpd.shutdown()


def _asked_in_widget(page, host: str):  # noqa: ANN001, ANN202
    page.goto(host + "/")
    widget = page.locator("#docs-chat-widget")
    widget.locator(".launcher").click()
    widget.locator(".composer input").fill(QUESTION)
    widget.locator(".composer button").click()
    turn = widget.locator(".turn[data-state=verified], .turn[data-state=degraded]").first
    turn.wait_for()
    return widget, turn


def test_the_widget_answers_on_another_origin_and_its_chip_opens_the_host_page_at_the_heading(page, sites, shots):
    host, server, root = sites
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    widget, turn = _asked_in_widget(page, host)
    assert "30 seconds" in " ".join(turn.locator(".claim .quote blockquote").all_inner_texts())
    assert page.locator("#host-text").evaluate("e => getComputedStyle(e).fontFamily") == "serif"  # the host is untouched
    chip = turn.locator(".chip").first
    assert chip.is_visible()  # the host's `.chip { display:none }` never reaches the shadow root
    style = "e => [getComputedStyle(e).color, getComputedStyle(e).fontFamily]"
    assert turn.locator(".question").evaluate(style)[0] != "rgb(0, 128, 0)"  # nor does its `* { color: green }`
    assert turn.locator(".question").evaluate(style)[1] != "serif"
    page.screenshot(path=str(shots / "40-widget-answer.png"))
    href = chip.get_attribute("href")
    assert href.startswith(host + "/docs/") and ":~:text=" in href
    anchor = unquote(urlsplit(href).fragment.split(":~:")[0])
    with page.context.expect_page() as opened:
        chip.click()
    doc = opened.value
    doc.wait_for_load_state("load")
    assert doc.url.startswith(host + "/docs/")
    heading = doc.locator(f'[id="{anchor}"]')
    heading.wait_for()
    doc.wait_for_timeout(300)
    assert doc.evaluate("() => window.scrollY") > 0  # the browser followed the fragment into the long page
    assert heading.evaluate("el => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }")
    doc.screenshot(path=str(shots / "41-widget-chip-on-host-page.png"))
    assert errors == []

    turn = widget.locator(".turn[data-answer-id]").first
    page.mouse.move(5, 5)  # off the chip: its hover card closes
    turn.locator(".rate[data-rating=down]").click()
    turn.locator(".feedback-reason input").fill("asked from the widget")
    turn.locator(".feedback-reason button").click()
    turn.locator(".feedback-status", has_text="Thanks").wait_for()  # stored cross-origin, without cookies
    page.screenshot(path=str(shots / "42-widget-feedback.png"))

    page.goto(host + "/docs/getting-started/quickstart")  # another page of the host site, same tab
    page.locator("#docs-chat-widget .launcher").click()
    again = page.locator("#docs-chat-widget .turn[data-state=verified], #docs-chat-widget .turn[data-state=degraded]")
    again.first.wait_for()
    assert again.first.locator(".question").inner_text() == QUESTION  # the thread came back with the panel
    assert again.first.locator(".chip").first.get_attribute("href").startswith(host + "/docs/")
    rated = sqlite3.connect(root / "answers.sqlite3").execute("SELECT rating, reason, groups FROM feedback").fetchall()
    assert rated == [("down", "asked from the widget", "public")]


def test_the_widget_only_answers_allowlisted_origins_and_renders_hostile_input_as_text(page, sites):
    import httpx

    host, server, _ = sites
    allowed = httpx.options(server + "/api/ask", headers={"Origin": host, "Access-Control-Request-Method": "POST"})
    assert allowed.status_code == 204 and allowed.headers["access-control-allow-origin"] == host
    assert "access-control-allow-credentials" not in allowed.headers
    other = httpx.get(server + "/ask/stream?question=x", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    page.on("dialog", lambda d: (_ for _ in ()).throw(AssertionError("script ran: " + d.message)))
    page.goto(host + "/")
    widget = page.locator("#docs-chat-widget")
    widget.locator(".launcher").click()
    hostile = '<img src=x onerror="alert(1)"> timeout?'
    widget.locator(".composer input").fill(hostile)
    widget.locator(".composer button").click()
    turn = widget.locator(".turn:not([data-state=pending])").first
    turn.wait_for()
    assert turn.locator(".question").inner_text() == hostile
    assert widget.locator("img").count() == 0


def test_the_widget_keeps_its_own_thread_and_a_tab_holding_a_copied_thread_id_forks(browser, page, sites):
    host, server, root = sites
    keys = f"() => [sessionStorage.getItem('docs-chat-thread:{server}'), sessionStorage.getItem('docs-chat-owner:{server}')]"

    def ask(tab, question: str, n: int) -> None:  # noqa: ANN001
        widget = tab.locator("#docs-chat-widget")
        widget.locator(".composer input").fill(question)
        widget.locator(".composer button").click()
        widget.locator(".turn:not([data-state=pending])").nth(n - 1).wait_for()

    page.goto(host + "/")
    page.locator("#docs-chat-widget .launcher").click()
    ask(page, QUESTION, 1)
    thread, owner = page.evaluate(keys)
    assert thread and owner  # the owner token the server minted, kept by the tab
    ask(page, "How do I change it?", 2)
    assert page.evaluate(keys) == [thread, owner]  # the follow-up stayed in the widget's thread

    other = browser.new_context()
    try:
        tab = other.new_page()
        tab.set_default_timeout(60_000)
        tab.goto(host + "/")
        tab.evaluate(f"t => sessionStorage.setItem('docs-chat-thread:{server}', t)", thread)
        tab.locator("#docs-chat-widget .launcher").click()
        tab.locator("#docs-chat-widget .turn").first.wait_for()  # the copied thread shows, rebuilt for this reader
        ask(tab, "Which TLS versions does the API accept?", 3)
        forked, _ = tab.evaluate(keys)
        assert forked != thread
    finally:
        other.close()
    asked = sqlite3.connect(root / "answers.sqlite3").execute(
        "SELECT asked FROM turns WHERE thread_id = ? ORDER BY position", (thread,)).fetchall()
    assert asked == [(QUESTION,), ("How do I change it?",)]


def test_the_widget_hover_card_stays_inside_the_panel_whatever_the_chips_position(page, sites, shots):
    """The card hung off the chip's right edge and reached left of the panel, where the thread's scroll box cut it."""
    host, _, _ = sites
    widget, turn = _asked_in_widget(page, host)
    assert widget.locator(".composer input").get_attribute("placeholder") == "Ask a follow-up question…"
    panel = widget.locator(".panel").bounding_box()
    chips = turn.locator(".chip").all()
    assert chips
    leftmost = min(chips, key=lambda c: c.bounding_box()["x"])
    assert leftmost.bounding_box()["x"] - panel["x"] < 0.8 * panel["width"]  # a card as wide as the old one overflowed
    for chip in [leftmost, *chips]:
        chip.hover()
        card = widget.locator("#" + chip.get_attribute("aria-describedby"))
        card.wait_for(state="visible")
        box = card.bounding_box()
        inside = (box["x"] >= panel["x"] and box["x"] + box["width"] <= panel["x"] + panel["width"]
                  and box["y"] >= panel["y"] and box["y"] + box["height"] <= panel["y"] + panel["height"])
        assert inside, (box, panel)
        if chip == leftmost:
            page.screenshot(path=str(shots / "43-widget-card-inside-panel.png"))
        page.mouse.move(5, 5)
        card.wait_for(state="hidden")


def test_the_widget_copies_an_answer_with_absolute_links_like_the_chat_page(browser, sites):
    """The widget and the chat page share the copy code (turn.js): every link of the copied Markdown is absolute."""
    host, _, _ = sites
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=host)
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        _, turn = _asked_in_widget(page, host)
        turn.locator(".copy-answer").click()
        turn.locator(".copy-answer", has_text="Copied").wait_for()
        text = page.evaluate("navigator.clipboard.readText()")
        assert text.startswith(f"**{QUESTION}**") and "30 seconds" in text
        assert f"]({turn.locator('.chip').first.get_attribute('href')})" in text  # the chip's deep link, as shown
        assert "](/" not in text
    finally:
        context.close()


def test_the_widget_card_opens_on_a_tap_and_closes_on_its_button_and_an_outside_tap(phone, sites, shots):
    """On a touch screen the widget's cards behave as the chat page's (turn.js): no hover, so taps open and close them."""
    host, _, _ = sites
    widget, turn = _asked_in_widget(phone, host)
    chip = turn.locator(".chip").first
    card = widget.locator("#" + chip.get_attribute("aria-describedby"))
    chip.tap()
    card.wait_for(state="visible")
    card.locator(".card-title").tap()
    phone.wait_for_timeout(300)
    assert card.is_visible()  # reading the card is not a tap outside it
    phone.screenshot(path=str(shots / "44-widget-phone-card.png"))
    card.locator(".card-close").tap()
    card.wait_for(state="hidden")
    chip.tap()
    card.wait_for(state="visible")
    turn.locator(".question").tap()
    card.wait_for(state="hidden")


def test_the_widget_gives_up_on_a_silent_stream_after_thirty_seconds_like_the_chat_page(page, sites):
    """The widget's stream is watched by the same code as the chat page's (turn.js): silence ends in Retry."""
    host, _, _ = sites
    silence_streams(page)
    page.goto(host + "/")
    widget = page.locator("#docs-chat-widget")
    widget.locator(".launcher").click()
    widget.locator(".composer input").fill(QUESTION)
    widget.locator(".composer button").click()
    failed = given_up(page, widget)
    failed.locator(".retry").click()
    widget.locator(".turn[data-state=verified], .turn[data-state=degraded]").first.wait_for()
