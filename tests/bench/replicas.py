"""Replicas over the shared stores: one and two `python -m web` over one Chroma server and one PostgreSQL.

The same run measures requests/s and latency against one replica, then
against two at once (half the clients on each, as a load balancer spreads
them); scrapes both replicas' `/metrics` and compares the answers they
counted with the requests this process sent; then publishes a new page from
a third process that runs no server (a CI job: its own DATA_DIR, only
CHROMA_URL) and times when each replica first answers with the new fact.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx

from tests.chroma_server import chroma_server
from tests.live_server import cli_ingest, environment, launch_web, link_models, supervised_web

from .load import QUESTIONS

TOKEN = "bench-scrape-token"
PAGE = """---
title: Quokka relay
---

# Quokka relay

## Relay window

Quokka relay forwards events to the archive every {minutes} minutes.
"""


def answers_counted(url: str) -> int:
    """The answers a replica's /metrics says it finished, every state together."""
    text = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30).text
    return round(sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                     if line.startswith("docs_answers_total{")))


async def _fire(urls: list[str], requests: int, concurrency: int) -> tuple[list[float], int, dict[str, int]]:
    """`requests` questions from `concurrency` clients, client i on replica i mod len(urls)."""
    latencies: list[float] = []
    errors = 0
    sent = dict.fromkeys(urls, 0)
    queue = list(range(requests))

    async def client(url: str) -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=url, timeout=300) as http:
            while queue:
                n = queue.pop()
                started = time.perf_counter()
                reply = await http.post("/api/ask", json={"question": QUESTIONS[n % len(QUESTIONS)]})
                latencies.append(time.perf_counter() - started)
                sent[url] += 1
                errors += reply.status_code != 200

    await asyncio.gather(*(client(urls[i % len(urls)]) for i in range(concurrency)))
    return latencies, errors, sent


def measure(urls: list[str], requests: int, concurrency: int) -> dict[str, Any]:
    started = time.perf_counter()
    # A loop of its own, in a thread of its own: the caller may be running one already (a test after browser tests).
    with ThreadPoolExecutor(1) as pool:
        latencies, errors, sent = pool.submit(asyncio.run, _fire(urls, requests, concurrency)).result()
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {"replicas": len(urls), "requests": requests, "concurrency": concurrency, "errors": errors,
            "requests_per_s": round(requests / elapsed, 2), "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
            "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 1), "sent": list(sent.values())}


def publish(site: Path, work: Path, model_dir: Path, chroma_url: str, urls: list[str]) -> dict[str, Any]:
    """A new page published from a machine without a server; seconds until each replica answers with it."""
    minutes = 137
    (site / "guides" / "quokka.mdx").write_text(PAGE.format(minutes=minutes), encoding="utf-8")
    ci = work / "ci-job"
    link_models(ci, model_dir)
    run = cli_ingest(environment(site, ci, chroma_url=chroma_url)).wait()
    if run.returncode != 0:
        raise RuntimeError("the CI ingest failed: " + "\n".join(run.lines[-5:]))
    result: dict[str, Any] = {"ingest_s": round(run.returned - run.started, 2)}
    for n, url in enumerate(urls):
        with httpx.Client(base_url=url, timeout=120) as client:
            while time.monotonic() < run.returned + 60:
                reply = client.post("/api/ask", json={"question": "How often does the quokka relay forward events?"})
                if reply.status_code == 200 and f"every {minutes} minutes" in reply.text:
                    break
            result[f"replica_{n + 1}_answerable_s"] = round(time.monotonic() - run.returned, 2)
    return result


def run_replicas(*, work: Path, content_dir: Path, model_dir: Path, database_url: str, requests: int,
                 concurrency: int) -> dict[str, Any]:
    """One replica, then two, over one Chroma server and `database_url`; metrics checked; a publish timed."""
    root = work / "replicas"
    site = root / "site"
    shutil.copytree(content_dir, site)
    results: dict[str, Any] = {}
    with chroma_server(root / "chroma", startup=120) as chroma_url, ExitStack() as stack:
        envs, processes = [], []
        for n in (1, 2):
            data = root / f"replica-{n}"
            link_models(data, model_dir)
            env = environment(site, data, chroma_url=chroma_url)
            envs.append(env | {"DATABASE_URL": database_url, "METRICS_TOKEN": TOKEN, "RATE_LIMIT": "off"})
        urls: list[str] = []
        sent = [0, 0]  # questions this process sent each replica, warm-ups included

        def fire(count: int) -> dict[str, Any]:
            result = measure(urls, count, concurrency)
            for i, n in enumerate(result["sent"]):
                sent[i] += n
            return result

        for n, env in enumerate(envs, start=1):  # the first builds the index; the second starts on it
            log = root / f"replica-{n}.log"
            processes.append(launch_web(env, stack.enter_context(log.open("wb"))))
            urls.append(stack.enter_context(supervised_web(processes[-1], env, log, startup=600)))
            fire(concurrency)  # warm-up: models loaded, tables read
            results[f"replicas_{n}"] = fire(requests)
        results["metrics"] = {"answers_sent": sent, "answers_counted": [answers_counted(url) for url in urls]}
        results["publish"] = publish(site, root, model_dir, chroma_url, urls)
    return results
