"""A retry never loses what verified: the answer comes from the best draft, not the last one.

The scripted server replays the drafts a real 1.5B model wrote on a held-out
site: a first draft with one verified, on-point claim and three copies of its
quote cited to the wrong passages, then a retry that refuses. The retry is told
what to keep; the audit keeps both drafts and says which one the answer used.
"""

from __future__ import annotations

import json

import pytest

from answer.contract.record import from_json, to_json
from answer.gate import Judgement
from answer.llm.client import LiteLLMGenerator
from answer.pipeline import Answerer
from tests.fakes import make_chunk
from tests.integration.test_llm_adversarial import ANON, FixedRetriever, draft
from tests.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.integration

CASCADE = "When an imported stylesheet and a component's own style rule have equal specificity, the last one imported wins."
STYLES = make_chunk("styling/order", "cascade", f"Stylesheets apply in import order. {CASCADE}",
                    title="Styling", heading="Cascade order")
SCOPED = make_chunk("styling/scoped", "scoped-styles", "Component styles are scoped to the component that declares them.",
                    title="Styling", heading="Scoped styles")
GLOBAL = make_chunk("styling/global", "global-styles", "Global stylesheets are imported once, in the root layout.",
                    title="Styling", heading="Global styles")
MODULES = make_chunk("styling/modules", "css-modules", "CSS Modules give every class a unique name at build time.",
                     title="Styling", heading="CSS Modules")
QUESTION = "When an imported stylesheet and a component's own style rule have equal specificity, which one is applied?"
CLAIM = "With equal specificity, the last one imported wins."
FIRST = draft(*(([(h, CASCADE)], CLAIM) for h in ("c1", "c2", "c3", "c4")))
REFUSAL = json.dumps({"refused": True})


def ask(server: ScriptedLLM, judge=None):  # noqa: ANN001, ANN201
    generator = LiteLLMGenerator("openai/scripted", api_base=server.url, api_key="x", timeout=5, max_retries=0)
    return Answerer(FixedRetriever(STYLES, SCOPED, GLOBAL, MODULES), generator, judge=judge).ask(QUESTION, ANON)


def test_a_retry_that_refuses_does_not_erase_the_first_drafts_verified_claim():
    with ScriptedLLM(FIRST, REFUSAL).running() as server:
        answer = ask(server)
        assert (answer.state, answer.degraded) == ("answered", True)  # shown, with what was dropped visible
        assert [(c.text, c.status) for c in answer.claims] == [(CLAIM, "supported")]
        assert [c.handle for c in answer.claims[0].citations] == ["c1"]
        assert len(server.requests) == 2
        retry_prompt = server.prompts[1]
        assert f'claim 1 passed verification; keep it and its quotes unchanged: c1 "{CASCADE}"' in retry_prompt
        assert "claim 2: quote not in c2 (it is in c1)" in retry_prompt
        # The audit keeps both drafts, the refusal included, and says which one the answer was built from.
        record = from_json(to_json(answer.record(), full=True))
        assert [a.used for a in record.attempts] == [True, False]
        assert [a.draft.refused for a in record.attempts if a.draft] == [False, True]
        assert record.attempts[1].raw == REFUSAL


def test_a_quote_cited_to_the_wrong_passage_is_never_reattributed_even_when_the_retry_refuses():
    misattributed = draft(([("c1", CASCADE.replace("When", "Whenever"))], CLAIM), ([("c2", CASCADE)], CLAIM))
    with ScriptedLLM(misattributed, REFUSAL).running() as server:
        answer = ask(server)
        assert (answer.state, answer.claims) == ("refused", ())  # nothing verified in either draft: nothing shown
        assert "quote not in c2 (it is in c1)" in server.prompts[1]
        assert [q.check.verified for q in answer.attempts[0].quotes] == [False, False]


class OnlyAbout:
    """An answer gate that passes claims mentioning `term`, setting the others aside."""

    def __init__(self, term: str) -> None:
        self.term = term

    def judge(self, question, claims, rset, *, committed=0):  # noqa: ANN001, ANN201
        kept = tuple(claims[:committed]) + tuple(c for c in claims[committed:] if self.term in c.text)
        return Judgement(kept, bool(kept), () if kept else (f"no claim mentions {self.term}",))


def test_the_best_draft_is_chosen_by_on_point_claims_not_by_verified_ones():
    beside_the_point = draft(([("c2", SCOPED.text)], SCOPED.text))
    with ScriptedLLM(FIRST, beside_the_point).running() as server:
        answer = ask(server, judge=OnlyAbout("imported"))
        assert answer.state == "answered"
        assert [c.text for c in answer.claims] == [CLAIM]
        assert [a.used for a in answer.attempts] == [True, False]
