"""What a visitor expects beyond one answer: threads, feedback, copy, failures with Retry, accessible cards and pages.

Real uvicorn server, real model, real Chroma index of content/, the offline
extractive generator, Debian's Chromium. Screenshots of every new state go to
test-artifacts/screenshots/ (git-ignored).
"""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from .a11y import problems
from .silence import given_up, silence_streams
from .test_chat import QUESTION, ask, final_turn

pytestmark = [pytest.mark.integration, pytest.mark.browser]

FOLLOW_UP = "How do I change it?"
TABLE_QUESTION = "How many requests per second does the Starter plan allow?"


def test_a_follow_up_is_answered_from_the_thread_and_a_reload_keeps_it(page, live_url, shots):
    page.goto(live_url)
    ask(page, QUESTION)
    final_turn(page, 1)
    ask(page, FOLLOW_UP)
    second = final_turn(page, 2)
    assert second.get_attribute("data-state") in ("verified", "degraded"), second.inner_text()
    assert second.locator(".question").inner_text() == FOLLOW_UP
    assert "Searched for: How do I change the default request timeout of the SDKs?" in second.locator(".searched").inner_text()
    assert "timeout" in " ".join(second.locator(".claim .quote blockquote").all_inner_texts()).lower()
    thread = parse_qs(urlsplit(page.url).query)["thread"][0]  # the address bar is the thread's link
    assert page.locator("#thread-id").input_value() == thread
    page.screenshot(path=str(shots / "20-follow-up-searched-for.png"), full_page=True)

    page.reload()
    assert page.locator("#thread .question").all_inner_texts() == [QUESTION, FOLLOW_UP]
    assert page.locator("#thread .turn").nth(1).locator(".claim .quote").count() > 0
    page.screenshot(path=str(shots / "21-thread-after-reload.png"), full_page=True)
    ask(page, "Is it the same for retries?")  # the reloaded thread still carries the subject
    third = final_turn(page, 3)
    assert third.locator(".searched").count() == 1 and page.locator("#thread-id").input_value() == thread



def test_a_follow_up_on_someone_elses_shared_link_forks_and_the_askers_reload_never_shows_it(browser, page, live_url):
    page.goto(live_url)
    ask(page, QUESTION)
    final_turn(page, 1)
    thread = parse_qs(urlsplit(page.url).query)["thread"][0]
    other = browser.new_context(viewport={"width": 1280, "height": 900})  # another visitor: same groups, own cookies
    try:
        visitor = other.new_page()
        visitor.set_default_timeout(60_000)
        visitor.goto(f"{live_url}/?thread={thread}")
        assert visitor.locator("#thread .question").all_inner_texts() == [QUESTION]  # the link still shows the thread
        ask(visitor, FOLLOW_UP)
        final_turn(visitor, 2)
        forked = parse_qs(urlsplit(visitor.url).query)["thread"][0]
        assert forked != thread and visitor.locator("#thread-id").input_value() == forked
        visitor.reload()
        assert visitor.locator("#thread .question").all_inner_texts() == [QUESTION, FOLLOW_UP]  # their own copy
    finally:
        other.close()
    page.reload()
    assert page.locator("#thread .question").all_inner_texts() == [QUESTION]
    ask(page, "Is it the same for retries?")  # the asker still extends their own thread
    final_turn(page, 2)
    assert page.locator("#thread-id").input_value() == thread

def test_feedback_is_stored_and_staff_see_it_in_the_bad_answers_queue(browser, staffed_url, shots):
    visitor = browser.new_context(viewport={"width": 1280, "height": 900})
    staff = browser.new_context(viewport={"width": 1280, "height": 900}, extra_http_headers={"X-Groups": "staff"})
    try:
        page = visitor.new_page()
        page.set_default_timeout(60_000)
        page.goto(staffed_url)
        ask(page, QUESTION)
        turn = final_turn(page)
        answer_id = turn.get_attribute("data-answer-id")
        turn.locator(".rate[data-rating=down]").click()
        turn.locator(".feedback-reason input").fill("I wanted the Python SDK default")
        page.screenshot(path=str(shots / "22-feedback-reason.png"))
        turn.locator(".feedback-reason button").click()
        turn.locator(".feedback-status", has_text="Thanks").wait_for()
        page.screenshot(path=str(shots / "23-feedback-sent.png"))
        page.reload()  # the thread shown again remembers the rating instead of asking for it again
        again = page.locator(f'[data-answer-id="{answer_id}"]').last
        again.locator(".feedback-status", has_text="You rated this answer").wait_for()
        assert again.locator(".rate[data-rating=down]").get_attribute("aria-pressed") == "true"
        assert again.locator(".rate:not([disabled])").count() == 0

        desk = staff.new_page()
        desk.goto(staffed_url + "/answers?feedback=down")
        assert desk.locator("h1").inner_text() == "Bad answers"
        row = desk.locator("table.answers tr", has=desk.locator(f'a[href="/answers/{answer_id}"]'))
        assert row.count() == 1 and "1 not helpful" in row.inner_text()
        desk.screenshot(path=str(shots / "24-bad-answers-queue.png"))
        desk.goto(staffed_url + f"/answers/{answer_id}")
        assert "I wanted the Python SDK default" in desk.locator(".feedback-list").inner_text()
        desk.screenshot(path=str(shots / "25-audit-feedback.png"))
        assert desk.goto(staffed_url + "/answers?feedback=up") and desk.locator(f'a[href="/answers/{answer_id}"]').count() == 0
    finally:
        visitor.close()
        staff.close()


def test_copy_answer_puts_markdown_with_quotes_and_links_on_the_clipboard(browser, live_url, shots):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_url)
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(live_url)
        ask(page, QUESTION)
        turn = final_turn(page)
        turn.locator(".copy-answer").click()
        turn.locator(".copy-answer", has_text="Copied").wait_for()
        text = page.evaluate("navigator.clipboard.readText()")
        chip = turn.locator(".chip").first
        assert text.startswith(f"**{QUESTION}**") and "30 seconds" in text
        assert f"]({live_url}{chip.get_attribute('href')})" in text  # each quote carries its deep link, absolute
        assert "](/" not in text  # a path ("/docs/…") breaks once pasted anywhere else
        page.screenshot(path=str(shots / "26-copy-answer.png"))
        page.goto(live_url + "/docs/getting-started/installation")
        block = page.locator(".code-block").first
        block.locator(".copy-code").click()
        assert page.evaluate("navigator.clipboard.readText()").strip() == block.locator("pre").inner_text().strip()
    finally:
        context.close()


def test_server_down_shows_a_message_with_retry_that_answers_once_it_is_back(page, live_url, shots):
    page.goto(live_url)
    page.route("**/ask", lambda route: route.abort("connectionrefused"))
    ask(page, QUESTION)
    failed = page.locator("#thread .turn[data-state=failed]")
    failed.wait_for()
    assert "Could not reach the docs assistant" in failed.inner_text() and failed.locator(".question").inner_text() == QUESTION
    page.screenshot(path=str(shots / "27-server-down-retry.png"))
    page.unroute("**/ask")
    failed.locator(".retry").click()
    turn = final_turn(page)
    assert turn.get_attribute("data-state") in ("verified", "degraded")
    assert page.locator("#thread .turn[data-state=failed]").count() == 0


def test_a_dropped_stream_ends_in_a_message_with_retry_not_an_endless_spinner(page, live_url, shots):
    page.goto(live_url)
    partial = ('id: 0\nevent: retrieved\ndata: <div class="looked-at"><span class="looked-label">Looked at</span></div>\n\n')
    page.route("**/ask/stream*", lambda route: route.fulfill(status=200, body=partial,
                                                             headers={"content-type": "text/event-stream"}))
    ask(page, QUESTION)
    failed = page.locator("#thread .turn[data-state=failed]")
    failed.wait_for()
    assert "connection dropped" in failed.inner_text() and page.locator(".turn[data-state=pending]").count() == 0
    page.screenshot(path=str(shots / "28-dropped-stream-retry.png"))
    page.unroute("**/ask/stream*")
    failed.locator(".retry").click()
    assert final_turn(page).get_attribute("data-state") in ("verified", "degraded")


def test_a_silent_stream_gives_up_after_thirty_seconds_with_retry(page, live_url, shots):
    """A stream that opens nothing and says nothing (turn.js's watchdog, shared with the widget) ends in Retry."""
    silence_streams(page)
    page.goto(live_url)
    ask(page, QUESTION)
    failed = given_up(page, page.locator("#thread"))
    failed.locator(".retry").click()
    assert final_turn(page).get_attribute("data-state") in ("verified", "degraded")


def test_validation_shows_under_the_composer_and_goes_away_with_the_next_question(page, live_url, shots):
    page.goto(live_url)
    page.fill("#question", "   ")
    page.click("#ask button[type=submit]")
    error = page.locator("#ask-error")
    error.locator(".error").wait_for()
    assert "Please type a question" in error.inner_text() and page.locator("#thread .error").count() == 0
    page.screenshot(path=str(shots / "29-validation-inline.png"))
    ask(page, QUESTION)
    final_turn(page)
    assert error.inner_text().strip() == ""


def test_looked_at_entries_are_links_grouped_by_section(page, live_url):
    page.goto(live_url)
    ask(page, QUESTION)
    turn = final_turn(page)
    links = turn.locator(".looked-at li a")
    assert links.count() > 0
    hrefs = [a.get_attribute("href") for a in links.all()]
    assert len(hrefs) == len(set(hrefs)) and all(urlsplit(h).path.startswith("/docs/") for h in hrefs)


def test_on_a_phone_the_copy_button_never_covers_the_code(phone, live_url, shots):
    """Seen on a phone: the code block's Copy button sat over the end of the command (`evt_2bQk9L[Copy]`)."""
    phone.goto(live_url)
    ask(phone, "How do I send a test event with curl?")
    turn = final_turn(phone)
    blocks = turn.locator(".code-block")
    blocks.first.locator(".copy-code").wait_for()
    assert blocks.count() >= 1
    for block in blocks.all():
        button = block.locator(".copy-code").bounding_box()
        code = block.locator("pre").bounding_box()
        overlaps = (button["x"] < code["x"] + code["width"] and code["x"] < button["x"] + button["width"]
                    and button["y"] < code["y"] + code["height"] and code["y"] < button["y"] + button["height"])
        assert not overlaps, (button, code)
    blocks.first.scroll_into_view_if_needed()
    phone.screenshot(path=str(shots / "29b-phone-copy-button-below-code.png"))


def test_on_a_phone_each_refusal_bullet_sits_on_the_first_line_of_its_link(phone, live_url, shots):
    """Seen on a phone: a related section whose link wrapped had its bullet beside the link's last line."""
    phone.goto(live_url)
    ask(phone, "Is there a Terraform provider for Ferrydeck?")
    items = final_turn(phone).locator(".banner.refusal ul.related li")
    assert items.count() >= 2
    # The bullet is drawn on the item's first line box: a probe at the item's start sits on that line.
    offsets = items.evaluate_all("""items => items.map(li => {
        const probe = document.createElement('span');
        probe.textContent = '\u200b';
        li.prepend(probe);
        const text = document.createRange();
        text.selectNodeContents(li.querySelector('a'));
        const lines = [...text.getClientRects()];
        const found = {lines: new Set(lines.map(r => Math.round(r.top))).size, probe: probe.getBoundingClientRect().top,
                       first: Math.min(...lines.map(r => r.top))};
        probe.remove();
        return found;
    })""")
    assert any(o["lines"] > 1 for o in offsets), offsets  # some title wraps at 375 px, or the test shows nothing
    assert all(abs(o["probe"] - o["first"]) < 6 for o in offsets), offsets
    items.first.scroll_into_view_if_needed()
    phone.screenshot(path=str(shots / "29c-phone-refusal-bullets.png"))


def test_the_phone_card_closes_on_its_button_and_on_an_outside_tap(phone, live_url, shots):
    phone.goto(live_url)
    ask(phone, QUESTION)
    turn = final_turn(phone)
    assert not turn.locator("details.looked").first.evaluate("d => d.open")  # folded on a phone
    chip = turn.locator(".chip").first
    card = turn.locator("#" + chip.get_attribute("aria-describedby"))
    chip.tap()
    card.wait_for(state="visible")
    phone.screenshot(path=str(shots / "30-phone-card-close-button.png"))
    card.locator(".card-close").tap()
    card.wait_for(state="hidden")
    chip.tap()
    card.wait_for(state="visible")
    phone.locator("#thread .turn .question").first.tap()
    card.wait_for(state="hidden")
    phone.screenshot(path=str(shots / "31-phone-card-closed.png"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_main_views_pass_computed_contrast_and_target_size_checks(browser, staffed_url, shots, scheme):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme,
                                  extra_http_headers={"X-Groups": "staff"})
    page = context.new_page()
    page.set_default_timeout(60_000)
    found: dict[str, list[str]] = {}
    try:
        page.goto(staffed_url)
        found["first visit"] = problems(page)
        ask(page, QUESTION)
        turn = final_turn(page)
        found["answer"] = problems(page)
        turn.locator(".chip").first.hover()
        found["hover card"] = problems(page, ".cite:hover .card")
        page.screenshot(path=str(shots / f"32-answer-{scheme}.png"), full_page=True)
        ask(page, "What is the capital of France?")
        final_turn(page, 2)
        found["refusal"] = problems(page)
        page.goto(staffed_url + "/docs/getting-started/installation")
        found["docs page"] = problems(page)
        page.screenshot(path=str(shots / f"33-docs-{scheme}.png"))
        page.goto(staffed_url + "/answers")
        found["audit search"] = problems(page)
    finally:
        context.close()
    assert not {k: v for k, v in found.items() if v}, found


def test_a_table_row_quote_is_highlighted_on_the_docs_page(page, live_url, shots):
    page.goto(live_url)
    ask(page, TABLE_QUESTION)
    turn = final_turn(page)
    chip = turn.locator(".quote-rows .chip").first
    chip.wait_for()
    href = chip.get_attribute("href")
    with page.context.expect_page() as opened:
        chip.click()
    doc = opened.value
    doc.wait_for_load_state("load")
    mark = doc.locator("td mark.fragment").first
    mark.wait_for()
    marked = " ".join(doc.locator("tr:has(mark.fragment)").first.inner_text().split())
    assert "Starter" in marked and "50" in marked, marked
    assert doc.locator(f'[id="{unquote(urlsplit(href).fragment.split(":~:")[0])}"]').count() == 1
    doc.screenshot(path=str(shots / "34-table-row-highlighted.png"))
