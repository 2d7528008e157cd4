"""`make eval` over several sets: which sets run, follow-ups asked as the server asks them, the side-by-side table."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from answer.followup import CarrySubject, beside_subject
from tests.eval.__main__ import load_jsonl
from tests.eval.compare import failures, summary
from tests.eval.followups import run_switches, run_threads, switch_pairs, thread_metrics
from tests.eval.report import markdown
from tests.eval.sites import HERE, resolve_sites

FIELDS = {"id": str, "question": str, "kind": str, "groups": list, "answerable": bool, "gold": list,
          "answer_quote": str, "version": str}


def test_all_runs_every_set_whose_corpus_exists_and_names_the_ones_it_skipped(tmp_path):
    (tmp_path / "starlight").mkdir()
    (tmp_path / "mintlify").mkdir()
    environ = {"CYPRESS_DOCS": str(tmp_path / "nowhere"), "STARLIGHT_DOCS": str(tmp_path / "starlight"),
               "MINTLIFY_DOCS": str(tmp_path / "mintlify"), "MINTLIFY_QUESTIONS": str(tmp_path / "no-questions")}
    sites, skipped = resolve_sites("all", environ=environ)
    assert [s.name for s in sites] == ["content", "starlight"]
    assert skipped == [f"the cypress-docs corpus is not at {tmp_path / 'nowhere'}; set CYPRESS_DOCS to its folder",
                       f"the mintlify questions are not at {tmp_path / 'no-questions'}/questions.jsonl (kept outside "
                       "the repo)"]
    starlight = sites[1]
    assert starlight.content == tmp_path / "starlight" and starlight.config == HERE / "starlight" / "site.toml"
    assert starlight.followups == HERE / "starlight" / "followups.jsonl" and sites[0].followups is None


def test_a_set_written_outside_the_team_is_read_from_beside_the_repo_and_reported_as_figures_only(tmp_path):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "questions").mkdir()
    (tmp_path / "questions" / "questions.jsonl").write_text("")
    (tmp_path / "questions" / "followups.jsonl").write_text("")
    environ = {"MINTLIFY_DOCS": str(tmp_path / "corpus"), "MINTLIFY_QUESTIONS": str(tmp_path / "questions")}
    [site], _ = resolve_sites("mintlify", environ=environ)
    assert site.figures_only and site.questions == tmp_path / "questions" / "questions.jsonl"
    assert site.followups == tmp_path / "questions" / "followups.jsonl" and site.config == HERE / "mintlify" / "site.toml"
    [starlight], _ = resolve_sites("starlight", environ={"STARLIGHT_DOCS": str(tmp_path / "corpus")})
    assert not starlight.figures_only


def test_a_set_asked_for_by_name_without_its_corpus_is_an_error_naming_the_variable(tmp_path):
    with pytest.raises(SystemExit, match=r"starlight-docs corpus is not at .*nowhere; set STARLIGHT_DOCS"):
        resolve_sites("starlight", environ={"STARLIGHT_DOCS": str(tmp_path / "nowhere")})
    with pytest.raises(SystemExit, match="--questions names one site's set"):
        resolve_sites("all", questions="mine.jsonl", environ={})


def test_the_starlight_set_has_the_schema_of_the_other_sets_and_enough_refusals():
    rows = load_jsonl(HERE / "starlight" / "questions.jsonl")
    assert all({k: type(v) for k, v in r.items()} == FIELDS for r in rows)
    assert len(rows) >= 60 and sum(not r["answerable"] for r in rows) >= 12
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        assert bool(r["gold"]) == r["answerable"] == bool(r["answer_quote"]), r["id"]
        assert all(g.startswith("doc:") for g in r["gold"]), r["id"]
    threads = load_jsonl(HERE / "starlight" / "followups.jsonl")
    assert len(threads) == 12 and all(len(t["turns"]) == 2 and t["gold"] and t["answer_quote"] for t in threads)


def test_the_cypress_threads_have_the_schema_of_starlight_s():
    threads = load_jsonl(HERE / "cypress" / "followups.jsonl")
    assert len(threads) == 16 and len({t["id"] for t in threads}) == 16
    assert all(len(t["turns"]) == 2 and t["gold"] and t["answer_quote"] and t["kind"] == "follow-up" for t in threads)


class Answerer:
    """Answers every question it is asked by citing the chunk its script maps the question to (refuses the rest)."""

    def __init__(self, script: dict[str, str]) -> None:
        self.script, self.asked = script, []

    def ask(self, question, viewer, *, version=None):  # noqa: ANN001, ANN201
        self.asked.append(question)
        chunk = self.script.get(question)
        citation = SimpleNamespace(chunk_id=chunk, quote="q", url="u", handle="c1")
        return SimpleNamespace(state="answered" if chunk else "refused",
                               claims=(SimpleNamespace(citations=(citation,)),) if chunk else ())

    def likelier(self, readings, viewer, *, version=None):  # noqa: ANN001, ANN201
        """Like the real one's choice: the first reading its script answers, else the first."""
        return next((r for r in readings if r in self.script), readings[0])


def test_a_follow_up_is_asked_rewritten_in_its_thread_and_as_typed_alone():
    first, follow = "What's the default variant of an Aside?", "What about for badges?"
    searched = CarrySubject().condense(follow, [SimpleNamespace(question=first)])
    assert searched != follow  # the offline rule carries the first turn's subject
    answerer = Answerer({searched: "doc:components/badges#variant", follow: "doc:components/asides#type"})
    rows = run_threads(answerer, CarrySubject(), [{"id": "t1", "turns": [first, follow],
                                                  "gold": ["doc:components/badges#variant"]}])
    assert answerer.asked == [searched, follow]
    assert rows[0].searched == searched and rows[0].in_thread_correct and not rows[0].alone_correct
    assert thread_metrics(rows) == {"threads": 1, "in_thread": 1.0, "alone": 0.0, "gain": 1.0}
    assert thread_metrics([])["in_thread"] is None


def test_a_follow_up_naming_its_own_subject_is_searched_the_way_the_answerer_prefers_as_the_server_does():
    first, follow = "How do I set the default variant of an Aside?", "Which variants exist?"
    beside = beside_subject(follow, first)
    answerer = Answerer({beside: "doc:components/asides#variants"})
    rows = run_threads(answerer, CarrySubject(), [{"id": "t1", "turns": [first, follow],
                                                  "gold": ["doc:components/asides#variants"]}])
    assert rows[0].searched == beside and rows[0].in_thread_correct and not rows[0].alone_correct


def _question(qid: str, gold: str, answerable: bool = True) -> dict:
    return {"id": qid, "question": f"How do I connect the {qid} webhook integration?", "answerable": answerable, "gold": [gold] if answerable else [],
            "groups": [], "version": ""}


def test_a_thread_that_changes_subject_pairs_unrelated_questions_and_asks_the_second_in_thread_and_alone():
    questions = [_question("a", "doc:p#x"), _question("b", "doc:p#y"),  # same page: no change of subject
                 _question("c", "doc:q#z"), _question("u", "", answerable=False), _question("d", "doc:r#w"),
                 _question("e", "doc:s#v")]
    assert [(a["id"], b["id"]) for a, b in switch_pairs(questions)] == [("b", "c"), ("d", "e")]

    class Dragging:  # a condenser that pulls the earlier subject into every question
        def condense(self, question, history):  # noqa: ANN001, ANN201
            return f"{question} ({history[-1].question})" if history else question

    ask = "How do I connect the {} webhook integration?".format
    script = {ask("c"): "doc:q#z", ask("e"): "doc:s#v", f"{ask('c')} ({ask('b')})": "doc:q#z",
              f"{ask('e')} ({ask('d')})": "doc:r#w"}  # the old subject wins the second search
    answerer = Answerer(script)
    assert run_switches(answerer, Dragging(), questions) == {"pairs": 2, "in_thread": 0.5, "alone": 1.0, "rewritten": 2}
    assert run_switches(Answerer(script), CarrySubject(), questions) == {"pairs": 2, "in_thread": 1.0, "alone": 1.0,
                                                                         "rewritten": 0}
    assert run_switches(answerer, CarrySubject(), [])["in_thread"] is None
    given = Answerer(script)
    asked = {q["id"]: given.ask(q["question"], None) for q in questions}
    given.asked.clear()
    assert run_switches(given, CarrySubject(), questions, asked)["alone"] == 1.0 and given.asked == []  # not again


def _site(correct: float, recall: float, rows: list[dict], threads: list[dict] | None = None) -> dict:
    metrics = {"answer_correctness": correct, "quoted_chars_per_answer_p50": 300, "followups": thread_metrics([])}
    return {"generators": {"extractive": {"metrics": metrics, "rows": rows, "threads": threads or []},
                           "baseline-first-sentence": {"metrics": metrics, "rows": rows}},
            "retrieval_methods": {"hybrid": {"recall@5": recall, "mrr": 0.5, "recall@1": 0.3, "latency_ms_p50": 1,
                                             "latency_ms_p95": 2, "leaks": 0}}}


def _row(qid: str, answerable: bool, state: str, correct: bool | None, outcome: str = "") -> dict:
    outcome = outcome or ("answer" if state == "answered" else "refused")
    return {"id": qid, "question": f"question {qid}?", "kind": "fact" if answerable else "unanswerable",
            "groups": [], "answerable": answerable, "state": state, "correct": correct, "outcome": outcome,
            "gold_shown": correct, "gold": ["doc:a#b"] if answerable else [],
            "rank": 1, "claims": [{"text": "t", "status": "supported", "citations": [{"quote": "the quote given"}]}]}


def test_the_report_puts_the_sets_in_one_table_with_the_gap_to_the_tuned_set_and_lists_each_miss():
    rows = [_row("a1", True, "answered", True), _row("a2", True, "answered", False), _row("a3", True, "refused", False),
            _row("u1", False, "answered", None), _row("u2", False, "refused", None),
            _row("r1", True, "answered", True, "related"), _row("u3", False, "answered", None, "related")]
    thread = {"id": "t1", "turns": ["first?", "and then?"], "searched": "first, then?", "gold": ["doc:x"],
              "in_thread_state": "refused", "in_thread_cited": [], "in_thread_correct": False, "alone_state": "refused",
              "alone_cited": [], "alone_correct": False}
    sites = {"content": _site(0.7, 0.8, rows[:1]), "starlight": _site(0.45, 0.6, rows, [thread])}
    table = summary(sites)
    assert table["extractive"]["sites"]["starlight"]["retrieval:hybrid.recall@5"] == 0.6
    assert table["extractive"]["gap_to_tuned"]["starlight"]["answer_correctness"] == -0.25
    assert table["extractive"]["gap_to_tuned"]["starlight"]["followups.in_thread"] is None
    missed = failures(sites["starlight"])
    assert [(f["id"], f["why"]) for f in missed] == [
        ("a2", "an Answer without the gold fact"), ("a3", "not answered (refused)"),
        ("u1", "an Answer to a question the docs do not answer"),
        ("r1", "the gold fact only among Related passages"),
        ("t1", "the follow-up, asked in its thread, cites no gold section")]
    assert missed[0]["quotes"] == ["the quote given"] and missed[0]["gold"] == ["doc:a#b"]  # baselines are not listed
    report = {"sites": sites, "skipped": ["the cypress-docs corpus is not at /x; set CYPRESS_DOCS to its folder"],
              "summary": table, "calibration": {}, "threshold_failures": []}
    text = markdown(report)
    assert "| metric | content | starlight | starlight − content |" in text
    assert "| answer correct | 0.7 | 0.45 | -0.25 |" in text and "| quoted chars per answer, median | 300 | 300 | +0 |" in text
    assert "Skipped: the cypress-docs corpus is not at /x" in text

