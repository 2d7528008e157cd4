"""A page whose access cannot be read vanishes from a running server: chat, docs viewer and docs search.

Issue 26, items 2 and 3, on the real thing: `python -m web` in its own
process (embedded Chroma, then a `chroma run` server), the ingest handed to
it by `python -m retrieval index` (what `make ingest` runs). Five public pages
are answered, shown and found; each is then broken in one way that leaves its
access unreadable; the ingest exits 1 naming every `file:line`, and an
anonymous visitor gets none of them anywhere; once fixed, all are back.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests import withheld
from tests.chroma_server import SITE_PAGES, chroma_server, edit, write_site
from tests.live_server import cli_ingest, environment, link_models, web_server

pytestmark = pytest.mark.integration


@pytest.fixture(params=["embedded", "chroma-server"])
def live(request, tmp_path, model_dir) -> Iterator[dict]:
    site = write_site(tmp_path / "site", SITE_PAGES | withheld.pages())
    data = tmp_path / "data"
    link_models(data, model_dir)
    log = tmp_path / "web.log"
    if request.param == "embedded":
        env = environment(site, data)
        with web_server(env, log) as url:
            yield {"site": site, "env": env, "url": url}
    else:
        with chroma_server(tmp_path / "chroma") as chroma_url:
            env = environment(site, data, chroma_url=chroma_url)
            with web_server(env, log) as url:
                yield {"site": site, "env": env, "url": url}


def seen_by_a_visitor(url: str) -> dict[str, dict[str, bool]]:
    """For each page: does an anonymous visitor get its fact from the chat, its viewer page, a search hit?"""
    found: dict[str, dict[str, bool]] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        for page in withheld.PAGES:
            asked = client.post("/api/ask", json={"question": page.question})
            assert asked.status_code == 200, asked.text
            shown = client.get(f"/docs/{page.slug}")
            assert shown.status_code in (200, 404), shown.status_code
            searched = client.get("/docs/search", params={"q": page.title})
            assert searched.status_code == 200
            found[page.source] = {"chat": page.mark in asked.text,
                                  "viewer": shown.status_code == 200, "search": f"/docs/{page.slug}" in searched.text}
    return found


def test_an_unreadable_access_withholds_the_page_from_chat_viewer_and_search_until_fixed(live):
    site, url, env = live["site"], live["url"], live["env"]
    published = seen_by_a_visitor(url)
    assert all(all(ways.values()) for ways in published.values()), published

    withheld.break_all(site)
    edit(site / "guides/retries.mdx", "up to 8 times", "up to 12 times")
    run = cli_ingest(env).wait()
    output = "\n".join(run.lines)
    assert run.returncode == 1, output
    assert "handed to it" in output  # the server did the run
    for page in withheld.PAGES:
        assert f"WITHHELD {page.source}:{page.line}: " in output, output
    gone = seen_by_a_visitor(url)
    assert not any(any(ways.values()) for ways in gone.values()), gone
    with httpx.Client(base_url=url, timeout=60) as client:  # the rest of the site was published
        assert "12 times" in client.post("/api/ask", json={"question": "How many times is a delivery retried?"}).text

    withheld.fix_all(site)
    fixed = cli_ingest(env).wait()
    assert fixed.returncode == 0, "\n".join(fixed.lines)
    back = seen_by_a_visitor(url)
    assert all(all(ways.values()) for ways in back.values()), back
