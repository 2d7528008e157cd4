"""The audit page says why an answer got its outcome in words a support person reads, figures beside them.

Support staff opening a false refusal saw "The generator refused." and
reasons such as "100% of the question's focus is in no retrieved section".
The page now opens with the outcome in a sentence, the gate's reasons naming
the question's own words, and the closest sections found with their scores.
"""

from __future__ import annotations

import json
from html import unescape

from starlette.testclient import TestClient

from answer.gate import AnswerGate, Thresholds
from answer.gate.features import AnswerExtractor
from answer.generate import ExtractiveGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from tests.fakes import HashEmbedder, ScriptedGenerator
from tests.memory_index import MemoryIndex
from tests.unit.test_outcomes import EXPORT, RETENTION, Fixed
from web.app import create_app
from web.settings import Settings

STAFF = {"X-Groups": "staff"}


def client(tmp_path, generator, gate=None) -> TestClient:  # noqa: ANN001
    answerer = Answerer(Fixed(RETENTION, EXPORT), generator, judge=gate,
                        audit=SQLiteAnswerLog(tmp_path / "answers.sqlite3"))
    store = MemoryIndex(HashEmbedder(), [RETENTION, EXPORT])  # the live index the audit reads sources from
    return TestClient(create_app(Settings(data_dir=tmp_path, identity_header="X-Groups"), answerer=answerer,
                                 store=store))


def audit_text(c: TestClient, question: str) -> str:
    answer_id = c.post("/api/ask", json={"question": question}).json()["answer_id"]
    return " ".join(unescape(c.get(f"/answers/{answer_id}", headers=STAFF).text).split())


def test_a_refusal_names_the_words_no_section_mentions_and_the_closest_sections(tmp_path):
    gate = AnswerGate(AnswerExtractor())
    page = audit_text(client(tmp_path, ExtractiveGenerator(judge=gate), gate),
                      "Is there a Terraform provider for retention?")
    assert "Why this outcome" in page and "Not in the docs: no section found answers the question." in page
    assert "none of the sections found mentions “Terraform”" in page
    assert "question's focus" not in page  # the internal wording is gone
    assert "Closest sections found: Retention › Section (score 1.00); Export › Section (score 0.90)" in page
    assert "The generator refused: the cited section never mentions Terraform;" in page  # the attempt's own row


def test_related_passages_say_the_sections_were_close_but_not_judged_to_answer(tmp_path):
    gate = AnswerGate(AnswerExtractor(), Thresholds(floor=5.0))  # nothing reaches it: only the closest passages
    page = audit_text(client(tmp_path, ExtractiveGenerator(judge=gate), gate), "How long are events retained?")
    assert "Shown as Related passages" in page
    assert "the closest passage found does not address the question closely enough (score" in page


def test_a_model_s_refusal_without_reasons_says_so_and_still_names_the_closest_sections(tmp_path):
    page = audit_text(client(tmp_path, ScriptedGenerator(json.dumps({"refused": True, "claims": []}))),
                      "How much does retention cost?")
    assert "The generator refused without saying why." in page and "The generator refused." not in page
    assert "Closest sections found: Retention › Section (score 1.00)" in page


def test_the_visitor_is_told_which_of_their_words_no_section_found_mentions(tmp_path):
    """"Not in the docs" with its reason in plain words: the words to put another way, or that the docs lack."""
    gate = AnswerGate(AnswerExtractor())
    c = client(tmp_path, ExtractiveGenerator(judge=gate), gate)
    asked = c.post("/api/ask", json={"question": "Is there a Terraform provider for retention?"}).json()
    assert asked["outcome"] == "refused" and asked["unmentioned"] == ["Terraform", "provider"]
    page = " ".join(unescape(c.post("/ask", data={"question": "Is there a Terraform provider for retention?"}).text)
                    .split())
    assert "None of the docs sections found mentions “Terraform” or “provider”." in page
    again = " ".join(unescape(c.get(f"/?thread={asked['thread_id']}").text).split())  # the thread shown again
    assert "None of the docs sections found mentions “Terraform” or “provider”." in again
    answered = c.post("/api/ask", json={"question": "How long are events retained?"}).json()
    assert answered["outcome"] == "answer" and "unmentioned" not in answered  # an Answer lacks nothing


def test_a_question_in_another_language_is_told_so_instead_of_which_of_its_words_the_docs_lack(tmp_path):
    """"None of the docs sections found mentions “cuánto” or “conservan”" sent a Spanish speaker looking for
    words no English page uses; they are told the docs are searched in English."""
    gate = AnswerGate(AnswerExtractor())
    c = client(tmp_path, ExtractiveGenerator(judge=gate), gate)
    question = "¿Cuánto tiempo se conservan los eventos?"
    asked = c.post("/api/ask", json={"question": question}).json()
    assert asked["outcome"] == "refused" and asked["unmentioned"]  # the words are still in the record
    assert asked["language"] == "Spanish"
    english = c.post("/api/ask", json={"question": "Is there a Terraform provider for retention?"}).json()
    assert english["outcome"] == "refused" and "language" not in english
    page = " ".join(unescape(c.post("/ask", data={"question": question}).text).split())
    assert "This question looks like Spanish; the docs are searched in English" in page
    assert "None of the docs sections found mentions" not in page


def test_the_words_no_section_mentions_survive_the_audit_log(tmp_path):
    from answer.contract.record import from_json, to_json

    gate = AnswerGate(AnswerExtractor())
    answerer = Answerer(Fixed(RETENTION, EXPORT), ExtractiveGenerator(judge=gate), judge=gate)
    from retrieval.viewer import Viewer

    answer = answerer.ask("Is there a Terraform provider for retention?", Viewer.of([]))
    assert answer.unmentioned == ("Terraform", "provider")
    assert from_json(json.loads(json.dumps(to_json(answer.record(), full=True)))).unmentioned == answer.unmentioned
    related = AnswerGate(AnswerExtractor(), Thresholds(floor=5.0))
    close = Answerer(Fixed(RETENTION, EXPORT), ExtractiveGenerator(judge=related), judge=related)
    assert close.ask("How long are events retained?", Viewer.of([])).unmentioned == ()  # about what the docs say
