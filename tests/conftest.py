"""Shared fixtures. Integration fixtures use the real model and Chroma; in CI a missing piece fails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parent.parent
CONTENT = REPO / "content"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require(condition: bool, reason: str) -> None:
    """Skip locally when a real component is missing; in CI that is a failure, not a skip."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The provisioned all-MiniLM-L6-v2 folder (sha256-verified)."""
    from retrieval.errors import ModelProvisionError
    from retrieval.provision import provision_default_model

    data_dir = Path(os.environ.get("DATA_DIR", REPO / ".data"))
    try:
        return provision_default_model(data_dir / "models")
    except ModelProvisionError as exc:
        require(False, f"embedding model not provisioned: {exc}")
        raise


@pytest.fixture(scope="session")
def real_embedder(model_dir: Path):
    from retrieval.embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(str(model_dir), model_id="all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def corpus():
    from ingest.corpus import load_corpus

    return load_corpus(CONTENT)


@pytest.fixture(scope="session")
def content_index(tmp_path_factory, corpus, real_embedder):
    """content/ indexed once per session into an embedded Chroma, with the real model."""
    from retrieval.indexer import sync_index
    from retrieval.store import ChromaStore

    store = ChromaStore(path=str(tmp_path_factory.mktemp("chroma")))
    sync_index(corpus, store, real_embedder)
    return store


# -- the answer log, in both of its databases ----------------------------------------------------------

@pytest.fixture(scope="session")
def postgres_cluster(tmp_path_factory):
    """A throwaway PostgreSQL cluster for the session (tests/postgres.py); in CI a missing server is a failure."""
    from tests.postgres import PostgresCluster, binaries

    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        require(False, f"psycopg is not installed ({exc}): pip install -c constraints.txt 'psycopg[binary]' psycopg-pool")
    found = binaries()
    require(found is not None, "PostgreSQL's initdb and postgres are not on PATH nor under /usr/lib/postgresql/*/bin "
                               "(apt-get install postgresql)")
    assert found is not None
    cluster = PostgresCluster(found)
    try:
        cluster.start()
    except Exception:
        cluster.stop()
        raise
    yield cluster
    cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster):
    """A fresh, empty database of the session's cluster, dropped after the test."""
    url = postgres_cluster.database()
    yield url
    postgres_cluster.drop(url)


@pytest.fixture(params=["sqlite", "postgres"])
def make_log(request, tmp_path):
    """Opens answer logs on one store, as workers or replicas sharing it would: a SQLite file, or a PostgreSQL database.

    Every log made in one test shares that test's file or database; the contract tests run once per kind.
    """
    from answer.log.sqlite import SQLiteAnswerLog

    opened = []
    if request.param == "sqlite":
        def make(**options):
            return SQLiteAnswerLog(tmp_path / "answers.sqlite3", **options)
        yield make
        return
    from answer.log.postgres import PostgresAnswerLog

    cluster = request.getfixturevalue("postgres_cluster")
    url = cluster.database()

    def make_postgres(**options):
        opened.append(PostgresAnswerLog(url, **options))
        return opened[-1]
    yield make_postgres
    for answer_log in opened:
        answer_log.close()
    cluster.drop(url)
