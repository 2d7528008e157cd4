"""Three honest outcomes: an Answer only when the gate is sure, Related passages when it is not, else a refusal.

"Verified" proves a quote exists; visitors read the badge as "this answers my
question". These tests pin the line between the outcomes on small chunks:
the gate's confidence decides Answer or Related passages, a soft refusal
(the closest sentence is only near the question) shows the closest passages
labelled as such, and a question about something the docs found never
mention is still "not in the docs", with no passage offered.
"""

from __future__ import annotations

from answer.contract.record import from_json, outcome_of, to_json
from answer.gate import AnswerGate, Thresholds
from answer.gate.confidence import confidence, signals
from answer.gate.features import AnswerExtractor
from answer.gate.weights import Confidence
from answer.generate import ExtractiveGenerator
from answer.pipeline import Answerer
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import make_chunk

RETENTION = make_chunk("ops/retention", "retention", "Events are retained for 30 days on every plan. "
                       "Retained events can be replayed from the dashboard.", title="Retention")
EXPORT = make_chunk("ops/export", "export", "Export retained events as CSV from the Events page.", title="Export")


class Fixed:
    """A retriever that always finds the same sections (retrieval is not under test here)."""

    def __init__(self, *chunks) -> None:  # noqa: ANN002
        self.chunks = chunks

    def search(self, question: str, viewer: Viewer, **_: object):  # noqa: ANN201
        return renumber(question, viewer, [(c, 1.0 - i / 10) for i, c in enumerate(self.chunks)])


def _answerer(gate: AnswerGate, *chunks) -> Answerer:  # noqa: ANN002
    return Answerer(Fixed(*chunks), ExtractiveGenerator(judge=gate), judge=gate)


def test_a_sure_pick_is_an_answer_and_an_unsure_one_related_passages_with_the_same_quotes():
    question = "How long are events retained?"
    sure = _answerer(AnswerGate(AnswerExtractor()), RETENTION, EXPORT).ask(question, Viewer.anonymous())
    assert sure.state == "answered" and sure.outcome == "answer" and sure.confidence is not None
    line = Confidence(bias=0.0, coefficients=(), answer_at=0.99)  # 0.5 for every pick: never sure enough
    unsure = _answerer(AnswerGate(AnswerExtractor(), confidence=line), RETENTION, EXPORT).ask(question, Viewer.anonymous())
    assert unsure.state == "answered" and unsure.outcome == "related" and unsure.related
    assert [c.citations[0].quote for c in unsure.claims] == [c.citations[0].quote for c in sure.claims]


def test_a_soft_refusal_shows_the_closest_passages_never_as_an_answer():
    strict = Thresholds(floor=5.0)  # nothing can reach it: every span is only near the question
    answer = _answerer(AnswerGate(AnswerExtractor(), strict), RETENTION, EXPORT).ask(
        "How long are events retained?", Viewer.anonymous())
    assert answer.outcome == "related" and answer.claims
    assert all(c.role != "direct" for c in answer.claims)
    assert any("does not address the question closely enough" in p.text for p in answer.problems)


def test_what_the_gate_refused_is_never_an_answer_even_when_a_closest_passage_would_pass_alone():
    # The pick tries no span at all (direct_tries=0), so it refuses; the closest passages it then offers would
    # pass the judge's direct test on their own, and must still be shown as Related passages only.
    answer = _answerer(AnswerGate(AnswerExtractor(), Thresholds(direct_tries=0)), RETENTION, EXPORT).ask(
        "How long are events retained?", Viewer.anonymous())
    assert answer.outcome == "related" and answer.claims and all(c.role != "direct" for c in answer.claims)


def test_nothing_is_offered_when_the_docs_found_never_mention_what_is_asked():
    answer = _answerer(AnswerGate(AnswerExtractor(), Thresholds(floor=5.0)), RETENTION, EXPORT).ask(
        "Is there a Terraform provider for retained events?", Viewer.anonymous())
    assert answer.outcome == "refused" and answer.state == "refused" and not answer.claims
    assert any("Terraform" in p.text for p in answer.problems)


def test_related_passages_need_to_come_close():
    far = Thresholds(floor=5.0, related_floor=5.0)
    answer = _answerer(AnswerGate(AnswerExtractor(), far), RETENTION, EXPORT).ask(
        "How long are events retained?", Viewer.anonymous())
    assert answer.outcome == "refused" and not answer.claims


def test_the_outcome_is_in_the_record_and_read_back():
    answer = _answerer(AnswerGate(AnswerExtractor(), Thresholds(floor=5.0)), RETENTION, EXPORT).ask(
        "How long are events retained?", Viewer.anonymous())
    data = to_json(answer.record(), full=True)
    assert data["outcome"] == "related"
    assert from_json(data).outcome == "related"
    assert from_json({"answer_id": "a", "question": "q", "state": "answered"}).outcome == "answer"  # rows before outcomes
    assert outcome_of("unverified", related=False) == "refused"


def test_confidence_rises_with_the_margin_over_other_sections():
    gate = AnswerGate(AnswerExtractor())
    question = gate.question("How long are events retained?")
    rset = Fixed(RETENTION, EXPORT).search(question.text, Viewer.anonymous())
    ranked = gate.extractor.rank(question, rset)
    values = signals(question, ranked[:1], ranked, rset)
    assert values["margin"] > 0 and values["top_hit"] == 1.0
    line = Confidence(bias=-1.0, coefficients=(("margin", 4.0),))
    assert confidence(values, line) > confidence(values | {"margin": 0.0}, line)


def test_words_no_section_uses_show_the_closest_passages_only_when_they_score_as_an_answer_would():
    """Most of a question's words in no section found is as often the visitor's wording as a topic the docs lack:
    the closest passages are shown, naming those words, but only when they score as an answer must."""
    asked = "Does the dashboard have a dark mode?"
    near = _answerer(AnswerGate(AnswerExtractor(), Thresholds(floor=0.45, related_floor=0.45)), RETENTION, EXPORT
                     ).ask(asked, Viewer.anonymous())
    assert near.outcome == "related" and near.claims and all(c.role != "direct" for c in near.claims)
    assert near.unmentioned == ("dark", "mode")
    far = _answerer(AnswerGate(AnswerExtractor(), Thresholds(related_floor=0.45)), RETENTION, EXPORT).ask(
        asked, Viewer.anonymous())  # the same passages, below an answer's floor: not offered as close
    assert far.outcome == "refused" and not far.claims and far.unmentioned == ("dark", "mode")
    assert from_json(to_json(near.record(), full=True)).unmentioned == ("dark", "mode")
    from web.agents import reason_for

    assert reason_for(near).endswith("None of the docs sections found mentions “dark” or “mode”.")  # an agent's reason


def test_the_page_and_agents_name_the_words_no_section_uses_beside_related_passages():
    from html import unescape

    from starlette.testclient import TestClient

    from tests.fakes import HashEmbedder
    from tests.memory_index import MemoryIndex
    from web.app import create_app
    from web.settings import Settings

    gate = AnswerGate(AnswerExtractor(), Thresholds(floor=0.45, related_floor=0.45))
    app = TestClient(create_app(Settings(), answerer=_answerer(gate, RETENTION, EXPORT),
                                store=MemoryIndex(HashEmbedder(), [RETENTION, EXPORT])))
    page = unescape(app.post("/ask", data={"question": "Does the dashboard have a dark mode?"}).text)
    banner = page.index("The docs don't say this directly; these passages are the closest.")
    assert page.index("None of the docs sections found mentions “dark” or “mode”.") > banner
    data = app.post("/api/ask", json={"question": "Does the dashboard have a dark mode?"}).json()
    assert data["outcome"] == "related" and data["unmentioned"] == ["dark", "mode"]


class Quoting:
    """A model-like generator that quotes one sentence of the first section found, streaming it when asked to."""

    name = "quoting"

    def __init__(self, quote: str) -> None:
        self.quote = quote

    def _claim(self):  # noqa: ANN202
        from answer.contract.draft import DraftClaim, Quote

        return DraftClaim((Quote("c1", self.quote),), self.quote)

    def draft(self, question: str, rset, *, feedback=()):  # noqa: ANN001, ANN201
        from answer.contract.draft import Draft

        return Draft(refused=False, claims=(self._claim(),))

    def draft_stream(self, question: str, rset, *, feedback=()):  # noqa: ANN001, ANN201
        from answer.contract.draft import Draft, PartialClaim

        yield PartialClaim(self._claim())
        yield Draft(refused=False, claims=(self._claim(),))


def test_a_model_quoting_the_closest_passage_is_related_never_an_answer_streamed_or_not():
    """Found in review: a streamed claim went on the page whatever the gate judged it, and the claims after it were
    judged as following an answer, so a Related passage came out as an Answer."""
    gate = AnswerGate(AnswerExtractor(), Thresholds(floor=0.45, related_floor=0.45))
    for stream in (True, False):
        answerer = Answerer(Fixed(RETENTION, EXPORT), Quoting("Retained events can be replayed from the dashboard."),
                            judge=gate, stream=stream)
        answer = answerer.ask("Does the dashboard have a dark mode?", Viewer.anonymous())
        assert answer.outcome == "related" and answer.claims, stream
        assert answer.unmentioned == ("dark", "mode")  # the gate's words, whichever generator drafted
    below = Answerer(Fixed(RETENTION, EXPORT), Quoting("Retained events can be replayed from the dashboard."),
                     judge=AnswerGate(AnswerExtractor(), Thresholds(related_floor=0.45)), stream=False)
    assert below.ask("Does the dashboard have a dark mode?", Viewer.anonymous()).outcome == "refused"  # under 0.75


def test_a_name_the_docs_never_use_refuses_even_beside_a_passage_that_scores_as_an_answer():
    gate = AnswerGate(AnswerExtractor(), Thresholds(floor=0.3, related_floor=0.3))
    answer = _answerer(gate, RETENTION, EXPORT).ask("Can retained events be replayed with Terraform?",
                                                    Viewer.anonymous())
    assert answer.outcome == "refused" and not answer.claims
    assert any("Terraform" in p.text for p in answer.problems)
