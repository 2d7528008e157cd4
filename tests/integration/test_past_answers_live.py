"""A past answer is never served from memory after a re-ingest restricted its source.

The hostile run's worst finding, end to end: an anonymous visitor asks about a
public page over the real server (its own process, embedded Chroma and then a
`chroma run` server); the author adds `access: [team-x]` to that page and runs
`make ingest`. From then on every surface that renders the past answer — the
thread link (`/?thread=`), the widget's restore (`/ask/thread`), a follow-up
in the thread, and the audit view of a staff reader outside team-x — rebuilds
it against the live index for its reader and shows none of the page's text,
while a team-x reader still sees the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.chroma_server import chroma_server, edit, write_site
from tests.live_server import HEADER, environment, link_models, make_ingest, web_server

pytestmark = pytest.mark.integration

QUESTION = "Can annual plans be refunded?"
FACT = "within 30 days of purchase"  # the quote, and the hover card's chunk text
SECOND_SECTION = "quote your invoice number"


@pytest.fixture(params=["embedded", "chroma-server"])
def live(request, tmp_path, model_dir) -> Iterator[dict]:
    site = write_site(tmp_path / "site")
    data = tmp_path / "data"
    link_models(data, model_dir)
    if request.param == "embedded":
        env = environment(site, data)
        with web_server(env, tmp_path / "web.log") as url:
            yield {"site": site, "env": env, "url": url}
    else:
        with chroma_server(tmp_path / "chroma") as chroma_url:
            env = environment(site, data, chroma_url=chroma_url)
            with web_server(env, tmp_path / "web.log") as url:
                yield {"site": site, "env": env, "url": url}


def surfaces(client: httpx.Client, thread: str, answer_id: str, groups: str) -> dict[str, str]:
    """Every page that renders the past answer, as this reader receives it."""
    headers = {HEADER: groups} if groups else {}
    pages = {"thread page": client.get(f"/?thread={thread}", headers=headers),
             "widget restore": client.get(f"/ask/thread?thread={thread}", headers=headers)}
    if "staff" in groups.split(","):
        pages["audit view"] = client.get(f"/answers/{answer_id}", headers=headers)
    for name, response in pages.items():
        assert response.status_code == 200, (name, response.status_code, response.text[:200])
    return {name: response.text for name, response in pages.items()}


def test_a_reingest_that_restricts_a_page_takes_it_out_of_every_past_answer(live):
    with httpx.Client(base_url=live["url"], timeout=60) as client:
        page = client.post("/ask", data={"question": QUESTION}).text  # anonymous, no JavaScript: the full page
        assert FACT in page, page[:2000]
        thread = re.search(r'name="thread_id" id="thread-id" value="([0-9a-f]{40})"', page).group(1)
        answer_id = re.search(r'data-answer-id="([0-9a-f]+)"', page).group(1)
        before = surfaces(client, thread, answer_id, "staff")
        assert all(FACT in text for text in before.values()), {k: FACT in v for k, v in before.items()}
        assert FACT in surfaces(client, thread, answer_id, "")["thread page"]  # the asker's reload, before

        edit(live["site"] / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [team-x]\n")
        run = make_ingest(live["env"]).wait()
        assert run.returncode == 0, "\n".join(run.lines)

        for groups in ("", "staff", "tenant-acme"):  # the asker's own groups first: the cache used to serve them
            after = surfaces(client, thread, answer_id, groups)
            leaked = {name: text for name, text in after.items() if FACT in text or SECOND_SECTION in text}
            assert not leaked, (groups, sorted(leaked))
        follow_up = client.post("/ask", data={"question": "And for monthly plans?", "thread_id": thread})
        assert follow_up.status_code == 200 and FACT not in follow_up.text
        assert client.get("/docs/billing/refunds").status_code == 404

        allowed = surfaces(client, thread, answer_id, "team-x")  # who may read the page still sees the answer
        assert FACT in allowed["thread page"] and FACT in allowed["widget restore"]
