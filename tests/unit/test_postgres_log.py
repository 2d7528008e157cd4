"""What only the PostgreSQL answer log does: its migrations, its unreachable server, its setting.

The behaviour it shares with the SQLite log is tested once for both (the
`make_log` tests in test_audit, test_abuse_bounds and test_gaps); these run
against a real throwaway cluster too (tests/postgres.py), never a fake.
"""

from __future__ import annotations

import threading

import psycopg
import pytest

from answer.errors import AuditUnreachableError
from answer.log.postgres import PostgresAnswerLog
from answer.log.postgres_schema import LATEST, MIGRATIONS, migrate
from answer.log.ratelimit import Rate
from answer.settings import AnswerSettings
from tests.processes import free_port
from web.failures import failure


def versions(url: str) -> list[tuple[int]]:
    with psycopg.connect(url) as connection:
        return connection.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()


def test_two_replicas_migrating_an_empty_database_at_the_same_moment_apply_each_migration_once(postgres_url):
    start, applied, errors = threading.Barrier(2), [], []

    def replica() -> None:
        try:
            with psycopg.connect(postgres_url) as connection:
                start.wait(timeout=10)
                applied.append(migrate(connection))
        except Exception as exc:  # noqa: BLE001 - the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=replica) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(applied) == [[], [version for version, _ in MIGRATIONS]]  # one replica applied all, the other none
    assert versions(postgres_url) == [(v,) for v, _ in MIGRATIONS]
    with psycopg.connect(postgres_url) as connection:
        assert migrate(connection) == []  # and a later start has nothing to do


def test_a_log_migrates_its_database_on_first_use(postgres_url):
    audit = PostgresAnswerLog(postgres_url)
    try:
        assert audit.search() == []
        assert versions(postgres_url)[-1] == (LATEST,)
    finally:
        audit.close()


def test_an_unreachable_database_is_the_answer_log_unavailable_with_a_fix_naming_database_url():
    url = f"postgresql://answers:hunter2@127.0.0.1:{free_port()}/answers"  # nothing listens there
    audit = PostgresAnswerLog(url, timeout=1.0)
    try:
        with pytest.raises(AuditUnreachableError) as caught:
            audit.check()
        assert "DATABASE_URL=postgresql://answers:***@127.0.0.1" in str(caught.value)
        assert "hunter2" not in str(caught.value)
        shown = failure(caught.value, "/readyz")
        assert shown.status == 503 and "answer log" in shown.message and "DATABASE_URL" in shown.fix
        assert audit.limiter().take("ask:a", Rate(1, 60.0), 0.0) == 0.0  # an outage never refuses a visitor
    finally:
        audit.close()


def test_database_url_is_empty_for_sqlite_a_postgresql_url_or_an_error_naming_the_fix():
    assert AnswerSettings.from_env({}, dotenv=False).database_url == ""
    for url in ("postgresql://u:p@db:5432/answers", "postgres://db/answers"):
        assert AnswerSettings.from_env({"DATABASE_URL": f" {url} "}, dotenv=False).database_url == url
    with pytest.raises(ValueError, match=r"DATABASE_URL must be empty .* or a PostgreSQL URL .*got 'mysql://u:\*\*\*@db/x'"):
        AnswerSettings.from_env({"DATABASE_URL": "mysql://u:secret@db/x"}, dotenv=False)
    assert "secret" not in repr(AnswerSettings.from_env({"DATABASE_URL": "postgresql://u:secret@db/x"}, dotenv=False))


def test_readyz_reports_an_unreachable_database_as_the_answer_log_failing_and_answers_still_come(tmp_path):
    from starlette.testclient import TestClient

    from answer.pipeline import Answerer
    from retrieval.search import DenseRetriever
    from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator
    from tests.memory_index import MemoryIndex
    from tests.unit.test_web import GOOD
    from web.app import create_app
    from web.failures import FIX_LOG_UNREACHABLE, LOG_UNAVAILABLE
    from web.settings import Settings

    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS])
    audit = PostgresAnswerLog(f"postgresql://answers@127.0.0.1:{free_port()}/answers", timeout=1.0)
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(GOOD), audit=audit)
    client = TestClient(create_app(Settings(data_dir=tmp_path, rate_limit=None), answerer=answerer, store=store))
    try:
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["answer_log"] == {"status": "failing", "problem": LOG_UNAVAILABLE,
                                                        "fix": FIX_LOG_UNREACHABLE}
        asked = client.post("/api/ask", json={"question": "How long are refunds available?"})
        assert asked.status_code == 200 and asked.json()["state"] == "answered"
    finally:
        audit.close()
