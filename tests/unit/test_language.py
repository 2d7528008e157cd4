"""Which language a question is in: the real identifier, on the evaluation sets' English questions and on
questions in other languages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from answer.language import language_note, other_language

EVAL = Path(__file__).resolve().parents[1] / "eval"


def english_questions() -> list[str]:
    """Every question and follow-up the repo's evaluation sets hold (written by people, in English)."""
    found: list[str] = []
    for path in sorted(EVAL.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            found += [item["question"]] if "question" in item else list(item.get("turns", ()))
    return found


def test_no_english_question_of_the_evaluation_sets_is_taken_for_another_language():
    questions = english_questions()
    assert len(questions) > 300
    assert [q for q in questions if other_language(q)] == []


@pytest.mark.parametrize("question", ["Can I rotate it?", "Pro plan cost?", "retry policy", "webhooks",
                                      "SAML SSO Okta", "FD-4292?", "And with Homebrew?", "What's the default?",
                                      # names and Latin loanwords a model of all 97 languages read as Spanish,
                                      # Quechua, Latin or Italian
                                      "Ollama llama.cpp vLLM", "Status quo per minute", "Minimum maximum status",
                                      "Is there a de facto limit?", "Postgres MySQL SQLite", "Django Flask FastAPI",
                                      "npm install --save @ferry/sdk", "🙂🙂🙂", "", "   "])
def test_a_short_question_a_list_of_names_or_code_is_never_told_it_is_in_another_language(question):
    assert other_language(question) == ""


@pytest.mark.parametrize(("question", "language"), [
    ("¿Cómo verifico la firma de un webhook?", "Spanish"),
    ("Comment vérifier la signature d'un webhook ?", "French"),
    ("Wie kann ich die Signatur eines Webhooks prüfen?", "German"),
    ("Como faço para verificar a assinatura de um webhook?", "Portuguese"),
    ("Hoe controleer ik de handtekening van een webhook?", "Dutch"),
    ("Webhookの署名を確認するには？", "Japanese"),
    ("Как проверить подпись вебхука?", "Russian"),  # another script: not English, however sure the model is
    ("如何验证 webhook 签名？", "Chinese"),
    ("Jak zweryfikować podpis webhooka?", "Polish"),
])
def test_a_question_plainly_in_another_language_is_named(question, language):
    assert other_language(question) == language
    assert language_note(language).startswith(f"This question looks like {language}; the docs are searched in English")
