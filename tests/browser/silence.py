"""The stream watchdog seen from a browser: the chat page and the widget give up on a silent stream alike."""

from __future__ import annotations

from playwright.sync_api import Locator, Page

SILENT = "**/ask/stream*"


def silence_streams(page: Page) -> None:
    """Install the page's own clock (thirty seconds pass in an instant) and leave every answer stream unanswered:
    no event, no error, only silence. Call before the page loads."""
    page.clock.install()
    page.route(SILENT, lambda route: None)


def given_up(page: Page, scope: Locator) -> Locator:
    """Run the clock past the watchdog: the turn is still awaited at 20 s, and a failed turn with Retry by 32 s."""
    scope.locator(".turn[data-state=pending]").wait_for()
    page.clock.run_for(20_000)
    assert scope.locator(".turn[data-state=failed]").count() == 0  # a slow answer is still awaited
    page.clock.run_for(12_000)
    failed = scope.locator(".turn[data-state=failed]")
    failed.wait_for()
    assert "taking too long" in failed.inner_text() and scope.locator(".turn[data-state=pending]").count() == 0
    page.unroute(SILENT)
    return failed
