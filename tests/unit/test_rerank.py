"""Rerankers: the offline signal reranker and the cross-encoder hook (with a behaving fake model)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from retrieval.errors import RerankerError
from retrieval.rerank import Candidate, CrossEncoderReranker, SignalReranker, exact_matches, heading_overlap
from tests.fakes import make_chunk


def ids(ranked):
    return [chunk.id for chunk, _ in ranked]

def test_equal_fusion_scores_are_broken_by_heading_match():
    plain = make_chunk("a", "x", "Some text about sending.", title="Sending events", heading="Overview")
    titled = make_chunk("b", "y", "Some text about sending.", title="Retries", heading="Retry schedule")
    ranked = SignalReranker().rerank("what is the retry schedule?", [Candidate(plain, 0.03), Candidate(titled, 0.03)])
    assert ids(ranked) == [titled.id, plain.id]
    assert heading_overlap("retry schedule", titled) == 1.0 and heading_overlap("retry schedule", plain) == 0.0

def test_exact_identifier_match_lifts_a_lower_fused_candidate():
    flag = make_chunk("cli/flags", "dry-run", "`--dry-run` validates without changing anything.")
    other = make_chunk("cli/deploy", "plan", "Deploy prints a plan and asks before applying.")
    question = "what does --dry-run do?"
    assert exact_matches(question, flag) == 1 and exact_matches(question, other) == 0
    ranked = SignalReranker(heading_weight=0.0).rerank(question, [Candidate(other, 0.033), Candidate(flag, 0.030)])
    assert ids(ranked)[0] == flag.id

def test_quoted_phrases_count_as_exact_matches():
    chunk = make_chunk("a", "x", "The plan lists each change as create, update or delete.")
    assert exact_matches('what does "update or delete" mean?', chunk) == 1
    assert exact_matches('what does "update and delete" mean?', chunk) == 0

def test_without_signals_the_fusion_order_is_kept():
    chunks = [make_chunk("p", str(i), f"text {i}") for i in range(4)]
    candidates = [Candidate(c, 0.05 - i * 0.01) for i, c in enumerate(chunks)]
    ranked = SignalReranker().rerank("zzz", list(reversed(candidates)))
    assert ids(ranked) == [c.id for c in chunks]
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)

def test_version_is_a_boost_not_a_filter():
    current = make_chunk("guides/retries", "schedule", "Retries follow a schedule.")
    legacy = replace(make_chunk("v1/retries", "schedule", "Retries follow a schedule."), doc_version="1.9")
    candidates = [Candidate(current, 0.033), Candidate(legacy, 0.030)]
    assert ids(SignalReranker().rerank("retry schedule", candidates)) == [current.id, legacy.id]
    assert ids(SignalReranker().rerank("retry schedule", candidates, version="1.9")) == [legacy.id, current.id]
    assert len(SignalReranker().rerank("retry schedule", candidates, version="9.9")) == 2

def test_empty_candidates_rerank_to_nothing():
    assert SignalReranker().rerank("anything", []) == []

class OverlapModel:
    """A behaving stand-in for CrossEncoder: logit = shared lower-case words between query and passage."""

    def predict(self, pairs):
        words = lambda s: set(re.findall(r"[a-z]+", s.lower()))  # noqa: E731
        return [float(len(words(q) & words(p))) - 2.0 for q, p in pairs]

def test_cross_encoder_orders_by_model_score_not_by_fusion():
    weak = make_chunk("a", "x", "Refunds within fourteen days of the charge.")
    strong = make_chunk("b", "y", "Webhook signature header uses HMAC SHA256 signature.")
    reranker = CrossEncoderReranker("", model=OverlapModel())
    ranked = reranker.rerank("webhook signature hmac", [Candidate(weak, 0.05), Candidate(strong, 0.01)])
    assert ids(ranked) == [strong.id, weak.id]
    assert all(0.0 <= s <= 1.0 for _, s in ranked)


def test_cross_encoder_without_a_model_path_is_a_clear_error():
    with pytest.raises(RerankerError, match="none is configured"):
        CrossEncoderReranker("")


def test_links_to_elsewhere_and_history_rank_below_the_section_that_states_the_thing():
    """A "See also" list and a changelog entry name the question's words too; neither states the answer."""
    states = make_chunk("api/request", "retries", "cy.request retries a transient network error up to 4 times.",
                        title="request", heading="Retries")
    links = make_chunk("guides/api", "see-also", "- cy.request() - full reference\n- Retries and network errors",
                       title="API testing", heading="See also")
    history = make_chunk("changelog", "0-18-1", "cy.request now retries a network error.", title="Changelog",
                         heading="0.18.1")
    pool = [Candidate(links, 0.034), Candidate(history, 0.033), Candidate(states, 0.030)]
    question = "How many times does cy.request retry a network error?"
    assert ids(SignalReranker().rerank(question, pool))[0] == states.id
    assert ids(SignalReranker(aside_weight=0.0).rerank(question, pool))[0] != states.id  # the weight is what lifts it
    asked = ids(SignalReranker().rerank("When did cy.request start retrying network errors?", pool))
    assert asked.index(history.id) < asked.index(states.id)  # a question about changes is answered by history
