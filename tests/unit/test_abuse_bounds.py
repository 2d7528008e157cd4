"""Abuse bounds without a network: budgets, retention, the thread cap, client addresses, group counts (issue 26).

The budgets are checked against every limiter (the answer log's SQLite table,
its PostgreSQL one and the in-memory one) with the same tests; the database
ones also across two instances on one store from several threads at once, as
two workers or two replicas would.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import pytest
from starlette.testclient import TestClient

from answer.log.ratelimit import Limiter, MemoryLimiter, Rate, SQLiteLimiter, parse_rate
from answer.log.retention import DAY, PRUNE_EVERY, Retention, parse_retention
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from retrieval.records import MAX_GROUPS, acl_filter
from retrieval.search import DenseRetriever
from retrieval.viewer import Viewer
from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.clients import client_address
from web.identity import IdentityError, parse_groups
from web.settings import Settings
from web.thread import MAX_TURNS

QUOTE = "Refunds are available within 14 days of the charge."
GOOD = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": QUOTE}], "claim": QUOTE}]})
MINUTE = Rate(3, 60.0)


def answerer(audit: SQLiteAnswerLog | None, replies: int = 1) -> Answerer:
    embedder = HashEmbedder()
    return Answerer(DenseRetriever(MemoryIndex(embedder, [REFUNDS]), embedder, floor=-1.0),
                    ScriptedGenerator(*[GOOD] * replies), audit=audit)


# -- budgets ------------------------------------------------------------------------------------------

@pytest.fixture(params=["sqlite", "postgres", "memory"])
def limiter(request, tmp_path):
    if request.param == "postgres":
        from answer.log.postgres import PostgresAnswerLog

        answer_log = PostgresAnswerLog(request.getfixturevalue("postgres_url"))
        yield answer_log.limiter()
        answer_log.close()
        return
    yield SQLiteLimiter(tmp_path / "answers.sqlite3") if request.param == "sqlite" else MemoryLimiter()


def test_a_budget_allows_its_burst_then_says_how_long_to_wait(limiter):
    now = 1_000_000.0
    assert [limiter.take("ask:a", MINUTE, now) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("ask:a", MINUTE, now) == pytest.approx(20.0)  # one request refills every 60 / 3 s
    assert limiter.take("ask:b", MINUTE, now) == 0.0  # another client has its own budget
    assert limiter.take("ask:a", MINUTE, now + 20.0) == 0.0
    assert limiter.take("ask:a", MINUTE, now + 20.0) > 0


def test_checking_a_budget_without_spending_it(limiter):
    now = 1_000_000.0
    for _ in range(5):
        assert limiter.take("ask:a", MINUTE, now, consume=False) == 0.0
    assert [limiter.take("ask:a", MINUTE, now) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("ask:a", MINUTE, now, consume=False) > 0


def test_two_limiters_on_one_database_share_every_budget_even_at_once(make_log):
    workers = [make_log().limiter(), make_log().limiter()]  # two workers on one file, or two replicas on one database
    rate, now, allowed = Rate(20, 60.0), 1_000_000.0, []

    def client(limiter: Limiter) -> None:
        allowed.extend(1 for _ in range(10) if limiter.take("ask:10.0.0.1", rate, now) == 0.0)

    threads = [threading.Thread(target=client, args=(workers[n % 2],)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(allowed) == 20  # 60 attempts, exactly the burst of 20 went through


def test_rate_limit_and_retention_settings_are_on_by_default_and_checked():
    settings = Settings.from_env({}, dotenv=False)
    assert settings.rate_limit == Rate(30, 60.0) and str(settings.rate_limit) == "30/minute"
    assert settings.log_retention == Retention(days=90.0, answers=20_000)
    assert Settings.from_env({"RATE_LIMIT": "off", "LOG_RETENTION": "off"}, dotenv=False).rate_limit is None
    assert parse_rate("100/hour") == Rate(100, 3600.0) and parse_rate("5 / seconds") == Rate(5, 1.0)
    assert parse_retention("30d") == Retention(days=30.0, answers=None)
    assert parse_retention("500, 7d") == Retention(days=7.0, answers=500)
    with pytest.raises(ValueError, match="RATE_LIMIT must be .* got '30 per minute'"):
        parse_rate("30 per minute")
    with pytest.raises(ValueError, match="LOG_RETENTION must be .*the term '90days'"):
        parse_retention("90days")
    with pytest.raises(ValueError, match="READ_TIMEOUT must be"):
        Settings.from_env({"READ_TIMEOUT": "0"}, dotenv=False)


# -- retention ----------------------------------------------------------------------------------------

def test_the_log_prunes_itself_as_it_is_written_and_takes_turns_and_feedback_along(make_log):
    audit = make_log(retention=Retention(days=30, answers=40))
    first = answerer(audit).ask("How long are refunds available?", Viewer.anonymous())
    now = time.time()
    old = replace(first, id="old", created=now - 31 * DAY)
    audit.record(old)
    audit.add_turn("thread-old", "old", "q", "q", frozenset({"public"}))
    assert audit.add_feedback("old", "down", "spam " * 50, frozenset({"public"}))
    for n in range(PRUNE_EVERY):
        audit.record(replace(first, id=f"a{n:03d}", created=now + n))
        audit.add_turn("thread-new", f"a{n:03d}", "q", "q", frozenset({"public"}))
    kept = audit.search(limit=10_000)
    assert len(kept) < PRUNE_EVERY + 2  # pruned while writing, without anyone calling prune
    assert audit.get("old") is None and audit.feedback("old") == [] and audit.thread("thread-old") == []
    audit.prune()
    kept = audit.search(limit=10_000)
    assert [row.id for row in kept] == [f"a{n:03d}" for n in reversed(range(PRUNE_EVERY - 40, PRUNE_EVERY))]
    assert [t.answer_id for t in audit.thread("thread-new")] == [row.id for row in reversed(kept)]


# -- threads ------------------------------------------------------------------------------------------

def test_a_thread_at_its_cap_sends_the_next_question_to_a_new_thread(tmp_path):
    audit = SQLiteAnswerLog(tmp_path / "answers.sqlite3")
    client = TestClient(create_app(Settings(data_dir=tmp_path), answerer=answerer(audit, replies=3 * MAX_TURNS)))
    first = client.post("/api/ask", json={"question": "How long are refunds available?"}).json()
    tid, mine = first["thread_id"], {"owner_token": first["owner_token"]}  # the asker's own follow-ups stay in it
    for _ in range(MAX_TURNS - 1):
        assert client.post("/api/ask", json={"question": "And refunds?", "thread_id": tid} | mine).json()["thread_id"] == tid
    next_thread = client.post("/api/ask", json={"question": "And refunds?", "thread_id": tid} | mine).json()["thread_id"]
    assert next_thread != tid
    assert len(audit.thread(tid)) == MAX_TURNS and len(audit.thread(next_thread)) == 1


# -- client addresses ---------------------------------------------------------------------------------

def scope(peer: str, *headers: tuple[bytes, bytes]) -> dict[str, object]:
    return {"client": (peer, 5000), "headers": list(headers)}


def test_the_client_is_the_socket_peer_or_the_entry_the_trusted_proxy_appended():
    assert client_address(scope("192.0.2.7")) == "192.0.2.7"
    assert client_address(scope("192.0.2.7", (b"x-forwarded-for", b"203.0.113.9"))) == "192.0.2.7"  # not trusted
    forged = scope("10.0.0.2", (b"x-forwarded-for", b"1.2.3.4, 203.0.113.9"))
    assert client_address(forged, "X-Forwarded-For") == "203.0.113.9"  # the left entry came from the client
    copies = scope("10.0.0.2", (b"x-forwarded-for", b"1.2.3.4"), (b"x-forwarded-for", b"203.0.113.10"))
    assert client_address(copies, "X-Forwarded-For") == "203.0.113.10"
    assert client_address(scope("10.0.0.2"), "X-Forwarded-For") == "10.0.0.2"  # not through the proxy
    assert client_address(scope("2001:db8:1:2:aaaa::1")) == client_address(scope("2001:db8:1:2:ffff::9")) == "2001:db8:1:2::/64"
    assert client_address(scope("::ffff:192.0.2.7")) == "192.0.2.7"


# -- item 10: the group limit counts named groups ------------------------------------------------------

def test_at_most_64_groups_means_64_named_groups_besides_public():
    named = [f"team_{n}" for n in range(MAX_GROUPS)]
    viewer = Viewer.of(parse_groups(",".join(named).encode()))
    assert len(viewer.groups) == MAX_GROUPS + 1 and acl_filter(viewer.groups)  # public comes on top
    assert parse_groups(",".join(["public", *named]).encode())  # naming public does not count against the limit
    with pytest.raises(IdentityError, match="names 65 groups besides public; the limit is 64"):
        parse_groups(",".join([*named, "one_more"]).encode())
