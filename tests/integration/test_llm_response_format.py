"""Structured output on the servers people run, through the real litellm client and a scripted server.

Each server refuses the shapes it does not take the way it really does (a 400,
or llama-cpp-python's 500 naming `response_format`); the generator moves to
the next shape without burning transport retries on the refusal, remembers
the choice for that server and model, and still retries a plain fault.
"""

from __future__ import annotations

import json

import pytest

from answer.llm.client import LiteLLMGenerator
from answer.pipeline import Answerer
from tests.fakes import LIMITS, REFUNDS
from tests.integration.test_llm_adversarial import ANON, GOOD, REFUND_QUOTE, RETRIES, FixedRetriever
from tests.scripted_llm import LLAMA_CPP_PYTHON_REFUSALS, TEXT_ONLY_REFUSALS, Reply, ScriptedLLM

pytestmark = pytest.mark.integration


def answerer(server: ScriptedLLM, model: str = "openai/scripted") -> Answerer:
    generator = LiteLLMGenerator(model, api_base=server.url, api_key="x", timeout=5, max_retries=2, backoff=0.01)
    return Answerer(FixedRetriever(REFUNDS, LIMITS, RETRIES), generator)


def ask(server: ScriptedLLM, model: str = "openai/scripted"):  # noqa: ANN201
    return answerer(server, model).ask("How long are refunds available?", ANON)


def test_llama_cpp_python_500_on_json_schema_falls_back_to_json_object_with_the_schema():
    with ScriptedLLM(GOOD, refusals=LLAMA_CPP_PYTHON_REFUSALS).running() as server:
        answer = ask(server)
        assert (answer.state, answer.model_unavailable) == ("answered", False)
        assert [c.quote for c in answer.claims[0].citations] == [REFUND_QUOTE]
        # The refusal is not a passing fault: one json_schema request, no transport retries of it.
        assert server.shapes == ["json_schema", "json_object"]
        assert set(server.requests[1]["response_format"]["schema"]["required"]) == {"refused", "claims"}


def test_the_shape_a_server_takes_is_remembered_for_that_model_across_generators():
    with ScriptedLLM(GOOD, GOOD, refusals=LLAMA_CPP_PYTHON_REFUSALS).running() as server:
        assert ask(server).state == "answered"
        assert ask(server).state == "answered"  # a new generator (the judge, the condenser) on the same model
        assert server.shapes == ["json_schema", "json_object", "json_object"]


def test_a_server_taking_no_structured_output_gets_json_in_text():
    with ScriptedLLM(GOOD, refusals=TEXT_ONLY_REFUSALS).running() as server:
        answer = ask(server)
        assert answer.state == "answered"
        assert server.shapes == ["json_schema", "json_object", "text"]
        assert "JSON schema" in server.prompts[-1]  # the contract is still in the prompt


def test_a_500_that_is_not_about_response_format_is_retried_with_the_same_shape():
    with ScriptedLLM(Reply.error(500), GOOD).running() as server:
        answer = ask(server)
        assert answer.state == "answered"
        assert server.shapes == ["json_schema", "json_schema"]


def test_a_server_that_only_fails_is_unavailable_not_walked_down_the_shapes():
    with ScriptedLLM(*(Reply.error(503) for _ in range(3))).running() as server:
        answer = ask(server)
        assert (answer.state, answer.model_unavailable) == ("unverified", True)
        assert server.shapes == ["json_schema"] * 3


def test_quoting_by_pointing_sends_the_ids_as_an_enum_and_answers_with_the_sentence_they_name():
    pointed = json.dumps({"claims": [{"sentences": ["c1.1"], "claim": REFUND_QUOTE}], "refused": False})
    with ScriptedLLM(pointed, refusals=LLAMA_CPP_PYTHON_REFUSALS).running() as server:
        generator = LiteLLMGenerator("openai/pointing", api_base=server.url, api_key="x", timeout=5, backoff=0.01,
                                     quoting="point")
        answer = Answerer(FixedRetriever(REFUNDS, LIMITS, RETRIES), generator).ask("How long are refunds available?", ANON)
        assert answer.state == "answered"
        assert [c.quote for c in answer.claims[0].citations] == [REFUND_QUOTE]
        assert answer.attempts[0].raw == pointed  # the audit keeps the ids as the model named them
        schema = server.requests[-1]["response_format"]["schema"]
        ids = schema["properties"]["claims"]["items"]["properties"]["sentences"]["items"]["enum"]
        assert ids[:2] == ["c1.1", "c1.2"] and "c3.2" in ids
        assert "[c1.1] Refunds are available" in server.prompts[-1]
