"""The answer policy: refuse on empty retrieval, retry once, then degrade visibly."""

from __future__ import annotations

import json

from answer.generate import ExtractiveGenerator
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever
from retrieval.viewer import Viewer
from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex

GOOD = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": "Refunds are available within 14 days of the charge."}],
                                                  "claim": "Refunds are available within 14 days of the charge."}]})
PHANTOM = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c7", "quote": "Refunds are available within 14 days"}],
                                                     "claim": "Refunds are available within 14 days."}]})


def answerer(generator, chunks=(REFUNDS,)):
    embedder = HashEmbedder()
    return Answerer(DenseRetriever(MemoryIndex(embedder, chunks), embedder, floor=-1.0), generator)


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
    assert any("could not be used" in p.text for p in answer.problems)


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
    service = Answerer(DenseRetriever(MemoryIndex(embedder, [REFUNDS]), embedder, floor=-1.0), ExtractiveGenerator())
    answer = service.ask("Within how many days are refunds available?", Viewer.anonymous())
    assert answer.state == "answered"
    assert all(c.citations[0].quote == c.text for c in answer.claims)
    assert service.ask("What is the capital of France?", Viewer.anonymous()).state == "refused"


def test_refuse_policy_turns_unverified_into_a_refusal_with_text_kept_for_the_audit():
    embedder = HashEmbedder()
    service = Answerer(DenseRetriever(MemoryIndex(embedder, [REFUNDS]), embedder, floor=-1.0),
                       ScriptedGenerator(PHANTOM, PHANTOM), unverified_policy="refuse")
    answer = service.ask("refund window?", Viewer.anonymous())
    assert (answer.state, answer.claims, answer.degraded) == ("refused", (), True)
    assert answer.hidden


class DownGenerator:
    """A generator whose model cannot be reached (its transport retries already spent)."""

    name = "down"

    def __init__(self):
        self.calls = []

    def draft(self, question, rset, *, feedback=()):
        from answer.errors import GeneratorError

        self.calls.append(tuple(feedback))
        raise GeneratorError("model m failed after 3 attempt(s): Timeout")


def test_unreachable_model_is_unverified_not_a_false_refusal_and_not_retried():
    generator = DownGenerator()
    answer = answerer(generator).ask("refund window?", Viewer.anonymous())
    assert (answer.state, answer.degraded) == ("unverified", True)
    assert generator.calls == [()]
    assert "Timeout" in answer.attempts[0].error


# --- agent-style callers: the same contract per tool result ----------------------------------------------

def test_agent_tool_result_is_verified_against_that_retrieval_set():
    from answer.agent import ground_tool_result
    from retrieval.search import renumber

    viewer = Viewer.anonymous()
    rset = renumber("refund window?", viewer, [(REFUNDS, 1.0)])
    verified = ground_tool_result(rset, GOOD, viewer)
    assert [c.citations[0].chunk_id for c in verified.shown] == [REFUNDS.id]
    phantom = ground_tool_result(rset, json.loads(PHANTOM), viewer)  # decoded drafts are accepted too
    assert phantom.shown == () and any("c7 does not exist" in p.text for p in phantom.problems)
    broken = ground_tool_result(rset, "{not json", viewer)
    assert broken.shown == () and "could not be used" in broken.problems[0].text


def test_agent_cannot_widen_access_beyond_the_tool_results_viewer():
    from answer.agent import ground_tool_result
    from retrieval.search import renumber

    secret = make_chunk("internal/x", "y", "Staff may extend refunds to 60 days on request.", access=("staff",))
    staff = Viewer.of(["staff"])
    rset = renumber("q", Viewer.anonymous(), [(secret, 1.0)])  # retrieved for an anonymous reader
    draft = {"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": secret.text}], "claim": secret.text}]}
    assert ground_tool_result(rset, draft, staff).shown == ()
    assert ground_tool_result(renumber("q", staff, [(secret, 1.0)]), draft, staff).shown


class RecordingRetriever:
    """Searches REFUNDS and records the docs version each search was asked for."""

    def __init__(self) -> None:
        self.versions: list[str | None] = []

    def search(self, question, viewer, *, k=None, version=None):  # noqa: ANN001, ANN201
        self.versions.append(version)
        return DenseRetriever(MemoryIndex(HashEmbedder(), [REFUNDS]), HashEmbedder(), floor=-1.0).search(question, viewer)


def test_the_browsed_docs_version_reaches_retrieval():
    retriever = RecordingRetriever()
    service = Answerer(retriever, ExtractiveGenerator())
    service.ask("Within how many days are refunds available?", Viewer.anonymous(), version="1.9")
    service.ask("Within how many days are refunds available?", Viewer.anonymous())
    assert retriever.versions == ["1.9", None]


def test_support_judge_setting_selects_the_checker():
    import pytest

    from answer.contract.support import DeterministicChecker
    from answer.llm.judge import LLMJudge
    from answer.services import build_checker
    from web.settings import Settings

    assert isinstance(build_checker(Settings.from_env({}, dotenv=False)), DeterministicChecker)
    judged = Settings.from_env({"SUPPORT_JUDGE": "llm", "LLM_MODEL": "openai/x", "LLM_API_BASE": "http://127.0.0.1:9"}, dotenv=False)
    assert isinstance(build_checker(judged), LLMJudge)
    with pytest.raises(ValueError, match="needs LLM_MODEL"):
        Settings.from_env({"SUPPORT_JUDGE": "llm"}, dotenv=False)
    with pytest.raises(ValueError, match="SUPPORT_JUDGE must be"):
        Settings.from_env({"SUPPORT_JUDGE": "vibes"}, dotenv=False)


def test_a_quantity_question_is_answered_by_the_sentence_that_states_a_quantity():
    chunk = make_chunk("billing/refunds", "review", "Refund requests are reviewed by the billing team. "
                       "Refund requests are reviewed within 5 business days.", title="Refunds", heading="Review")
    embedder = HashEmbedder()
    service = Answerer(DenseRetriever(MemoryIndex(embedder, [chunk]), embedder, floor=-1.0),
                       ExtractiveGenerator(max_claims=1))
    answer = service.ask("How long until refund requests are reviewed?", Viewer.anonymous())
    assert [c.text for c in answer.claims] == ["Refund requests are reviewed within 5 business days."]


def test_an_unreachable_model_is_never_reported_as_not_in_the_docs_even_under_the_refuse_policy():
    from answer.errors import GeneratorError

    class Down:
        name = "down"

        def draft(self, question, rset, *, feedback=()):  # noqa: ANN001
            raise GeneratorError("connection refused by the model server")

    embedder = HashEmbedder()
    service = Answerer(DenseRetriever(MemoryIndex(embedder, [REFUNDS]), embedder, floor=-1.0), Down(), unverified_policy="refuse")
    answer = service.ask("refund window?", Viewer.anonymous())
    assert (answer.state, answer.model_unavailable) == ("unverified", True)
    assert answer.to_dict()["model_unavailable"] is True


def test_of_a_follow_up_s_readings_the_one_the_gate_answers_is_searched_and_a_tie_keeps_the_first():
    embedder = HashEmbedder()
    service = Answerer(DenseRetriever(MemoryIndex(embedder, [REFUNDS]), embedder, floor=-1.0), ExtractiveGenerator())
    off, on = "What is the capital of France?", "Within how many days are refunds available?"
    anonymous = Viewer.anonymous()
    assert service.likelier([off, on], anonymous) == on
    assert service.likelier([on, off], anonymous) == on
    assert service.likelier([off, "Who painted the Mona Lisa?"], anonymous) == off  # neither answers: as typed
    same = "Within how many days are refunds available ?"  # searched alike, answered alike: a tie
    assert service.likelier([on, same], anonymous) == on and service.likelier([same, on], anonymous) == same
    assert service.likelier([off], anonymous) == off


def test_a_failed_search_while_weighing_readings_keeps_the_first_and_never_fails_the_turn():
    class Down:
        def search(self, question, viewer, *, k=None, version=None):  # noqa: ANN001
            raise ConnectionError("the index is unreachable")

    readings = ["What is the capital of France?", "Within how many days are refunds available?"]
    assert Answerer(Down(), ExtractiveGenerator()).likelier(readings, Viewer.anonymous()) == readings[0]


def test_readings_are_searched_as_this_viewer_so_a_section_they_may_not_read_never_decides():
    secret = make_chunk("internal/overrides", "refund-overrides", "Staff may override the refund window up to 90 days.",
                        title="Overrides", heading="Refund overrides", access=("staff",))
    embedder = HashEmbedder()
    service = Answerer(DenseRetriever(MemoryIndex(embedder, [secret]), embedder, floor=-1.0), ExtractiveGenerator())
    readings = ["What is the capital of France?", "How many days can staff override the refund window?"]
    assert service.likelier(readings, Viewer.anonymous()) == readings[0]
    assert service.likelier(readings, Viewer.of(["staff"])) == readings[1]


def test_readings_are_searched_in_the_browsed_docs_version():
    retriever = RecordingRetriever()
    Answerer(retriever, ExtractiveGenerator()).likelier(["a?", "b?"], Viewer.anonymous(), version="1.9")
    assert retriever.versions == ["1.9", "1.9"]


def test_without_a_gate_the_first_reading_is_kept_and_nothing_is_searched():
    retriever = RecordingRetriever()
    assert Answerer(retriever, ScriptedGenerator(GOOD)).likelier(["a?", "b?"], Viewer.anonymous()) == "a?"
    assert retriever.versions == []
