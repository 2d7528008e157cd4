"""Answers that answer: the defects visitors met, each asked of the real model over content/.

A Verified badge may only sit on quotes that answer the question; the docs'
answer must not be refused when it was retrieved; the direct answer comes
first; the current docs version wins unless the reader browses another. The
pipeline is wired exactly as `make serve` wires it (hybrid retrieval, the
extractive generator and the answer gate sharing one judge).
"""

from __future__ import annotations

import json

import pytest

from answer.contract.draft import Draft
from answer.generate import ExtractiveGenerator
from answer.pipeline import Answerer
from answer.services import build_judge
from ingest.site import load_site_config
from retrieval.services import open_retriever
from retrieval.viewer import Viewer
from tests.conftest import CONTENT
from tests.fakes import ScriptedGenerator
from web.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    return Settings(content_dir=CONTENT, data_dir=tmp_path_factory.mktemp("gate"))


@pytest.fixture(scope="module")
def retriever(settings, content_index, real_embedder):
    return open_retriever(settings, store=content_index, embedder=real_embedder)


@pytest.fixture(scope="module")
def judge(retriever, real_embedder):
    return build_judge(load_site_config(CONTENT), retriever, real_embedder)


@pytest.fixture(scope="module")
def answerer(retriever, judge, real_embedder):
    return Answerer(retriever, ExtractiveGenerator(real_embedder, judge=judge), judge=judge)


ANSWERED = [
    # question, a passage the direct answer must quote, the section it must come from
    ("How many times does Ferrydeck retry a failed delivery?", "up to 16 attempts", "doc:guides/retries#how-retries-work"),
    ("How do I forward webhooks to localhost?", "", "doc:guides/local-development#"),
    ("how do I get started?", "", "doc:index#where-to-start"),
    ("How do I 🚀 Launch checklist?", "", "doc:index#-launch-checklist"),
    ("What's new in 2.4?", "", "doc:changelog/2-4#"),
    ("What is the API rate limit on the Growth plan?", "Growth | 200 | 400", "doc:api/rate-limits#limits-per-plan"),
    # the table's header row ("Plan | Requests per second | Burst capacity") is context, never the answer
    ("How many requests per second does the Starter plan allow?", "Starter | 50 | 100", "doc:api/rate-limits#limits-per-plan"),
]


@pytest.mark.parametrize("question, passage, section", ANSWERED, ids=[q for q, _, _ in ANSWERED])
def test_the_docs_answer_is_given_direct_answer_first(answerer, question, passage, section):
    answer = answerer.ask(question, Viewer.anonymous())
    assert answer.state == "answered", answer.problems
    direct = answer.claims[0]
    assert direct.role == "direct" and all(c.role == "supporting" for c in answer.claims[1:])
    cited = [c for claim in answer.claims for c in claim.citations]
    assert direct.citations[0].chunk_id.startswith(section), [c.chunk_id for c in cited]
    assert passage in direct.citations[0].quote
    assert len(answer.claims) <= 3


@pytest.mark.parametrize("question, never_mentioned", [
    ("Is there a Terraform provider?", "Terraform"),
    ("Does Ferrydeck support GraphQL subscriptions?", "GraphQL"),
])
def test_off_topic_quotes_make_a_refusal_that_says_why(answerer, question, never_mentioned):
    answer = answerer.ask(question, Viewer.anonymous())
    assert answer.state == "refused" and not answer.claims
    assert answer.retrieval.hits, "a refusal with related sections lists them"
    assert any(never_mentioned in p.text for p in answer.problems), answer.problems


def test_a_staff_only_duration_asked_anonymously_is_never_answered_with_24_7(answerer):
    # The public docs say "Enterprise customers can page 24/7 support from the dashboard": a quote that
    # names "support" and "dashboard" and states no duration. The answer is on a staff page.
    # Never an Answer: at most the closest public passages, labelled as not stating it.
    answer = answerer.ask("Can support look at a customer's dashboard as them, and for how long?", Viewer.anonymous())
    assert answer.outcome != "answer" and not any(c.role == "direct" for c in answer.claims), [c.text for c in answer.claims]
    assert not any("internal/" in h.chunk.id for h in answer.retrieval.hits)


def test_the_current_version_wins_unless_the_reader_browses_another(answerer):
    current = answerer.ask("What is the API rate limit on the Growth plan?", Viewer.anonymous())
    assert current.claims[0].citations[0].doc_version == "2.4"
    legacy = answerer.ask("What is the API rate limit on the Growth plan?", Viewer.anonymous(), version="1.9")
    assert legacy.claims[0].citations[0].doc_version == "1.9"
    assert "25 requests per second" in legacy.claims[0].citations[0].quote


def _draft(*quotes: tuple[str, str]) -> str:
    return json.dumps({"refused": False, "claims": [
        {"quotes": [{"handle": h, "quote": q}], "claim": q} for h, q in quotes]})


def _handle(rset, chunk_id: str) -> str:
    return next(h.handle for h in rset.hits if h.chunk.id == chunk_id)


def test_an_llm_draft_goes_through_the_same_gate_and_ordering(retriever, judge):
    """Verbatim and supported is not enough for a model either: off-topic quotes refuse, the answer leads."""
    question = "How many times does Ferrydeck retry a failed delivery?"
    rset = retriever.search(question, Viewer.anonymous())
    retries = _handle(rset, "doc:guides/retries#how-retries-work")
    background = "When an attempt fails, Ferrydeck schedules the next one using exponential backoff."
    direct = "By default a delivery gets up to 16 attempts: the initial attempt plus 15 retries, spread over about 72 hours."
    llm = ScriptedGenerator(_draft((retries, background), (retries, direct)))
    answer = Answerer(retriever, llm, judge=judge).ask(question, Viewer.anonymous())
    assert answer.state == "answered"
    assert answer.claims[0].citations[0].quote == direct and answer.claims[0].role == "direct"

    off_topic = "Is there a Terraform provider?"
    rset = retriever.search(off_topic, Viewer.anonymous())
    blurb = rset.hits[0].chunk.text.split(". ")[0].strip() + "."
    llm = ScriptedGenerator(_draft((rset.hits[0].handle, blurb)))
    answer = Answerer(retriever, llm, judge=judge).ask(off_topic, Viewer.anonymous())
    assert answer.state == "refused" and not answer.claims
    assert any("does not answer the question" in p.text for p in answer.problems), answer.problems
    assert answer.attempts and answer.attempts[0].quotes[0].check.verified, "the quote itself was verbatim"


def test_a_refusing_generator_is_not_overruled(retriever, judge):
    class Refuses:
        name = "refuses"

        def draft(self, question, rset, *, feedback=()):  # noqa: ANN001
            return Draft(refused=True, claims=())

    answer = Answerer(retriever, Refuses(), judge=judge).ask("How many times does Ferrydeck retry?", Viewer.anonymous())
    assert answer.state == "refused"
