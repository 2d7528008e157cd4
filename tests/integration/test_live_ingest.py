"""Authors publish while visitors ask: `make ingest` against a running `python -m web`, no 5xx, no restart.

Issue 14, item 1 (with item 2's ordering), end to end: the real server in its
own process (embedded Chroma, then a `chroma run` server), `make ingest` in
another with a new page, a changed fact, a newly restricted page and a
deleted page, while a client asks in a loop. Asserted: no request fails;
nothing restricted or deleted is served to an anonymous visitor by a request
started after the ingest printed its access step; every change is visible
within 10 s of `make ingest` returning. The publish-to-answerable time is
written to test-artifacts/live-ingest-<mode>.json. A killed `make ingest` and
a broken site config leave the server answering.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.chroma_server import SITE_PAGES, chroma_server, edit, write_site
from tests.conftest import REPO
from tests.live_server import HEADER, environment, link_models, make_ingest, web_server

pytestmark = pytest.mark.integration

LEMUR = """---
title: Lemur batching
---

# Lemur batching

## Batch size

Lemur batches hold up to 17 events per request and flush every 2 seconds.
"""
OKAPI = """---
title: Okapi exports
---

# Okapi exports

## Schedule

Okapi exports run every night at 03:15 UTC and keep 11 archives.
"""
NEW_Q, NEW_FACT = "When do okapi exports run?", "03:15 UTC"
CHANGED_Q = "How many times does Ferrydeck retry a failed delivery?"
RESTRICTED_Q, RESTRICTED_FACT = "Can annual plans be refunded?", "30 days"
DELETED_Q, DELETED_FACT = "How many events does a lemur batch hold?", "17 events"
DEADLINE = 10.0


@dataclass(frozen=True)
class Probe:
    name: str
    method: str
    path: str
    body: dict | None = None
    groups: str = ""


@dataclass(frozen=True)
class Seen:
    probe: Probe
    started: float
    ended: float
    status: int  # 0 = the request itself failed
    text: str


PROBES = [Probe("new", "POST", "/api/ask", {"question": NEW_Q}), Probe("changed", "POST", "/api/ask", {"question": CHANGED_Q}),
          Probe("restricted", "POST", "/api/ask", {"question": RESTRICTED_Q}),
          Probe("restricted-staff", "POST", "/api/ask", {"question": RESTRICTED_Q}, "staff"),
          Probe("deleted", "POST", "/api/ask", {"question": DELETED_Q}),
          Probe("viewer-restricted", "GET", "/docs/billing/refunds"), Probe("viewer-deleted", "GET", "/docs/guides/lemur"),
          Probe("search-restricted", "GET", "/docs/search?q=annual+plans+refunded")]


class Visitors:
    """A client asking every probe in a loop, in two threads, recording every response."""

    def __init__(self, url: str) -> None:
        self.url, self.seen, self._stop = url, [], threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._loop, args=(n,), daemon=True) for n in range(2)]

    def __enter__(self) -> Visitors:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _loop(self, offset: int) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            n = offset
            while not self._stop.is_set():
                self.ask(client, PROBES[n % len(PROBES)])
                n += 1

    def ask(self, client: httpx.Client, probe: Probe) -> Seen:
        started = time.monotonic()
        headers = {HEADER: probe.groups} if probe.groups else {}
        try:
            response = client.request(probe.method, probe.path, json=probe.body, headers=headers)
            status, text = response.status_code, response.text
            if probe.method == "POST" and status == 200:
                text = " ".join(c["text"] for c in response.json()["claims"])  # the answer, not the echoed question
        except httpx.HTTPError as exc:
            status, text = 0, repr(exc)
        seen = Seen(probe, started, time.monotonic(), status, text)
        with self._lock:
            self.seen.append(seen)
        return seen

    def errors(self) -> list[Seen]:
        expected = {"viewer-restricted": (200, 404), "viewer-deleted": (200, 404)}
        return [s for s in self.seen if s.status not in expected.get(s.probe.name, (200,))]

    def latest(self, name: str, after: float) -> Seen | None:
        found = [s for s in self.seen if s.probe.name == name and s.started >= after]
        return found[-1] if found else None


def visible(visitors: Visitors, after: float) -> dict[str, bool]:
    """Which changes the latest answers started after `after` show."""
    def check(name: str, ok: Callable[[Seen], bool]) -> bool:
        seen = visitors.latest(name, after)
        return seen is not None and ok(seen)

    return {
        "new page": check("new", lambda s: NEW_FACT in s.text),
        "changed fact": check("changed", lambda s: "12 times" in s.text and "8 times" not in s.text),
        "restricted (chat)": check("restricted", lambda s: RESTRICTED_FACT not in s.text),
        "restricted (staff still read it)": check("restricted-staff", lambda s: RESTRICTED_FACT in s.text),
        "restricted (viewer)": check("viewer-restricted", lambda s: s.status == 404),
        "deleted (chat)": check("deleted", lambda s: DELETED_FACT not in s.text),
        "deleted (viewer)": check("viewer-deleted", lambda s: s.status == 404),
    }


@pytest.fixture(params=["embedded", "chroma-server"])
def live(request, tmp_path, model_dir) -> Iterator[dict]:
    site = write_site(tmp_path / "site", SITE_PAGES | {"guides/lemur.mdx": LEMUR})
    data = tmp_path / "data"
    link_models(data, model_dir)
    if request.param == "embedded":
        env = environment(site, data)
        with web_server(env, tmp_path / "web.log") as url:
            yield {"site": site, "env": env, "url": url, "mode": request.param, "log": tmp_path / "web.log"}
    else:
        with chroma_server(tmp_path / "chroma") as chroma_url:
            env = environment(site, data, chroma_url=chroma_url)
            with web_server(env, tmp_path / "web.log") as url:
                yield {"site": site, "env": env, "url": url, "mode": request.param, "log": tmp_path / "web.log"}


def test_make_ingest_while_serving_publishes_every_change_without_errors(live):
    site, url = live["site"], live["url"]
    with Visitors(url) as visitors:
        deadline = time.monotonic() + 60
        while not all(visitors.latest(p.name, 0) for p in PROBES):  # a baseline of every probe, before any change
            assert time.monotonic() < deadline, "the visitors got no answers"
            time.sleep(0.2)
        before = visible(visitors, 0)
        assert not before["new page"] and not before["restricted (viewer)"] and not before["deleted (viewer)"], before

        (site / "guides/okapi.mdx").write_text(OKAPI, encoding="utf-8")
        edit(site / "guides/retries.mdx", "up to 8 times", "up to 12 times")
        edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
        (site / "guides/lemur.mdx").unlink()
        run = make_ingest(live["env"]).wait()
        assert run.returncode == 0, "\n".join(run.lines)
        assert any("handed to it" in line for line in run.lines), run.lines  # the server did the writing
        assert run.access_at is not None, run.lines

        shown: dict[str, bool] = {}
        while time.monotonic() < run.returned + DEADLINE:
            shown = visible(visitors, run.returned)
            if all(shown.values()):
                break
            time.sleep(0.05)
        assert all(shown.values()), f"not visible within {DEADLINE:.0f} s of make ingest returning: {shown}"

    errors = visitors.errors()
    assert errors == [], [(s.probe.name, s.status, s.text[:200]) for s in errors[:5]]
    anonymous_after = [s for s in visitors.seen if s.started >= run.access_at and not s.probe.groups]
    leaked = [s for s in anonymous_after if RESTRICTED_FACT in s.text or DELETED_FACT in s.text
              or (s.probe.name.startswith("viewer") and s.status != 404)]
    assert leaked == [], [(s.probe.name, s.status, s.text[:120]) for s in leaked[:5]]

    answered = [s for s in visitors.seen if s.probe.name == "new" and NEW_FACT in s.text]
    first = min(answered, key=lambda s: s.ended)
    figures = {"mode": live["mode"], "requests": len(visitors.seen), "errors": len(errors),
               "make_ingest_seconds": round(run.returned - run.started, 2),
               "access_step_after_start_seconds": round(run.access_at - run.started, 2),
               "publish_to_answerable_seconds": round(max(0.0, first.ended - run.returned), 3),
               "first_answer_started_before_return": first.started < run.returned}
    out = REPO / "test-artifacts" / f"live-ingest-{live['mode']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")


def test_a_killed_or_failed_ingest_leaves_the_server_answering(live):
    site, url = live["site"], live["url"]
    with Visitors(url) as visitors:
        for n in range(6):  # enough new text that the run is still embedding when its CLI is killed
            (site / f"guides/extra-{n}.mdx").write_text(OKAPI.replace("Okapi", f"Okapi{n}").replace("03:15", f"04:{n}0"))
        run = make_ingest(live["env"])
        deadline = time.monotonic() + 60
        while not any("handed to it" in line for line in run.lines):
            assert time.monotonic() < deadline and run.process.poll() is None, run.lines
            time.sleep(0.02)
        os.killpg(run.process.pid, signal.SIGKILL)  # kill -9 make and the CLI it started, mid-run
        run.process.wait()
        # The server carries the handed-off run to the end: the new pages become answerable anyway.
        with httpx.Client(base_url=url, timeout=30) as client:
            deadline = time.monotonic() + 60
            while "04:50 UTC" not in visitors.ask(client, Probe("extra", "POST", "/api/ask", {"question": "When do okapi5 exports run?"})).text:
                assert time.monotonic() < deadline, "the killed CLI's run was not finished by the server"
                time.sleep(0.2)
        (site / "site.toml").write_text("[site\nbroken", encoding="utf-8")  # the next run fails to load the site
        failed = make_ingest(live["env"]).wait()
        assert failed.returncode == 2 and any("error:" in line for line in failed.lines), failed.lines
        with httpx.Client(base_url=url, timeout=30) as client:
            assert visitors.ask(client, PROBES[1]).status == 200
    errors = visitors.errors()
    assert errors == [], [(s.probe.name, s.status, s.text[:200]) for s in errors[:5]]
    assert any(s.probe.name == "changed" and "8 times" in s.text for s in visitors.seen)  # the last good index answers


def test_a_full_rebuild_while_serving_switches_without_errors(live):
    site, url = live["site"], live["url"]
    with Visitors(url) as visitors:
        edit(site / "guides/retries.mdx", "up to 8 times", "up to 12 times")
        run = make_ingest(live["env"], "FULL=1").wait()
        assert run.returncode == 0 and any("full rebuild" in line for line in run.lines), run.lines
        shown: dict[str, bool] = {}
        while time.monotonic() < run.returned + DEADLINE:
            shown = visible(visitors, run.returned)
            if shown["changed fact"]:
                break
            time.sleep(0.05)
        assert shown["changed fact"], shown
    errors = visitors.errors()
    assert errors == [], [(s.probe.name, s.status, s.text[:200]) for s in errors[:5]]
