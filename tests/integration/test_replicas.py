"""Replicas over one Chroma server, as an operator runs them: started at once, and published to from anywhere.

Each replica is a real `python -m web --ingest` with its own DATA_DIR (its
own models, its own local locks), sharing only `CHROMA_URL`. Started at the
same moment against an empty server, exactly one builds the index (the
server's writer lease) and the others wait, then find nothing to embed; a
second replica used to die with "Collection [docs-active] already exists".
An ingest from a machine that runs no server at all (a docs team's CI job:
another DATA_DIR, only CHROMA_URL) is served by every replica within
seconds, and no request fails meanwhile.
"""

from __future__ import annotations

import re
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from retrieval.store import ChromaStore
from tests.chroma_server import chroma_server, write_site
from tests.live_server import cli_ingest, environment, launch_web, link_models, supervised_web

pytestmark = pytest.mark.integration

QUESTION = "How many times does Ferrydeck retry a failed delivery?"
NEW_PAGE = """---
title: Delivery windows
---

# Delivery windows

## Quiet hours

Ferrydeck pauses deliveries to an endpoint during its quiet hours, which default to none.
"""
NEW_QUESTION = "What are quiet hours for an endpoint?"


def start_replicas(stack: ExitStack, count: int, site: Path, chroma_url: str, model_dir: Path,
                   tmp_path: Path) -> tuple[list[str], list[Path]]:
    """Start `count` replicas, each with a DATA_DIR of its own, before waiting for any: they race for the empty
    index as a rollout's pods do. Their URLs and logs."""
    envs, logs = [], []
    for n in range(count):
        data = tmp_path / f"replica-{n}"
        link_models(data, model_dir)
        envs.append(environment(site, data, chroma_url=chroma_url))
        logs.append(tmp_path / f"replica-{n}.log")
    processes = [launch_web(env, stack.enter_context(log.open("wb"))) for env, log in zip(envs, logs, strict=True)]
    return [stack.enter_context(supervised_web(process, env, log, startup=300))
            for process, env, log in zip(processes, envs, logs, strict=True)], logs


def embedded(log: Path) -> int:
    """How many chunks a replica's start-up ingest embedded (from its `ingest:` log line)."""
    match = re.search(r"chunks: (\d+) embedded", log.read_text(errors="replace"))
    assert match, log.read_text(errors="replace")[-2000:]
    return int(match.group(1))


def ask(url: str, question: str) -> dict:
    reply = httpx.post(f"{url}/api/ask", json={"question": question}, timeout=120)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_three_replicas_started_at_once_build_the_index_once_and_all_serve_it(tmp_path, model_dir):
    site = write_site(tmp_path / "site")
    with chroma_server(tmp_path / "chroma") as chroma_url, ExitStack() as stack:
        urls, logs = start_replicas(stack, 3, site, chroma_url, model_dir, tmp_path)

        counts = sorted(embedded(log) for log in logs)
        assert counts[0] == counts[1] == 0 and counts[2] > 0  # one built the index; two found it built
        assert any("waiting for the ingest of" in log.read_text(errors="replace") for log in logs)
        answers = [ask(url, QUESTION) for url in urls]
        assert {a["state"] for a in answers} == {"answered"}
        assert len({tuple(c["id"] for c in a["retrieved"]) for a in answers}) == 1  # one index, read alike

        store = ChromaStore(url=chroma_url)
        builds = [name for name in store.collections() if name not in ("docs-active",)]
        assert len(builds) == 1 and store.count() == counts[2]  # one build, nothing orphaned, no lease left over


def test_an_ingest_from_a_machine_without_a_server_is_served_by_every_replica_with_no_failed_request(tmp_path, model_dir):
    site = write_site(tmp_path / "site")
    with chroma_server(tmp_path / "chroma") as chroma_url, ExitStack() as stack:
        urls, logs = start_replicas(stack, 2, site, chroma_url, model_dir, tmp_path)
        assert all(ask(url, NEW_QUESTION)["state"] != "answered" for url in urls)

        failures: list[str] = []
        stop = threading.Event()

        def poll(url: str) -> None:  # visitors keep asking on every replica while the docs team publishes
            with httpx.Client(base_url=url, timeout=120) as client:
                while not stop.is_set():
                    try:
                        reply = client.post("/api/ask", json={"question": QUESTION})
                        if reply.status_code != 200 or reply.json()["state"] != "answered":
                            failures.append(f"{url}: {reply.status_code} {reply.text[:200]}")
                    except httpx.HTTPError as exc:
                        failures.append(f"{url}: {exc!r}")

        pollers = [threading.Thread(target=poll, args=(url,), daemon=True) for url in urls]
        for poller in pollers:
            poller.start()
        try:
            (site / "guides" / "windows.mdx").write_text(NEW_PAGE)  # the CI job's checkout has the new page
            ci_data = tmp_path / "ci-job"
            link_models(ci_data, model_dir)
            run = cli_ingest(environment(site, ci_data, chroma_url=chroma_url)).wait()
            assert run.returncode == 0, "\n".join(run.lines)
            assert not any("handed to it" in line for line in run.lines)  # it wrote itself: no server of its own
            published = time.monotonic()
            for url in urls:
                while (answer := ask(url, NEW_QUESTION))["state"] != "answered" and time.monotonic() - published < 30:
                    time.sleep(0.5)
                assert answer["state"] == "answered", answer
                assert answer["claims"][0]["citations"][0]["url"].startswith("/docs/guides/windows#quiet-hours")
            assert time.monotonic() - published < 30
        finally:
            stop.set()
            for poller in pollers:
                poller.join(timeout=180)
        assert failures == []


def test_a_restriction_published_from_one_replica_reaches_the_viewer_and_search_of_another(tmp_path, model_dir):
    """Replicas with their own CONTENT_DIR: the one that did not publish kept serving the page from its own copy.

    Its docs viewer and /docs/search read that copy's front matter, re-read only when the index's generation
    moved, and the copy still said "public". They must follow the shared index's access, as answers do.
    """
    first, second = write_site(tmp_path / "site-a"), write_site(tmp_path / "site-b")
    with chroma_server(tmp_path / "chroma") as chroma_url, ExitStack() as stack:
        envs, urls = [], []
        for name, site in (("a", first), ("b", second)):
            data = tmp_path / f"replica-{name}"
            link_models(data, model_dir)
            envs.append(environment(site, data, chroma_url=chroma_url))
            log = stack.enter_context((tmp_path / f"replica-{name}.log").open("wb"))
            urls.append(stack.enter_context(supervised_web(launch_web(envs[-1], log), envs[-1],
                                                           tmp_path / f"replica-{name}.log", startup=300)))
        page, search = "/docs/billing/refunds", "/docs/search?q=annual+refunded"
        assert httpx.get(urls[1] + page, timeout=60).status_code == 200
        assert "Refund windows" in httpx.get(urls[1] + search, timeout=60).text
        assert "/docs/billing/refunds.md" in httpx.get(urls[1] + "/llms.txt", timeout=60).text

        refunds = first / "billing" / "refunds.mdx"  # restricted on replica a's copy only, and published from there
        refunds.write_text(refunds.read_text().replace("title: Refunds\n", "title: Refunds\naccess: [staff]\n"))
        run = cli_ingest(envs[0]).wait()
        assert run.returncode == 0, "\n".join(run.lines)

        published = time.monotonic()
        while httpx.get(urls[1] + page, timeout=60).status_code != 404 and time.monotonic() - published < 30:
            time.sleep(0.5)
        assert httpx.get(urls[1] + page, timeout=60).status_code == 404
        assert "Refund windows" not in httpx.get(urls[1] + search, timeout=60).text
        # the agents' files too: public pages only, by the shared index, not by this replica's copy
        assert "/docs/billing/refunds.md" not in httpx.get(urls[1] + "/llms.txt", timeout=60).text
        assert "Annual plans can be refunded" not in httpx.get(urls[1] + "/llms-full.txt", timeout=60).text
        assert httpx.get(urls[1] + page + ".md", timeout=60).status_code == 404
        staff = {"X-Groups": "staff"}
        assert httpx.get(urls[1] + page, headers=staff, timeout=60).status_code == 200  # staff still read it
        assert "Refund windows" in httpx.get(urls[1] + search, headers=staff, timeout=60).text
