"""Publish-to-answerable: `make ingest` against a running `python -m web`, timed from the visitor's side.

For each round an author adds a page with a new fact and runs `make ingest`
(handed to the server); a visitor asks about the fact in a loop. Reported:
how long `make ingest` took, when its access step was live, and the time from
`make ingest` returning to the first answer that states the fact (counting
only answers asked after it returned). The server serves a copy of content/,
embedded Chroma or a `chroma run` server.
"""

from __future__ import annotations

import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

from tests.chroma_server import chroma_server
from tests.live_server import environment, link_models, make_ingest, web_server

PAGE = """---
title: Quokka relay {n}
---

# Quokka relay {n}

## Relay window

Quokka relay {n} forwards events to the archive every {minutes} minutes.
"""


def _round(env: dict[str, str], site: Path, url: str, n: int) -> dict[str, float]:
    minutes = 100 + n
    (site / "guides" / f"quokka-{n}.mdx").write_text(PAGE.format(n=n, minutes=minutes), encoding="utf-8")
    run = make_ingest(env).wait()
    if run.returncode != 0:
        raise RuntimeError("make ingest failed: " + "\n".join(run.lines[-5:]))
    fact = f"every {minutes} minutes"
    with httpx.Client(base_url=url, timeout=60) as client:
        deadline = run.returned + 60
        while time.monotonic() < deadline:
            answer = client.post("/api/ask", json={"question": f"How often does quokka relay {n} forward events?"})
            if answer.status_code == 200 and fact in answer.text:
                break
        answered = time.monotonic()
    return {"make_ingest_s": run.returned - run.started,
            "access_live_s": (run.access_at or run.returned) - run.started,
            "publish_to_answerable_s": answered - run.returned}


def bench_publish(work: Path, content: Path, model_dir: Path, *, rounds: int = 3) -> dict[str, Any]:
    """Medians over `rounds` publishes, for embedded Chroma and for a Chroma server."""
    results: dict[str, Any] = {}
    for mode in ("embedded", "chroma_server"):
        root = work / f"publish-{mode}"
        site, data = root / "site", root / "data"
        shutil.copytree(content, site)
        link_models(data, model_dir)
        if mode == "embedded":
            env = environment(site, data)
            with web_server(env, root / "web.log", startup=600) as url:
                runs = [_round(env, site, url, n) for n in range(rounds)]
        else:
            with chroma_server(root / "chroma") as chroma_url:
                env = environment(site, data, chroma_url=chroma_url)
                with web_server(env, root / "web.log", startup=600) as url:
                    runs = [_round(env, site, url, n) for n in range(rounds)]
        results[mode] = {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0]} | {"rounds": rounds}
    return results
