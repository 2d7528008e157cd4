"""The answer policy: refuse on empty retrieval, retry once, then degrade visibly."""

from __future__ import annotations

import json

from answer.generate import ExtractiveGenerator
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever
from retrieval.viewer import Viewer
from tests.fakes import HashEmbedder, MemoryStore, ScriptedGenerator, make_chunk

REFUNDS = make_chunk("billing/refunds", "refund-windows",
                     "Refunds are available within 14 days of the charge. Annual plans are refunded pro rata.",
                     title="Refunds", heading="Refund windows")
GOOD = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": "Refunds are available within 14 days of the charge."}],
                                                  "claim": "Refunds are available within 14 days of the charge."}]})
PHANTOM = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c7", "quote": "Refunds are available within 14 days"}],
                                                     "claim": "Refunds are available within 14 days."}]})


def answerer(generator, chunks=(REFUNDS,)):
    embedder = HashEmbedder()
    return Answerer(DenseRetriever(MemoryStore(embedder, chunks), embedder, floor=-1.0), generator)


def test_empty_retrieval_refuses_without_calling_the_generator():
    generator = ScriptedGenerator(GOOD)
    answer = answerer(generator, chunks=()).ask("How long do refunds take?", Viewer.anonymous())
    assert answer.state == "refused"
    assert generator.feedback == []  # never called


def test_a_failed_draft_is_retried_once_with_the_verifier_findings():
    generator = ScriptedGenerator(PHANTOM, GOOD)
    answer = answerer(generator).ask("refund window?", Viewer.anonymous())
    assert answer.state == "answered"
    assert len(generator.feedback) == 2
    assert any("c7 does not exist" in f for f in generator.feedback[1])


def test_still_failing_after_retry_is_unverified_and_hidden():
    generator = ScriptedGenerator(PHANTOM, PHANTOM, GOOD)
    answer = answerer(generator).ask("refund window?", Viewer.anonymous())
    assert answer.state == "unverified"
    assert answer.claims == ()
    assert answer.hidden  # kept for the audit
    assert len(generator.feedback) == 2  # exactly one retry


def test_malformed_reply_degrades_instead_of_crashing():
    answer = answerer(ScriptedGenerator("not json at all", "")).ask("refund window?", Viewer.anonymous())
    assert answer.state in ("refused", "unverified")
    assert answer.claims == ()
    assert any("could not be used" in p for p in answer.problems)


def test_mixed_draft_keeps_verified_claims_and_marks_degraded():
    mixed = json.dumps({"refused": False, "claims": [
        {"quotes": [{"handle": "c1", "quote": "Refunds are available within 14 days of the charge."}],
         "claim": "Refunds are available within 14 days of the charge."},
        {"quotes": [{"handle": "c1", "quote": "Refunds are instant."}], "claim": "Refunds are instant."}]})
    answer = answerer(ScriptedGenerator(mixed, mixed)).ask("refund window?", Viewer.anonymous())
    assert answer.state == "answered" and answer.degraded
    assert [c.text for c in answer.claims] == ["Refunds are available within 14 days of the charge."]


def test_extractive_generator_quotes_itself_and_refuses_off_topic():
    embedder = HashEmbedder()
    service = Answerer(DenseRetriever(MemoryStore(embedder, [REFUNDS]), embedder, floor=-1.0), ExtractiveGenerator())
    answer = service.ask("Within how many days are refunds available?", Viewer.anonymous())
    assert answer.state == "answered"
    assert all(c.citations[0].quote == c.text for c in answer.claims)
    assert service.ask("What is the capital of France?", Viewer.anonymous()).state == "refused"
