"""Bounded load on the real server: `python -m web` in a subprocess, requests from this process.

A fixed number of requests at a fixed concurrency against 127.0.0.1, then it
stops; reports requests/s, latency p50/p95, errors and the server's memory
before and after (growth hints at leaks).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.processes import free_port

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


async def _fire(base: str, requests: int, concurrency: int) -> tuple[list[float], int]:
    latencies: list[float] = []
    errors = 0
    queue = list(range(requests))
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
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


def run_load(*, data_dir: Path, content_dir: Path, requests: int, concurrency: int) -> dict[str, Any]:
    port = free_port()
    repo = Path(__file__).resolve().parents[2]
    model = repo / ".data" / "models" / "all-MiniLM-L6-v2"
    env = dict(os.environ, DATA_DIR=str(data_dir), CONTENT_DIR=str(content_dir), PORT=str(port), HOST="127.0.0.1",
               EMBED_MODEL=os.environ.get("EMBED_MODEL", str(model)))
    server = subprocess.Popen([sys.executable, "-m", "web"], env=env, cwd=repo,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            return {"error": "server did not start"}
        asyncio.run(_fire(base, concurrency, concurrency))  # warm-up round
        rss_before = _rss_mb(server.pid)
        started = time.perf_counter()
        latencies, errors = asyncio.run(_fire(base, requests, concurrency))
        elapsed = time.perf_counter() - started
        ordered = sorted(latencies)
        return {"requests": requests, "concurrency": concurrency, "errors": errors,
                "requests_per_s": round(requests / elapsed, 2),
                "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
                "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 1),
                "server_rss_mb_before": rss_before, "server_rss_mb_after": _rss_mb(server.pid)}
    finally:
        server.terminate()
        server.wait(timeout=30)
