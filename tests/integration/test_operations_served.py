"""Operations on the real server: two worker processes over a Chroma server, scraped as an operator would.

`python -m web --workers 2` with `CHROMA_URL`, `METRICS_TOKEN` and
`LOG_FORMAT=json`: each answer is counted by whichever worker served it, and a
scrape of either worker reports the sum; every log line is JSON and names the
request id the response carried.
"""

from __future__ import annotations

import json

import httpx
import pytest

from tests.chroma_server import chroma_server, write_site
from tests.live_server import environment, link_models, web_server

pytestmark = pytest.mark.integration

QUESTION = "How many times does Ferrydeck retry a failed delivery?"
TOKEN = "operator-scrape-token-42"


def answered(text: str) -> float:
    return next(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith('docs_answers_total{state="answered"}'))


def test_two_workers_are_counted_as_one_server_and_log_json_lines_with_request_ids(tmp_path, model_dir):
    data = tmp_path / "data"
    link_models(data, model_dir)
    with chroma_server(tmp_path / "chroma") as chroma_url:
        env = environment(write_site(tmp_path / "site"), data, chroma_url=chroma_url)
        env |= {"METRICS_TOKEN": TOKEN, "LOG_FORMAT": "json"}
        log = tmp_path / "web.log"
        with web_server(env, log, args=("--workers", "2")) as url:
            scrape = {"Authorization": f"Bearer {TOKEN}"}
            ids = []
            for n in range(6):  # new connections: the kernel spreads them over both workers
                with httpx.Client(base_url=url, timeout=120) as client:
                    reply = client.post("/api/ask", json={"question": QUESTION}, headers={"X-Request-ID": f"probe-{n:04d}-ok"})
                    assert reply.status_code == 200 and reply.json()["state"] == "answered"
                    ids.append(reply.headers["x-request-id"])
            assert ids == [f"probe-{n:04d}-ok" for n in range(6)]
            scrapes = [httpx.get(f"{url}/metrics", headers=scrape, timeout=30) for _ in range(4)]
            assert all(s.status_code == 200 for s in scrapes)
            assert {answered(s.text) for s in scrapes} == {6.0}  # whichever worker is scraped, all six
            assert "docs_index_chunks" in scrapes[0].text and "docs_index_up 1.0" in scrapes[0].text
            assert httpx.get(f"{url}/metrics", timeout=30).status_code == 403
            assert httpx.get(f"{url}/healthz", timeout=30).json() == {"status": "alive"}
            assert httpx.get(f"{url}/readyz", timeout=30).json()["status"] == "ok"

        lines = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("{")]
        records = [json.loads(line) for line in lines]
        assert records and all({"time", "level", "logger", "message", "request_id"} <= set(r) for r in records)
        access = [r for r in records if r["logger"] == "uvicorn.access" and "/api/ask" in r["message"]]
        assert {r["request_id"] for r in access} == set(ids)  # uvicorn's access lines name the request too
