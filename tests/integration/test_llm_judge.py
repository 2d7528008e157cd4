"""The optional LLM support judge over the real litellm path, and its fail-closed fallback."""

from __future__ import annotations

import json

import pytest

from answer.contract.draft import parse_draft
from answer.contract.verify import verify
from answer.llm.judge import LLMJudge
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import make_chunk
from tests.scripted_llm import Reply, ScriptedLLM

pytestmark = pytest.mark.integration

CHUNK = make_chunk("billing/refunds", "refund-windows", "Refunds are available within 14 days of the charge.")
QUOTE = "Refunds are available within 14 days of the charge."


def draft(claim):
    return parse_draft(json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": QUOTE}], "claim": claim}]}))


def test_judge_verdict_decides_support_in_the_verifier():
    viewer = Viewer.anonymous()
    rset = renumber("q", viewer, [(CHUNK, 1.0)])
    with ScriptedLLM(json.dumps({"status": "partial", "reason": "the claim adds 'business'"})).running() as llm:
        judge = LLMJudge.from_model("openai/scripted", api_base=llm.url, api_key="x", timeout=5)
        result = verify(draft("Refunds are available within 14 business days."), rset, viewer, checker=judge)
        assert result.claims[0].status == "partial"
        assert llm.requests[0]["response_format"]["json_schema"]["name"] == "verdict"
        assert QUOTE in llm.prompts[0]


def test_judge_unreachable_falls_back_to_the_deterministic_checker():
    viewer = Viewer.anonymous()
    rset = renumber("q", viewer, [(CHUNK, 1.0)])
    with ScriptedLLM(*(Reply.error(500) for _ in range(3))).running() as llm:
        judge = LLMJudge.from_model("openai/scripted", api_base=llm.url, api_key="x", timeout=5)
        judge.model.backoff = 0.01
        result = verify(draft("Refunds are available within 90 days of the charge."), rset, viewer, checker=judge)
        assert result.claims[0].status == "unsupported" and result.shown == ()
        assert any("judge unavailable" in r for r in result.claims[0].reasons)
