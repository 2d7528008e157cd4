"""With an LLM configured, the model condenses a follow-up over real HTTP (litellm against a scripted server)."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from answer.followup import CarrySubject, Turn
from answer.llm.client import LiteLLMGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever
from tests.fakes import REFUNDS, HashEmbedder
from tests.memory_index import MemoryIndex
from tests.scripted_llm import Reply, ScriptedLLM
from web.app import create_app
from web.settings import Settings

pytestmark = pytest.mark.integration
QUOTE = "Refunds are available within 14 days of the charge."
DRAFT = {"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": QUOTE}], "claim": QUOTE}]}


def test_the_llm_condenses_a_follow_up_and_the_answer_is_searched_and_verified_for_the_condensed_question(tmp_path):
    with ScriptedLLM().running() as llm:
        embedder = HashEmbedder()
        store = MemoryIndex(embedder, [REFUNDS])
        generator = LiteLLMGenerator("openai/scripted", api_base=llm.url, api_key="x", timeout=5, max_retries=0)
        answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), generator,
                            audit=SQLiteAnswerLog(tmp_path / "answers.sqlite3"))
        app = TestClient(create_app(Settings(), answerer=answerer, store=store))
        llm.push(Reply.json(DRAFT))
        first = app.post("/api/ask", json={"question": "How long is the refund window?"}).json()
        assert len(llm.requests) == 1  # a first question is never condensed
        llm.push(Reply.json({"question": "Does the refund window apply to annual plans?"}), Reply.json(DRAFT))
        body = app.post("/api/ask", json={"question": "And annual plans?", "thread_id": first["thread_id"],
                                          "owner_token": first["owner_token"]}).json()
        condense, drafted = llm.requests[1], llm.requests[2]
        assert condense["response_format"]["json_schema"]["name"] == "condense"
        assert "How long is the refund window?" in llm.prompts[1] and "And annual plans?" in llm.prompts[1]
        assert body["question"] == "Does the refund window apply to annual plans?" and body["rewritten"]
        assert "Does the refund window apply to annual plans?" in llm.prompts[2] and "draft" in json.dumps(drafted)
        assert body["state"] == "answered" and body["claims"][0]["citations"][0]["quote"] == QUOTE

        llm.push(Reply.error(500), Reply.json(DRAFT))  # the model fails to condense: the offline rule takes over
        body = app.post("/api/ask", json={"question": "Is it the same for monthly plans?", "thread_id": first["thread_id"],
                                          "owner_token": first["owner_token"]}).json()
        history = [Turn("How long is the refund window?", "How long is the refund window?"),
                   Turn("And annual plans?", "Does the refund window apply to annual plans?")]
        assert body["rewritten"] and body["question"] == CarrySubject().condense("Is it the same for monthly plans?", history)
