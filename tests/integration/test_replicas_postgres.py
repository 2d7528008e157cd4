"""Two replicas sharing one PostgreSQL answer log: what several machines behind a load balancer must agree on.

Two real `python -m web` processes, each with a DATA_DIR of its own (so no
file of one is visible to the other), one Chroma server and one
DATABASE_URL. A thread started on one continues on the other (its id verifies
there, and the follow-up is rewritten from the turn the first one stored),
staff on either see both answers, and a client's question budget is one
budget whichever replica it reaches.
"""

from __future__ import annotations

import signal
from contextlib import ExitStack

import httpx
import pytest

from tests.chroma_server import chroma_server, write_site
from tests.live_server import environment, launch_web, link_models, supervised_web, web_server

pytestmark = pytest.mark.integration

QUESTION = "How many times does Ferrydeck retry a failed delivery?"
STAFF = {"X-Groups": "staff"}


def test_two_replicas_share_threads_the_answer_log_and_rate_limits(tmp_path, model_dir, postgres_url):
    site = write_site(tmp_path / "site")
    with chroma_server(tmp_path / "chroma") as chroma_url:
        envs = []
        for name in ("one", "two"):
            link_models(tmp_path / name, model_dir)
            env = environment(site, tmp_path / name, chroma_url=chroma_url)
            env = {k: v for k, v in env.items() if k != "THREAD_SECRET"}  # each would sign with its own file
            envs.append(env | {"DATABASE_URL": postgres_url, "RATE_LIMIT": "5/hour"})
        with web_server(envs[0], tmp_path / "one.log") as one, web_server(envs[1], tmp_path / "two.log") as two:
            first = httpx.post(f"{one}/api/ask", json={"question": QUESTION}, timeout=120)
            assert first.status_code == 200 and first.json()["state"] == "answered"
            thread, owner = first.json()["thread_id"], first.json()["owner_token"]

            follow = httpx.post(f"{two}/api/ask", json={"question": "Why?", "thread_id": thread, "owner_token": owner},
                                timeout=120)
            assert follow.status_code == 200, follow.text  # the other replica's signature verifies here
            body = follow.json()
            assert body["thread_id"] == thread and body["asked"] == "Why?"  # the same thread, not a fork
            assert body["rewritten"] and "retry a failed delivery" in body["question"]  # it saw the first turn
            assert not (tmp_path / "one" / "thread_secret").exists() and not (tmp_path / "two" / "thread_secret").exists()

            ids = {first.json()["answer_id"], body["answer_id"]}
            for url in (one, two):
                listed = httpx.get(f"{url}/answers", headers=STAFF, timeout=30)
                assert listed.status_code == 200 and all(f"/answers/{i}" in listed.text for i in ids)
                assert httpx.get(f"{url}/readyz", timeout=30).json()["checks"]["answer_log"] == {"status": "ok"}

            # Two questions spent; three more of the budget of 5 whichever replica takes them, then none on either.
            spent = [httpx.post(f"{url}/api/ask", json={"question": QUESTION}, timeout=120).status_code
                     for url in (one, two, one)]
            assert spent == [200, 200, 200]
            refused = [httpx.post(f"{url}/api/ask", json={"question": QUESTION}, timeout=120) for url in (two, one)]
            assert [r.status_code for r in refused] == [429, 429] and all(r.headers.get("retry-after") for r in refused)


def test_a_replica_killed_mid_traffic_loses_no_answer_it_acknowledged(tmp_path, model_dir, postgres_url):
    # Every 200 a visitor got was written to the shared database before the response went out: after a kill -9
    # of the replica that served them, the other replica's staff view still has each of those answers, and
    # feedback on one of them (given on the dead replica) too.
    site = write_site(tmp_path / "site")
    with chroma_server(tmp_path / "chroma") as chroma_url, ExitStack() as stack:
        envs, processes, urls = [], [], []
        for name in ("one", "two"):
            link_models(tmp_path / name, model_dir)
            env = environment(site, tmp_path / name, chroma_url=chroma_url)
            envs.append({k: v for k, v in env.items() if k != "THREAD_SECRET"} | {"DATABASE_URL": postgres_url})
        for env, name in zip(envs, ("one", "two"), strict=True):
            log = tmp_path / f"{name}.log"
            processes.append(launch_web(env, stack.enter_context(log.open("wb"))))
            urls.append(stack.enter_context(supervised_web(processes[-1], env, log)))
        one, two = urls
        acknowledged = []
        for n in range(4):
            reply = httpx.post(f"{one}/api/ask", json={"question": f"{QUESTION} ({n})"}, timeout=120)
            assert reply.status_code == 200
            acknowledged.append(reply.json()["answer_id"])
        rated = httpx.post(f"{one}/api/answers/{acknowledged[0]}/feedback", json={"rating": "down", "reason": "dead"},
                           timeout=30)
        assert rated.status_code == 201
        processes[0].send_signal(signal.SIGKILL)
        processes[0].wait(timeout=30)
        listed = httpx.get(f"{two}/answers", params={"ids": ",".join(acknowledged)}, headers=STAFF, timeout=30)
        assert listed.status_code == 200 and all(f"/answers/{i}" in listed.text for i in acknowledged)
        audit = httpx.get(f"{two}/answers/{acknowledged[0]}", headers=STAFF, timeout=30)
        assert audit.status_code == 200 and "dead" in audit.text  # the rating given on the killed replica
