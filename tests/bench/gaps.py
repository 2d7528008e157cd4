"""What the content-gap report costs at the size of the answer log's retention window, and how well it groups.

A log of synthetic refusals (10k by default; the default retention keeps up
to 20k answers, of which refusals and rated-down answers are a part) is
written through the real log, each answer looking at real sections of
content/. The report is then timed three ways: cold (every question embedded,
the vectors cached in the log), warm (nothing new: every vector from the
cache) and after 1 % new answers (only those embedded). Reading and
clustering are timed apart from embedding, since embedding is what a cache
saves and the model's speed is what a loaded machine changes. Purity says
how often an answer lands in a group whose most common seeded topic is its own.
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
    from answer.audit import SQLiteAuditLog
    from answer.clusters import cluster
    from answer.gaps import gap_report, topic_text
    from answer.redaction import redact
    from answer.retention import NO_RETENTION
    from tests.gap_seed import DAY, refusal

    now = time.time()
    rng = random.Random(5)
    looked = store.chunks(groups=["public"])
    audit = SQLiteAuditLog(work / "gap-log" / "answers.sqlite3", retention=NO_RETENTION)
    asked = questions(answers + answers // 100)
    started = time.perf_counter()
    topic_of = {}
    for topic, question in asked[:answers]:
        answer = refusal(question, created=now - rng.uniform(0, 80 * DAY), chunks=rng.sample(looked, 3))
        audit.record(answer)
        topic_of[answer.id] = topic
    write_s = time.perf_counter() - started
    groups = frozenset({"public", "staff"})

    def timed() -> tuple[float, Any]:
        began = time.perf_counter()
        result = gap_report(audit, store, embedder, groups, since=now - 90 * DAY, site_name="Ferrydeck Docs")
        return time.perf_counter() - began, result

    cold_s, report = timed()
    warm_s, _ = timed()
    rows_s, rows = _timed(lambda: audit.gap_rows(now - 90 * DAY))
    cached = audit.question_vectors(embedder.id, [r.record.answer_id for r in rows])
    first: dict[str, bytes] = {}  # one vector per distinct question, as the report clusters them
    for row in rows:
        first.setdefault(topic_text(redact(row.record.question), "Ferrydeck Docs"), cached[row.record.answer_id][1])
    matrix = np.stack([np.frombuffer(v, dtype=np.float32) for v in first.values()])
    cluster_s, _ = _timed(lambda: cluster(matrix))
    for _, question in asked[answers:]:
        audit.record(refusal(question, created=now, chunks=rng.sample(looked, 3)))
    more_s, _ = timed()
    return {"answers": answers, "distinct_questions": len(first), "write_log_seconds": round(write_s, 1),
            "cold_seconds": round(cold_s, 2), "cold_questions_per_s": round(len(first) / cold_s, 1),
            "warm_seconds": round(warm_s, 2), "after_1pct_new_seconds": round(more_s, 2),
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
