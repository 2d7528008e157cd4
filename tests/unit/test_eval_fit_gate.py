"""The gate fit (`python -m tests.eval.fit_gate`): what it counts, what it maximises, and the steps it takes."""

from __future__ import annotations

from dataclasses import replace

from answer.gate import Thresholds, Weights
from tests.eval.fit_gate import Tally, differences, fit, neighbours, objective, parameters
from tests.eval.replay import Outcome

QUESTIONS = [{"answerable": True}, {"answerable": True}, {"answerable": True}, {"answerable": False}]


def test_a_tally_counts_right_and_wrong_answers_and_an_answer_to_an_unanswerable_question_is_wrong():
    outcomes = [Outcome(True, True, True, 10), Outcome(True, False, False, 10), Outcome(False, False, False, 0),
                Outcome(True, False, False, 10)]
    tally = Tally.of(QUESTIONS, outcomes)
    assert (tally.right, tally.wrong, tally.refused, tally.answerable, tally.unanswerable) == (1, 2, 0, 3, 1)
    assert tally.figures() == {"answer_correctness": 0.333, "answer_precision": 0.333, "refusal_accuracy": 0.0}


def test_the_objective_charges_wrong_answers_and_never_takes_a_lost_refusal():
    base = {"a": Tally(right=6, wrong=2, refused=3, answerable=10, unanswerable=4)}
    more_right = {"a": Tally(right=7, wrong=2, refused=3, answerable=10, unanswerable=4)}
    one_more_each = {"a": Tally(right=7, wrong=3, refused=3, answerable=10, unanswerable=4)}
    lost_refusal = {"a": Tally(right=9, wrong=1, refused=2, answerable=10, unanswerable=4)}
    assert objective(more_right, base, 2.0) > objective(base, base, 2.0)
    assert objective(one_more_each, base, 2.0) < objective(base, base, 2.0)  # right half the time: not worth a badge
    assert objective(one_more_each, base, 0.5) > objective(base, base, 0.5)
    assert objective(lost_refusal, base, 2.0) == float("-inf")


def test_every_weight_and_moved_threshold_has_its_steps():
    names = parameters()
    assert {"meaning", "section", "continues", "floor", "max_absent"} <= set(names)
    assert "direct_tries" not in names and "related_floor" not in names
    steps = neighbours((Weights(), Thresholds()), "section")
    assert [change for change, _ in steps] == ["section=0.175", "section=0.2625", "section=0.4655", "section=0.7"]
    assert {gate[1] for _, gate in steps} == {Thresholds()}
    assert [gate[1].floor for _, gate in neighbours((Weights(), Thresholds()), "floor")] == [0.675, 0.7125, 0.7875, 0.825]


def test_the_fit_climbs_to_what_the_sets_reward_and_reports_what_it_moved():
    """A made-up set where a lower floor answers more rightly until it reaches 0.6, and lower still answers wrongly."""
    def evaluate(gate):  # noqa: ANN001, ANN202
        floor = gate[1].floor
        right = 5 + (floor < 0.74) + (floor < 0.7) + (floor < 0.65)
        wrong = 1 + 3 * (floor < 0.6)
        return {"set": Tally(right, wrong, refused=2, answerable=10, unanswerable=2)}

    start = (Weights(), Thresholds(floor=0.75))
    fitted = fit(evaluate, start, rounds=5)
    assert 0.6 <= fitted[1].floor < 0.65
    assert differences(fitted, start) == [f"floor={fitted[1].floor}"]
    assert fit(lambda gate: {"set": Tally(5, 1, 2, 10, 2)}, start) == start  # nothing rewarded: nothing moved
    assert differences(start, (replace(Weights(), meaning=0.5), Thresholds(floor=0.75))) == ["meaning=1.0"]
