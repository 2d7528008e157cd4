"""The eval harness's own logic: thresholds, calibration matrix, human grading import, answer correctness."""

from __future__ import annotations

import csv

from answer.contract.support import DeterministicChecker
from tests.eval.__main__ import HERE, check_thresholds, confusion, grade, load_jsonl, subset
from tests.eval.grounding import _overlap


def test_thresholds_flag_minimums_and_maximums():
    results = {"extractive": {"metrics": {"quote_correctness": 0.9, "phantom_rate": 0.1, "retrieval": {"mrr": 0.7}}}}
    failures = check_thresholds(results, {"extractive": {"quote_correctness": 1.0, "phantom_rate:max": 0.0,
                                                         "retrieval.mrr": 0.6, "missing_metric": 0.5}})
    assert failures == ["extractive: quote_correctness = 0.9 < min 1.0", "extractive: phantom_rate = 0.1 > max 0.0",
                        "extractive: missing_metric missing"]


def test_calibration_set_covers_every_failure_mode_and_the_matrix_adds_up():
    pairs = load_jsonl(HERE / "calibration.jsonl")
    assert {p["mode"] for p in pairs} >= {"exact", "paraphrase", "wrong-number", "negation", "stitched", "unrelated"}
    report = confusion(DeterministicChecker(), pairs)
    matrix = report["matrix (rows gold, columns predicted)"]
    assert sum(sum(row.values()) for row in matrix.values()) == len(pairs)
    # The strict checker must never call a wrong number or a negation flip supported.
    assert report["by_mode"]["wrong-number"]["agree"] == report["by_mode"]["wrong-number"]["n"]
    assert report["by_mode"]["negation"]["agree"] == report["by_mode"]["negation"]["n"]


def test_human_grading_import_computes_precision(tmp_path, capsys):
    path = tmp_path / "sample.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["claim", "supports (yes/no)"])
        writer.writeheader()
        writer.writerows([{"claim": "a", "supports (yes/no)": "yes"}, {"claim": "b", "supports (yes/no)": "no"},
                          {"claim": "c", "supports (yes/no)": "y"}, {"claim": "d", "supports (yes/no)": ""}])
    assert grade(path) == 0
    assert '"citation_precision_human": 0.6667' in capsys.readouterr().out


def test_answer_correctness_needs_the_gold_fact_not_just_any_quote():
    gold = "Refunds are available within 14 days of the charge for monthly plan charges."
    assert _overlap(gold, "Refunds are available within 14 days of the charge for monthly plan charges.")
    assert _overlap(gold, "within 14 days of the charge")
    assert not _overlap(gold, "Annual plans can be refunded within 30 days of the charge.")
    # a gold table row is not a prefix of another row's number: "Starter | 5" (seats) is not "Starter | 50 | 100"
    assert not _overlap("Starter | 5", "Starter | 50 | 100") and _overlap("Starter | 5", "Starter | 5 | 20")


def test_a_subset_is_fixed_and_spread_over_the_whole_set():
    questions = [{"id": str(n)} for n in range(10)]
    assert [q["id"] for q in subset(questions, 4)] == ["0", "2", "5", "7"]
    assert subset(questions, 4) == subset(questions, 4) and subset(questions, 0) == questions == subset(questions, 99)


def test_written_answers_count_as_stating_the_gold_only_when_a_shown_sentence_rests_on_its_quote():
    from tests.eval.grounding import metrics, run_questions
    from tests.unit.test_written import Scripted, _answerer

    question = {"id": "w1", "question": "How long are events retained?", "answerable": True, "gold": [],
                "answer_quote": "Events are retained for 30 days on every plan."}
    on_gold = _answerer(Scripted("Events are kept for 30 days on every plan [1]."))
    rows, answers = run_questions(on_gold, [question])
    written = metrics(rows, answers, {})["written"]
    assert (written["asked"], written["shown"], written["gold_stated"]) == (1, 1, 1.0)
    assert rows[0].written[0]["passages"] == [1] and "write" in rows[0].timings

    unsupported = _answerer(Scripted("Events are kept for 90 days [1]."))  # dropped: the figures count it, not gold
    rows, answers = run_questions(unsupported, [question])
    written = metrics(rows, answers, {})["written"]
    assert (written["shown"], written["sentences_dropped"], written["gold_stated"]) == (0, 1, 0.0)
    assert rows[0].written == []

    assert "written" not in metrics(*run_questions(_answerer_without_writer(), [question]), {})


def _answerer_without_writer():  # noqa: ANN202
    from answer.gate import AnswerGate
    from answer.gate.features import AnswerExtractor
    from answer.generate import ExtractiveGenerator
    from answer.pipeline import Answerer
    from tests.unit.test_outcomes import EXPORT, RETENTION, Fixed

    gate = AnswerGate(AnswerExtractor())
    return Answerer(Fixed(RETENTION, EXPORT), ExtractiveGenerator(judge=gate), judge=gate)


def test_a_quote_edge_is_read_from_the_chunk_not_from_the_segmenter():
    from tests.eval.grounding import cuts_a_code_block, starts_mid_sentence

    text = ("Tern 2+, a.k.a. Gull, uses the new runner. It starts faster.\n\n- one item here\n\n"
            "| Plan | Limit |\n| --- | --- |\n| Starter | 50 |\n\nNo. It is off.\n\nSet it:\n\n```yaml\nkey: \"v\"\n```\n")
    for start in (0, text.index("It starts"), text.index("one item"), text.index("Starter |"), text.index("It is off")):
        assert not starts_mid_sentence(text, start), text[start:start + 12]
    for start in (text.index("Gull"), text.index("uses the"), text.index("faster")):
        assert starts_mid_sentence(text, start), text[start:start + 12]
    block_end = text.index("```\n", text.index("key:")) + 3
    assert not cuts_a_code_block(text, text.index("Set it"), block_end)
    assert cuts_a_code_block(text, text.index("Set it"), block_end - 1)  # stops before the closing fence
    assert cuts_a_code_block(text, text.index("key:"), block_end)  # starts inside the block, without its fence
    joined = "1. Install it: ```sh\nnpm install x\n``` pnpm: ```sh\npnpm add x\n```"  # a fence inside an item's line
    assert cuts_a_code_block(joined, joined.index("Install"), joined.index("npm install x") + 13)
    mentioned = "A code block starts with three backticks ``` on a line of its own.\n\n```js\nlet a = 1\n```"
    assert not cuts_a_code_block(mentioned, 0, len(mentioned))
