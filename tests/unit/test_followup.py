"""Follow-ups rewritten into standalone questions: only elliptical ones borrow the earlier subject."""

from __future__ import annotations

import json

import pytest

from answer.followup import CarrySubject, LLMCondenser, Turn, is_elliptical, rewrite

TIMEOUT = "What is the default request timeout of the SDKs?"
REGION = "Can I move my workspace to another region?"


@pytest.mark.parametrize(("previous", "question", "expected"), [
    (REGION, "How do I do that?", "How do I move my workspace to another region?"),
    (TIMEOUT, "How do I change it?", "How do I change the default request timeout of the SDKs?"),
    (TIMEOUT, "Is it configurable?", "Is the default request timeout of the SDKs configurable?"),
    (TIMEOUT, "Why?", "Why (the default request timeout of the SDKs)?"),
    ("How long are refunds available?", "And for annual plans?", "How long are refunds available for annual plans?"),
    ("How do I rotate an API key?", "Does that revoke the old one?", "Does that revoke the old one (rotate an API key)?"),
])
def test_an_elliptical_follow_up_carries_the_previous_subject(previous, question, expected):
    assert is_elliptical(question)
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == expected and result.rewritten and result.asked == question


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("How do I open the devtools for React components?", "And for my Vue components?",
     "How do I open the devtools for Vue components?"),  # the object swapped, not appended beside React
    ("How do I deploy my site to Vercel?", "And on Netlify?", "How do I deploy my site to Netlify?"),  # the platform
    ("What is the default port in dev mode?", "What about preview mode?", "What is the default port in preview mode?"),
    ("How many retries does the Growth plan get?", "What about Starter?", "How many retries does the Starter plan get?"),
    ("How long are events kept?", "What about deliveries?", "How long are events kept for deliveries?"),  # nothing to swap
])
def test_a_follow_up_that_replaces_one_part_is_searched_as_the_previous_question_with_it_replaced(previous, question,
                                                                                                   expected):
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == expected and result.rewritten


@pytest.mark.parametrize("question", ["Which TLS versions does the API accept?", "How do I verify webhook signatures?",
                                      "Make sure that the SDK retries idempotent requests?"])
def test_a_follow_up_that_names_its_own_subject_is_searched_as_typed(question):
    result = rewrite(question, [Turn(TIMEOUT, TIMEOUT)])
    assert result.question == question and not result.rewritten


def test_without_history_nothing_is_rewritten_and_chains_use_the_last_standalone_question():
    assert not rewrite("How do I do that?", []).rewritten
    history = [Turn(TIMEOUT, TIMEOUT), Turn("How do I change it?", "How do I change the default request timeout of the SDKs?")]
    assert rewrite("Is it the same for retries?", history).question == (  # the latest search's subject, an action here
        "Is it the same for retries (change the default request timeout of the SDKs)?")


class Model:
    """A model that records what it was asked and replies with canned text (or fails)."""

    def __init__(self, reply: str | Exception) -> None:
        self.reply, self.messages = reply, []

    def complete(self, messages, *, schema, name):  # noqa: ANN001, ANN201
        self.messages.append(messages)
        assert name == "condense" and schema["required"] == ["question"]
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def test_an_llm_condenses_the_thread_and_falls_back_to_the_offline_rule_on_failure():
    model = Model(json.dumps({"question": "How do I move a workspace to the eu-west region?"}))
    assert rewrite("How do I do that?", [Turn(REGION, REGION)], LLMCondenser(model)).question == (
        "How do I move a workspace to the eu-west region?")
    assert REGION in model.messages[0][1]["content"] and "How do I do that?" in model.messages[0][1]["content"]
    for broken in (RuntimeError("model down"), "not json", json.dumps({"question": ""})):
        assert rewrite("How do I do that?", [Turn(REGION, REGION)], LLMCondenser(Model(broken))).question == (
            CarrySubject().condense("How do I do that?", [Turn(REGION, REGION)]))
    assert Model("unused").messages == [] and not rewrite("Hi?", [], LLMCondenser(Model("x"))).rewritten
