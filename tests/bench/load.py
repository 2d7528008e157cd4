"""Bounded load on the real server: `python -m web` in a subprocess, requests from this process.

A fixed number of requests at a fixed concurrency against 127.0.0.1, then it
stops; reports requests/s, latency p50/p95, errors and the server's memory
before and after (growth hints at leaks). `run_workers` does the same
against `python -m web --workers N` over a `chroma run` server, for N = 1, 2, 4.
`ask_docs` over `/mcp` is timed beside `/api/ask` in the same run, one
request at a time, the same questions alternating (what MCP adds to an answer).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.processes import free_port

REPO = Path(__file__).resolve().parents[2]
QUESTIONS = [
    "How long do I have to ask for a refund?", "What is the maximum payload size?",
    "How many times is a failed delivery retried?", "Which TLS versions does the API accept?",
    "How do I rotate an API key?", "What does error FD-4291 mean?", "Is there a free plan?",
    "What is the capital of France?",
]


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def _tree_rss_mb(pid: int) -> float:
    """RSS of a process and its children (uvicorn's workers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = [int(p) for p in children.read_text().split()] if children.exists() else []
    return round(_rss_mb(pid) + sum(_rss_mb(k) for k in kids), 1)


async def _fire(base: str, requests: int, concurrency: int) -> tuple[list[float], int]:
    latencies: list[float] = []
    errors = 0
    queue = list(range(requests))
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        async def worker() -> None:
            nonlocal errors
            while queue:
                n = queue.pop()
                started = time.perf_counter()
                response = await client.post("/api/ask", json={"question": QUESTIONS[n % len(QUESTIONS)]})
                latencies.append(time.perf_counter() - started)
                errors += response.status_code != 200
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, errors


@contextmanager
def _server(env: dict[str, str], args: Sequence[str], ready_lines: int, log: Path, startup: float) -> Iterator[tuple[str, int]]:
    """`python -m web ARGS` until the block ends; yields its base URL and pid once `ready_lines` apps started."""
    port = free_port()
    model = REPO / ".data" / "models" / "all-MiniLM-L6-v2"
    # One client firing hundreds of questions is what RATE_LIMIT refuses; this measures throughput, so it is off.
    env = dict(os.environ, **env, PORT=str(port), HOST="127.0.0.1", EMBED_MODEL=os.environ.get("EMBED_MODEL", str(model)),
               RATE_LIMIT="off")
    with log.open("wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "web", *args], env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + startup
            while log.read_text(errors="replace").count("Application startup complete") < ready_lines:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start (exit {server.poll()}; see {log})")
                time.sleep(0.5)
            yield base, server.pid
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()


def _measure(base: str, pid: int, requests: int, concurrency: int) -> dict[str, Any]:
    asyncio.run(_fire(base, max(concurrency, 8), concurrency))  # warm-up round
    rss_before = _tree_rss_mb(pid)
    started = time.perf_counter()
    latencies, errors = asyncio.run(_fire(base, requests, concurrency))
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {"requests": requests, "concurrency": concurrency, "errors": errors,
            "requests_per_s": round(requests / elapsed, 2),
            "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
            "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 1),
            "server_rss_mb_before": rss_before, "server_rss_mb_after": _tree_rss_mb(pid)}


MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}


def _agents_beside_api(base: str, rounds: int = 3) -> dict[str, Any]:
    """p50 of `POST /api/ask` and of `ask_docs` over `/mcp`, each question asked both ways in turn."""
    api: list[float] = []
    mcp: list[float] = []
    with httpx.Client(base_url=base, timeout=120) as client:
        for n in range(rounds * len(QUESTIONS)):
            question = QUESTIONS[n % len(QUESTIONS)]
            started = time.perf_counter()
            asked = client.post("/api/ask", json={"question": question})
            api.append(time.perf_counter() - started)
            started = time.perf_counter()
            called = client.post("/mcp", headers=MCP_HEADERS, json={
                "jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "ask_docs", "arguments": {"question": question}}})
            mcp.append(time.perf_counter() - started)
            if asked.status_code != 200 or called.status_code != 200 or called.json()["result"].get("isError"):
                return {"error": f"/api/ask {asked.status_code}, /mcp {called.status_code}: {called.text[:200]}"}
    api_p50, mcp_p50 = sorted(api)[len(api) // 2], sorted(mcp)[len(mcp) // 2]
    return {"questions": len(api), "api_ask_p50_ms": round(api_p50 * 1000, 1),
            "mcp_ask_docs_p50_ms": round(mcp_p50 * 1000, 1), "mcp_over_api": round(mcp_p50 / api_p50, 3)}


def run_load(*, data_dir: Path, content_dir: Path, requests: int, concurrency: int) -> dict[str, Any]:
    env = {"DATA_DIR": str(data_dir), "CONTENT_DIR": str(content_dir)}
    try:
        with _server(env, [], 1, data_dir.parent / "web-load.log", startup=120) as (base, pid):
            return {**_measure(base, pid, requests, concurrency), "agents": _agents_beside_api(base)}
    except RuntimeError as exc:
        return {"error": str(exc)}


def run_workers(*, work: Path, content_dir: Path, workers: Sequence[int], requests: int, concurrency: int) -> dict[str, Any]:
    """Requests/s of `python -m web --workers N` for each N, all over one `chroma run` server the first run fills."""
    from tests.chroma_server import chroma_server

    results: dict[str, Any] = {"cpus": os.cpu_count()}
    data = work / "workers-data"
    data.mkdir(parents=True, exist_ok=True)
    with chroma_server(work / "workers-chroma", startup=120) as url:
        env = {"DATA_DIR": str(data), "CONTENT_DIR": str(content_dir), "CHROMA_URL": url}
        for n in workers:
            try:
                with _server(env, ["--ingest", "--workers", str(n)], n, work / f"web-workers-{n}.log", startup=600) as (base, pid):
                    results[f"workers_{n}"] = _measure(base, pid, requests, concurrency)
            except RuntimeError as exc:
                results[f"workers_{n}"] = {"error": str(exc)}
    return results
