"""The gate replay `python -m tests.eval.replay` screens weight changes with: variants, grading, what changed."""

from __future__ import annotations

import pytest

from answer.gate import AnswerGate, Thresholds, Weights
from answer.gate.features import AnswerExtractor
from answer.gate.vocabulary import Vocabulary
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.eval.replay import Outcome, asked_questions, changes, figures, moved_quotes, parse_variant, replay
from tests.fakes import make_chunk


def test_a_variant_names_a_weight_or_a_threshold_and_nothing_else():
    _, weights, thresholds = parse_variant("continues=0.2")
    assert weights.continues == 0.2 and thresholds == Thresholds()
    _, weights, thresholds = parse_variant("direct_tries=3")
    assert thresholds.direct_tries == 3 and isinstance(thresholds.direct_tries, int) and weights == Weights()
    with pytest.raises(ValueError, match="floor"):  # the message lists the names it knows
        parse_variant("flor=0.8")
    with pytest.raises(ValueError, match="wants a number"):
        parse_variant("floor=high")


def test_the_replay_grades_each_variant_as_make_eval_does_and_restores_the_gate():
    refunds = make_chunk("billing/refunds", "policy", "Refunds are available within 14 days of the charge.",
                         title="Refunds", heading="Refund policy")
    vocabulary = Vocabulary.from_texts([refunds.text])
    gate = AnswerGate(AnswerExtractor(vocabulary=lambda: vocabulary), Thresholds(floor=0.5, support_floor=0.4))
    questions = [
        {"id": "q1", "question": "Within how many days are refunds available?", "answerable": True,
         "answer_quote": "within 14 days of the charge"},
        {"id": "q2", "question": "Is there a Terraform provider?", "answerable": False, "answer_quote": ""},
    ]
    retrievals = [renumber(q["question"], Viewer.anonymous(), [(refunds, 1.0)]) for q in questions]
    own = (gate.extractor.weights, gate.thresholds)

    found = replay(gate, questions, retrievals, [parse_variant("floor=100", (Weights(), gate.thresholds))])

    assert (gate.extractor.weights, gate.thresholds) == own
    assert figures(questions, found["default"]) == {"answer_correctness": 1.0, "direct_answer_correctness": 1.0,
                                                    "refusal_accuracy": 1.0, "answer_rate": 1.0,
                                                    "quoted_chars_p50": len(refunds.text)}
    assert figures(questions, found["floor=100"])["answer_rate"] == 0.0  # nothing reaches the floor: all refused
    assert changes(questions, found["default"], found["floor=100"]) == ["q1: correct -> refused"]


def test_a_figures_only_set_is_screened_by_counts_never_by_question():
    # The replay once printed each changed question's id for the set written outside the team, whose
    # per-question results nobody here may read; such a set now says only how many moved each way.
    right, refused = Outcome(True, True, True, 10), Outcome(False, False, False, 0)
    questions = [{"id": f"mt{n:03}", "answerable": True} for n in range(3)] + [{"id": "mt900", "answerable": False}]
    before = [right, right, right, refused]
    after = [refused, refused, right, right]
    assert changes(questions, before, after) == ["mt000: correct -> refused", "mt001: correct -> refused",
                                                 "mt900: refused -> answered"]
    shown = changes(questions, before, after, figures_only=True)
    assert shown == ["2 questions: correct -> refused", "1 question: refused -> answered"]
    assert not any("mt0" in line or "mt9" in line for line in shown)


def test_a_visitor_question_whose_quotes_a_variant_changes_is_printed_with_both_answers():
    """Asked questions carry no gold: what a variant does to them is shown for a person to read, quote by quote."""
    refunds = make_chunk("billing/refunds", "policy", "Refunds are available within 14 days of the charge.",
                         title="Refunds", heading="Refund policy")
    gate = AnswerGate(AnswerExtractor(), Thresholds(floor=0.5, support_floor=0.4))
    asked = ["How long do I have to ask for a refund?", "Is there a Terraform provider?"]
    retrievals = [renumber(text, Viewer.anonymous(), [(refunds, 1.0)]) for text in asked]

    found = replay(gate, [{"question": text} for text in asked], retrievals,
                   [parse_variant("floor=100", (Weights(), gate.thresholds)), parse_variant("floor=0.5", (Weights(), gate.thresholds))])

    assert found["default"][0].quotes == (refunds.text,) and found["default"][1].quotes == ()
    moved = moved_quotes(asked, found["default"], found["floor=100"])
    assert moved == [f"{asked[0]}\n        before: {refunds.text}\n        after:  (nothing answers)"]
    assert moved_quotes(asked, found["default"], found["floor=0.5"]) == []  # the same picks: nothing to read


def test_the_asked_questions_are_a_sites_own_lines_without_comments():
    questions = asked_questions("starlight")
    assert questions and all(q.strip() == q and q and not q.startswith("#") for q in questions)
    assert asked_questions("mintlify") == []  # a set written outside the team gets no questions written here
