"""`make bench`'s replicas section, small: what /metrics counts is what the bench sent, and a publish reaches both.

Two real replicas over one Chroma server and a real PostgreSQL, measured one
then two at a time; each replica's scrape must count exactly the answers this
process asked of it (warm-ups included), and a page published from a third
process with only CHROMA_URL must be answered by both within the minute.
"""

from __future__ import annotations

import pytest

from tests.bench.replicas import run_replicas
from tests.chroma_server import write_site

pytestmark = pytest.mark.integration


def test_the_replicas_bench_sees_in_metrics_what_it_sent_and_a_publish_reaches_both(tmp_path, model_dir, postgres_url):
    result = run_replicas(work=tmp_path, content_dir=write_site(tmp_path / "content"), model_dir=model_dir,
                          database_url=postgres_url, requests=6, concurrency=2)
    metrics = result["metrics"]
    assert metrics["answers_counted"] == metrics["answers_sent"] and min(metrics["answers_sent"]) > 0
    for n in (1, 2):
        run = result[f"replicas_{n}"]
        assert run["replicas"] == n and run["errors"] == 0 and run["requests_per_s"] > 0 and run["p95_ms"] > 0
    publish = result["publish"]
    assert publish["replica_1_answerable_s"] < 60 and publish["replica_2_answerable_s"] < 60
