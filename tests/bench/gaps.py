"""What the content-gap report costs at the size of the answer log's retention window, and how well it groups.

A log of synthetic refusals (10k by default; the default retention keeps up
to 20k answers, of which refusals and rated-down answers are a part) is
written through the real log, each answer looking at real sections of
content/, and the report is timed in the two situations a server meets:

- steady state: the log writes each question's vector with its answer
  (`answer.reports.gap_index`, as the web app and `python -m answer` do), so the
  report embeds nothing, also after 1 % new answers; writing the log twice,
  with and without vectors, says what that costs each refused answer;
- a one-time backfill: a log written without vectors (from before they were
  written with answers) is reported on by the CLI, which embeds every
  question; then warm (nothing new), and the web page's first visit to the
  same backlog, which embeds at most `GAP_EMBED_PER_REQUEST` of them.

Reading and clustering are timed apart from embedding, since embedding is
what the vectors save and the model's speed is what a loaded machine
changes. Purity says how often an answer lands in a group whose most common
seeded topic is its own.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

TOPICS = ["a Terraform provider", "GDPR data processing", "a mobile app", "SAML with Okta", "a Zapier integration",
          "PagerDuty alerts", "a Go SDK", "HIPAA compliance", "EU data residency", "a status page", "SOC 2 reports",
          "Kafka as a destination", "GraphQL subscriptions", "a Slack app", "custom domains for the portal",
          "IP allow-listing", "a sandbox workspace", "invoices in euros", "a startup discount", "an on-premise install",
          "deleting a workspace", "two-factor recovery codes", "the changelog feed", "a Rust SDK", "mTLS to endpoints",
          "Azure Event Grid", "a CLI on Windows", "audit log exports", "bulk replays of events", "an uptime SLA credit",
          "a student plan", "a Postman collection", "OpenTelemetry traces", "a dark mode", "webhook payload encryption",
          "a Jira integration", "AWS PrivateLink", "a partner program", "Google Cloud Pub/Sub", "SCIM with OneLogin"]
ASKED = ["Is there {t}?", "Do you support {t}?", "How do I get {t}?", "Can I use {t} with Ferrydeck?",
         "Where are the docs for {t}?", "Does Ferrydeck offer {t} on the {p} plan?", "Any plans for {t}?",
         "How much does {t} cost?", "We need {t} for our {w} team, is it available?", "{t}: is it supported yet?"]
PLANS = ["Free", "Starter", "Growth", "Enterprise"]
WHO = ["security", "platform", "finance", "mobile", "data", "support", "EU", "legal", "ops", "web"]
CONTEXT = ["", "", "Hi! ", "Quick question: ", "Hello team, ", "Sorry if this is obvious: "]
DETAIL = ["", " Thanks!", " We have {n} endpoints.", " Our account is {n} days old.", " About {n} of us would use it."]


def questions(count: int, seed: int = 11) -> list[tuple[str, str]]:
    """`count` (topic, question) pairs in many phrasings: most are distinct (the worst case for embedding), some repeat."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        topic = rng.choice(TOPICS)
        out.append((topic, rng.choice(CONTEXT) + rng.choice(ASKED).format(t=topic, p=rng.choice(PLANS), w=rng.choice(WHO))
                    + rng.choice(DETAIL).format(n=rng.randint(2, 999))))
    return out


def bench_gap_report(work: Path, store: Any, embedder: Any, *, answers: int = 10_000) -> dict[str, Any]:
    import sqlite3

    from answer.log.retention import NO_RETENTION
    from answer.log.sqlite import SQLiteAnswerLog
    from answer.reports.clusters import cluster
    from answer.reports.gap_index import QuestionIndex
    from answer.reports.gaps import gap_report, gap_text
    from tests.fakes import CountingEmbedder
    from tests.gap_seed import DAY, refusal
    from web.staff import GAP_EMBED_PER_REQUEST

    now = time.time()
    site = "Ferrydeck Docs"
    looked = store.chunks(groups=["public"])
    asked = questions(answers + answers // 100)
    counting = CountingEmbedder(embedder)
    groups = frozenset({"public", "staff"})

    def write(audit: SQLiteAnswerLog, batch: list[tuple[str, str]], rng: random.Random, spread: float) -> tuple[float, dict[str, str]]:
        topic_of = {}
        began = time.perf_counter()
        for topic, question in batch:
            answer = refusal(question, created=now - rng.uniform(0, spread), chunks=rng.sample(looked, 3))
            audit.record(answer)
            topic_of[answer.id] = topic
        return time.perf_counter() - began, topic_of

    def timed(audit: SQLiteAnswerLog, limit: int | None = None) -> tuple[float, int, Any]:
        counting.texts.clear()
        began = time.perf_counter()
        result = gap_report(audit, store, counting, groups, since=now - 90 * DAY, site_name=site, limit=limit)
        return time.perf_counter() - began, len(counting.texts), result

    # Steady state: every vector written with its answer, through the log's own write path.
    steady = SQLiteAnswerLog(work / "gap-log-steady" / "answers.sqlite3", retention=NO_RETENTION)
    steady.index_gaps(QuestionIndex(counting, lambda: site))
    with_vectors_s, topic_of = write(steady, asked[:answers], random.Random(5), 80 * DAY)
    steady_s, steady_embedded, report = timed(steady)
    more_write_s, _ = write(steady, asked[answers:], random.Random(6), 0.0)
    more_s, more_embedded, _ = timed(steady)

    # A one-time backfill: the same answers in a log written without vectors.
    backlog = SQLiteAnswerLog(work / "gap-log-backlog" / "answers.sqlite3", retention=NO_RETENTION)
    plain_s, _ = write(backlog, asked[:answers], random.Random(5), 80 * DAY)
    cold_s, cold_embedded, _ = timed(backlog)
    warm_s, _, _ = timed(backlog)
    rows_s, rows = _timed(lambda: backlog.gap_rows(now - 90 * DAY))
    cached = backlog.question_vectors(embedder.id, [r.record.answer_id for r in rows])
    first: dict[str, bytes] = {}  # one vector per distinct question, as the report clusters them
    for row in rows:
        first.setdefault(gap_text(row.record.question, site), cached[row.record.answer_id][1])
    matrix = np.stack([np.frombuffer(v, dtype=np.float32) for v in first.values()])
    cluster_s, _ = _timed(lambda: cluster(matrix))
    with sqlite3.connect(backlog.path) as db:  # the backlog again, for the web page's first visit
        db.execute("DELETE FROM question_vectors")
    page_s, page_embedded, page = timed(backlog, GAP_EMBED_PER_REQUEST)
    return {"answers": answers, "distinct_questions": len(first),
            "steady_state": {
                "write_log_seconds": round(with_vectors_s, 1),
                "vector_ms_per_refused_answer": round(1000 * (with_vectors_s - plain_s) / answers, 1),
                "report_seconds": round(steady_s, 2), "questions_embedded_by_report": steady_embedded,
                "after_1pct_new_seconds": round(more_s, 2), "questions_embedded_after_1pct_new": more_embedded,
                "write_1pct_new_seconds": round(more_write_s, 2)},
            "backfill_once": {
                "write_log_without_vectors_seconds": round(plain_s, 1),
                "cli_seconds": round(cold_s, 2), "questions_embedded": cold_embedded,
                "questions_per_s": round(cold_embedded / cold_s, 1), "warm_seconds": round(warm_s, 2),
                "web_first_visit_seconds": round(page_s, 2), "web_first_visit_embedded": page_embedded,
                "web_first_visit_not_yet_grouped": page.pending},
            "warm_parts": {"read_rows_seconds": round(rows_s, 2), "cluster_seconds": round(cluster_s, 2)},
            "groups": len(report.gaps), "groups_over_one": sum(g.count > 1 for g in report.gaps),
            "largest_groups": [g.count for g in report.gaps[:5]], "topics_seeded": len(TOPICS),
            "purity": round(_purity(report.gaps, topic_of), 3)}


def _purity(gaps: Any, topic_of: dict[str, str]) -> float:
    """The share of answers whose group's most common seeded topic is their own (1.0: no two topics merged)."""
    agreeing = sum(max(Counter(topic_of[i] for i in g.answer_ids).values()) for g in gaps)
    return agreeing / max(1, sum(g.count for g in gaps))


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = fn()
    return time.perf_counter() - began, result
