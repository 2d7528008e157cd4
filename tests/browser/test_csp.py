"""The UI works under its own Content-Security-Policy: no violation while asking, reading a card and a docs page."""

from __future__ import annotations

from .test_chat import QUESTION, ask, final_turn


def test_asking_and_opening_a_source_breaks_no_csp_rule(page, live_url):
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    # before any page script runs: a violation while the page loads (a library's own <style>) counts too
    page.add_init_script("document.addEventListener('securitypolicyviolation', e => console.error("
                         "'Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))")
    page.goto(live_url)
    ask(page, QUESTION)
    turn = final_turn(page)
    assert turn.locator(".claim .quote blockquote").count() > 0
    assert page.locator("#question").input_value() == ""  # the composer cleared itself (app.js, not an eval'd hx-on)
    turn.locator(".chip").first.hover()
    page.goto(live_url + "/docs/api/authentication")
    page.wait_for_load_state("load")
    assert violations == []
