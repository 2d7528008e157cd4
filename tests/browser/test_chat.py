"""The chat page in a real browser: quotes stream in, cards open, sources land on the right heading.

Real uvicorn server, real embedding model, real Chroma index of content/, the
offline extractive generator, Debian's Chromium through Playwright. Every
state is screenshotted to test-artifacts/screenshots/; the time from submit to
the first quote is recorded (test-artifacts/timings.json), never asserted.
"""

from __future__ import annotations

import json
from urllib.parse import unquote, urlsplit

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.integration, pytest.mark.browser]

QUESTION = "What is the default request timeout of the SDKs?"
FOLLOW_UP = "Which TLS versions does the API accept?"
CODE_QUESTION = "What error code means the payload is too large?"  # answered from sentences with `code` spans
TIMINGS = REPO / "test-artifacts" / "timings.json"

# Records when the first "looked at" title, the first quote and the final state appear after submit.
WATCH = """() => {
  window.__t = {};
  const seen = (k, sel) => { if (!window.__t[k] && document.querySelector(sel)) window.__t[k] = performance.now(); };
  new MutationObserver(() => {
    seen("looked", "#thread .looked-at li"); seen("quote", "#thread .claim .quote");
    seen("final", "#thread .turn:not([data-state=pending])");
  }).observe(document.body, {subtree: true, childList: true});
  document.querySelector("#ask").addEventListener("submit", () => { window.__t.submit = performance.now(); }, true);
}"""


def ask(page, question: str) -> None:
    page.fill("#question", question)
    page.click("#ask button[type=submit]")


def final_turn(page, n: int = 1):  # noqa: ANN201
    """The n-th finished turn (1-based) once the stream has completed."""
    turn = page.locator("#thread .turn:not([data-state=pending])").nth(n - 1)
    turn.wait_for()
    return turn


def record_timing(name: str, value: dict) -> None:
    TIMINGS.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    data[name] = value
    TIMINGS.write_text(json.dumps(data, indent=2))


def test_first_visit_shows_the_promise_and_suggestions(page, live_url, shots):
    page.goto(live_url)
    from ingest.site import load_site_config
    from tests.conftest import CONTENT

    assert load_site_config(CONTENT).name in page.locator(".hero h1").inner_text()
    assert page.locator(".suggestion").count() > 0
    assert page.locator("#question").is_visible()
    page.screenshot(path=str(shots / "01-first-visit.png"))


def test_quotes_stream_then_card_shows_quote_then_source_lands_highlighted(page, live_url, shots):
    page.goto(live_url)
    page.evaluate(WATCH)
    ask(page, QUESTION)
    first_quote = page.locator("#thread .claim .quote blockquote").first
    first_quote.wait_for()
    turn = final_turn(page)
    assert turn.get_attribute("data-state") in ("verified", "degraded")
    t = page.wait_for_function("window.__t.final && window.__t").json_value()
    assert t["looked"] <= t["quote"] <= t["final"], t  # titles first, then quotes, then the finished answer
    record_timing("submit_to_first_quote_ms", {"question": QUESTION, "looked_at": round(t["looked"] - t["submit"]),
                                               "first_quote": round(t["quote"] - t["submit"]),
                                               "final": round(t["final"] - t["submit"])})
    quotes = turn.locator(".claim .quote blockquote").all_inner_texts()
    assert any("30 seconds" in q for q in quotes), quotes
    page.screenshot(path=str(shots / "02-verified-answer.png"), full_page=True)

    chip = turn.locator(".chip").first
    card = turn.locator("#" + chip.get_attribute("aria-describedby"))
    assert not card.is_visible()
    chip.hover()
    card.wait_for(state="visible")
    quote = card.locator("mark").inner_text()
    assert quote and quote in turn.locator(".claim .quote blockquote").first.inner_text()
    page.screenshot(path=str(shots / "03-hover-card.png"))

    link = card.locator(".open-source")
    href = link.get_attribute("href")
    anchor = unquote(urlsplit(href).fragment.split(":~:")[0])
    with page.context.expect_page() as opened:
        link.click()
    doc = opened.value
    doc.wait_for_load_state("load")
    assert urlsplit(doc.url).path == urlsplit(href).path
    heading = doc.locator(f'[id="{anchor}"]') if anchor else doc.locator(".doc h1")
    heading.wait_for()
    mark = doc.locator("mark.fragment").first
    mark.wait_for()
    doc.wait_for_timeout(300)  # let the browser's own text-fragment scroll settle before measuring
    assert _in_viewport(heading), f"heading #{anchor} is not in the viewport"
    assert _in_viewport(mark), "the highlighted quote is not in the viewport"
    marked = " ".join(" ".join(doc.locator("mark.fragment").all_inner_texts()).split()).lower()
    assert " ".join(quote.split()[:3]).lower() in marked, (quote, marked)
    doc.screenshot(path=str(shots / "04-docs-viewer-landing.png"))


def _in_viewport(locator) -> bool:  # noqa: ANN001
    return locator.evaluate("el => { const r = el.getBoundingClientRect();"
                            " return r.bottom > 0 && r.top < window.innerHeight && r.height > 0; }")


def test_off_topic_question_is_refused_with_a_site_search_link(page, live_url, shots):
    page.goto(live_url)
    ask(page, "What is the capital of France?")
    turn = final_turn(page)
    assert turn.get_attribute("data-state") == "refused"
    assert turn.locator(".badge").inner_text() == "No answer in the docs"
    text = turn.inner_text()
    related = turn.locator(".banner.refusal .related a")
    if related.count():  # sections were retrieved: they are named, as links to their headings on the site
        assert "I found related sections, but none of them answers this." in text
        assert related.count() <= 4
        assert all(urlsplit(a.get_attribute("href")).path.startswith("/docs/") for a in related.all())
    else:
        assert "No docs section matched this question." in text
    assert turn.locator(".claim").count() == 0
    page.screenshot(path=str(shots / "05-refusal.png"))
    search = turn.locator("a.search-link")
    assert urlsplit(search.get_attribute("href")).path == "/docs/search"
    search.click()
    page.wait_for_selector(".doc-search h1")
    assert page.locator("#q").input_value() == "What is the capital of France?"


def test_a_refusal_that_retrieved_sections_links_them(page, refusing_url, shots):
    page.goto(refusing_url)
    ask(page, "Can I pay my invoice in bitcoin?")
    turn = final_turn(page)
    assert turn.get_attribute("data-state") == "refused"
    links = turn.locator(".banner.refusal .related a")
    assert "I found related sections, but none of them answers this." in turn.inner_text()
    assert 1 <= links.count() <= 4 and turn.locator(".badge").inner_text() == "No answer in the docs"
    page.screenshot(path=str(shots / "05b-refusal-with-sections.png"))
    href = links.first.get_attribute("href")
    with page.context.expect_page() as opened:
        links.first.click()
    doc = opened.value
    doc.wait_for_load_state("load")
    assert urlsplit(doc.url).path == urlsplit(href).path
    anchor = unquote(urlsplit(href).fragment)
    if anchor:
        doc.locator(f'[id="{anchor}"]').wait_for()


def test_nothing_verified_hides_the_text_behind_a_toggle(page, unverified_url, shots):
    page.goto(unverified_url)
    ask(page, "How fast are deliveries?")
    turn = final_turn(page)
    assert turn.get_attribute("data-state") == "unverified"
    assert turn.locator(".looked-at li").count() > 0  # the sections looked at are shown
    assert turn.locator(".claim").count() == 0
    hidden = turn.locator(".unverified-text li").first
    assert not hidden.is_visible()  # off by default
    page.screenshot(path=str(shots / "06-unverified-closed.png"))
    turn.locator(".unverified-text summary").click()
    assert hidden.is_visible()
    assert "less than a second" in hidden.inner_text()
    page.screenshot(path=str(shots / "07-unverified-open.png"))


def test_keyboard_tab_to_a_chip_opens_its_card_and_escape_closes_it(page, live_url, shots):
    page.goto(live_url)
    ask(page, QUESTION)
    final_turn(page)
    page.locator("body").focus()
    page.evaluate("document.activeElement.blur()")
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('chip')"):
            break
    else:
        pytest.fail("Tab never reached a citation chip")
    card = page.locator("#" + page.evaluate("document.activeElement.getAttribute('aria-describedby')"))
    assert card.is_visible()
    page.screenshot(path=str(shots / "08-keyboard-card.png"))
    page.keyboard.press("Escape")
    assert not card.is_visible()
    page.keyboard.press("Tab")  # focus moves on; the next chip's card opens on focus
    if page.evaluate("document.activeElement.classList.contains('chip')"):
        nxt = page.locator("#" + page.evaluate("document.activeElement.getAttribute('aria-describedby')"))
        assert nxt.is_visible()


def test_each_chip_is_one_tab_stop_and_its_card_actions_are_reached_with_the_arrows(page, live_url, shots):
    """Each chip cost three Tab stops (chip, ×, Open source): one per chip now, the card's actions from it."""
    page.goto(live_url)
    ask(page, QUESTION)
    turn = final_turn(page)
    assert turn.locator(".chip").count() >= 1
    focusable = "#thread .cite a[href], #thread .cite button, #thread .cite [tabindex]"
    tabbable = page.evaluate(f"[...document.querySelectorAll('{focusable}')].filter(e => e.tabIndex >= 0)"
                             ".map(e => e.className)")
    assert tabbable == ["chip"] * page.locator("#thread .chip").count(), tabbable
    turn.locator(".chip").first.focus()
    page.keyboard.press("Tab")  # from a chip, Tab goes on past its card
    assert not page.evaluate("!!document.activeElement.closest('.card')")

    first = turn.locator(".chip").first
    first.focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.classList.contains('open-source')")
    page.screenshot(path=str(shots / "08b-card-action-by-arrow.png"))
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.classList.contains('card-close')")
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.classList.contains('chip')")
    assert not page.locator("#" + first.get_attribute("aria-describedby")).is_visible()


def test_follow_up_keeps_each_turns_own_citations(page, live_url, shots):
    page.goto(live_url)
    ask(page, QUESTION)
    final_turn(page, 1)
    ask(page, FOLLOW_UP)
    final_turn(page, 2)
    ids = page.evaluate("[...document.querySelectorAll('[id]')].map(e => e.id)")
    assert len(ids) == len(set(ids)), "duplicate element ids across turns"
    for turn in page.locator("#thread .turn").all():
        looked = {}
        for item in turn.locator(".looked-at li").all():  # one entry per section, naming every retrieved part
            for handle in item.get_attribute("data-handles").split():
                looked[handle] = item.text_content()  # folded under "Looked at": not rendered, still there
        for chip in turn.locator(".chip").all():
            handle = chip.get_attribute("data-handle")
            title = turn.locator("#" + chip.get_attribute("aria-describedby") + " .card-title").inner_text()
            assert handle in looked, f"{handle} cited but not retrieved in this turn"
            assert title in looked[handle], f"{handle} resolves to {title!r}, not this turn's {looked[handle]!r}"
    page.screenshot(path=str(shots / "09-follow-up-thread.png"), full_page=True)


def test_a_quote_with_inline_code_renders_it_as_code_under_chip_1(page, live_url, shots):
    page.goto(live_url)
    ask(page, CODE_QUESTION)
    turn = final_turn(page)
    assert turn.get_attribute("data-state") in ("verified", "degraded")
    quotes = turn.locator(".claim .quote blockquote")
    assert all("`" not in q for q in quotes.all_inner_texts()), quotes.all_inner_texts()  # no raw Markdown
    code = turn.locator(".claim .quote blockquote code").first
    code.wait_for()
    assert code.inner_text().strip() and "`" not in code.inner_text()
    chips = turn.locator(".chip")
    first = chips.first
    assert first.inner_text() == "1" and first.get_attribute("data-handle").startswith("c")
    assert first.get_attribute("aria-label").startswith("Source 1: ")
    labels = [int(c.inner_text()) for c in chips.all()]
    assert labels[0] == 1 and all(n <= max(labels[:i], default=0) + 1 for i, n in enumerate(labels)), labels  # reading order
    assert turn.locator(".sources .num").first.inner_text() == "1"
    first.hover()
    card = turn.locator("#" + first.get_attribute("aria-describedby"))
    card.wait_for(state="visible")
    assert "`" not in card.locator(".card-excerpt").inner_text() and card.locator("mark").count() > 0
    page.screenshot(path=str(shots / "09b-inline-code-quote.png"))


def test_phone_width_has_no_horizontal_overflow(phone, live_url, shots):
    phone.goto(live_url)
    phone.screenshot(path=str(shots / "10-phone-first-visit.png"))
    ask(phone, QUESTION)
    final_turn(phone)
    width = phone.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], f"page is {width[0]}px wide in a {width[1]}px viewport"
    phone.screenshot(path=str(shots / "11-phone-answer.png"), full_page=True)
    phone.locator("#thread .chip").first.tap()
    card = phone.locator("#thread .cite.open .card")
    card.wait_for(state="visible")
    box = card.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375
    phone.screenshot(path=str(shots / "12-phone-card.png"))


def test_without_javascript_the_form_posts_a_full_page_and_keeps_the_thread(browser, live_url, shots):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(live_url)
        ask(page, QUESTION)
        page.wait_for_selector("#thread .turn")
        assert page.locator("#thread .turn").first.get_attribute("data-state") in ("verified", "degraded")
        ask(page, FOLLOW_UP)
        page.wait_for_load_state("load")
        questions = page.locator("#thread .question").all_inner_texts()
        assert questions == [QUESTION, FOLLOW_UP]
        page.screenshot(path=str(shots / "13-no-javascript.png"), full_page=True)
    finally:
        context.close()


def test_a_follow_up_the_docs_answer_is_offered_and_asked_in_the_same_thread(page, live_url, shots):
    page.goto(live_url)
    ask(page, "What is the maximum payload size?")
    turn = final_turn(page)
    offered = turn.locator(".next-questions .suggestion")
    offered.first.wait_for()
    question = offered.first.inner_text()
    assert question.endswith("?")
    page.screenshot(path=str(shots / "09-next-questions.png"))
    offered.first.click()
    second = final_turn(page, 2)
    assert second.locator(".question").inner_text() == question
    assert page.locator("#thread .turn").count() == 2  # asked in the thread, not on a new page
