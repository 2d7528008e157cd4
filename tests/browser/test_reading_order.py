"""The answer is what a visitor reads first: before the sections looked at and the sources, on desktop and phone.

Also the keyboard path to the first citation, where a reloaded thread lands, and what the composer asks for.
Real uvicorn server, real model, real Chroma index of content/, the offline extractive generator, Chromium;
screenshots in test-artifacts/screenshots/.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from .test_chat import QUESTION, ask, final_turn

pytestmark = [pytest.mark.integration, pytest.mark.browser]

FOLLOW_UP = "How do I change it?"
MAX_TABS_TO_FIRST_CHIP = 5  # skip link, brand, Ask, Docs, then the first chip (it was 14, through "Looked at")
BEFORE = "(a, b) => !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING)"


@pytest.mark.parametrize(("device", "viewport"), [("desktop", (1280, 900)), ("phone", (375, 812))])
def test_the_first_claim_is_read_before_looked_at_and_sources_and_is_above_the_fold(browser, live_url, shots, device,
                                                                                     viewport):
    width, height = viewport
    context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=device == "phone",
                                  has_touch=device == "phone")
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(live_url)
        ask(page, QUESTION)
        turn = final_turn(page)
        claim = turn.locator(".claim").first
        looked, sources = turn.locator(".looked-at"), turn.locator(".sources")
        assert looked.count() == 1 and sources.count() == 1
        for later in (looked, sources):  # in reading order (and for a screen reader, and Tab)
            assert claim.evaluate(BEFORE, later.element_handle())
        assert not turn.locator("details.looked").evaluate("d => d.open")  # folded to one line
        assert turn.locator(".sources .source-quote, .sources blockquote").count() == 0  # quotes are not repeated
        page.goto(page.url)  # the thread as opened from its link: nothing scrolled by the stream
        turn = page.locator("#thread .turn").first
        box = turn.locator(".claim").first.bounding_box()
        composer = page.locator("#ask").bounding_box()["y"]  # fixed at the bottom: what is under it is not seen
        assert box["y"] >= 0 and box["y"] + min(box["height"], 60) <= composer, (box, composer)  # above the fold
        if device == "phone":  # one column: the answer stands above what was looked at and the sources
            assert box["y"] < turn.locator(".looked-at").bounding_box()["y"] < turn.locator(".sources").bounding_box()["y"]
        page.screenshot(path=str(shots / f"50-reading-order-{device}.png"))
    finally:
        context.close()


def test_few_tab_presses_reach_the_first_chip(page, live_url, shots):
    page.goto(live_url)
    ask(page, QUESTION)
    final_turn(page)
    page.goto(page.url)  # a fresh load of the thread: focus starts at the top of the page
    presses = 0
    while not page.evaluate("document.activeElement.classList.contains('chip')"):
        presses += 1
        assert presses <= MAX_TABS_TO_FIRST_CHIP, page.evaluate("document.activeElement.outerHTML.slice(0, 120)")
        page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('.claim') !== null")
    page.screenshot(path=str(shots / "51-tab-to-first-chip.png"))


def test_a_reloaded_thread_shows_its_latest_turn(browser, live_url, shots):
    context = browser.new_context(viewport={"width": 1280, "height": 600})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(live_url)
        ask(page, QUESTION)
        final_turn(page, 1)
        ask(page, FOLLOW_UP)
        final_turn(page, 2)
        thread = parse_qs(urlsplit(page.url).query)["thread"][0]
        for reopen in (page.reload, lambda: page.goto(f"{live_url}/?thread={thread}")):
            page.evaluate("window.scrollTo(0, 0)")
            reopen()
            page.locator("#thread .turn").nth(1).wait_for()
            page.wait_for_function("() => window.scrollY > 0")  # scrolled, not left at the first turn
            top = page.locator("#thread .turn").nth(1).bounding_box()["y"]
            assert 0 <= top < 600 / 2, top  # the latest turn starts near the top of the window
        page.screenshot(path=str(shots / "52-reloaded-thread-latest-turn.png"))
    finally:
        context.close()


def test_the_composer_asks_for_a_follow_up_once_there_is_an_answer(page, live_url, shots):
    page.goto(live_url)
    box = page.locator("#question")
    assert box.get_attribute("placeholder") == "Ask a question about Ferrydeck Docs…"
    ask(page, QUESTION)
    final_turn(page)
    assert box.get_attribute("placeholder") == "Ask a follow-up question…"
    page.screenshot(path=str(shots / "53-composer-follow-up.png"))
