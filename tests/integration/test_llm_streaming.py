"""Verified quotes reach the page while the model is still writing, and nothing shown is ever taken back.

The scripted server streams the reply in small chunks and can stop mid-reply
until the test lets it go on, so a test can see exactly what was on the page
before the model finished: only claims that are complete, verified and on
point, and the finished answer starts with those same claims.
"""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from answer.llm.client import LiteLLMGenerator
from answer.pipeline import Answerer, Done, Retrieved, Shown
from retrieval.services import open_retriever
from tests.conftest import CONTENT
from tests.fakes import LIMITS, REFUNDS
from tests.integration.test_llm_adversarial import ANON, REFUND_QUOTE, RETRIES, FixedRetriever
from tests.scripted_llm import HoldingLLM, Reply, ScriptedLLM, quoted
from web.app import create_app
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

PRO_RATA = "Annual plans are refunded pro rata."
QUESTION = "How long are refunds available?"


def reply(*claims: tuple[str, str, str]) -> str:
    return json.dumps({"claims": [{"quotes": [{"handle": h, "quote": q}], "claim": text} for h, q, text in claims],
                       "refused": False})


def answerer(server: ScriptedLLM, *, stream: bool = True) -> Answerer:
    generator = LiteLLMGenerator("openai/streaming", api_base=server.url, api_key="x", timeout=5, max_retries=0)
    return Answerer(FixedRetriever(REFUNDS, LIMITS, RETRIES), generator, stream=stream)


def test_the_first_verified_claim_is_on_the_page_before_the_model_finishes():
    text = reply(("c1", REFUND_QUOTE, REFUND_QUOTE), ("c1", PRO_RATA, "Annual plans are refunded pro rata."))
    go_on = threading.Event()
    with ScriptedLLM(Reply(text, hold=go_on, hold_after=f'"claim": "{REFUND_QUOTE}"}}')).running() as server:
        events = answerer(server).events(QUESTION, ANON)
        assert isinstance(next(events), Retrieved)
        early = next(events)
        assert isinstance(early, Shown)
        assert [c.quote for c in early.claim.citations] == [REFUND_QUOTE]
        assert not go_on.is_set()  # the server is still holding the rest of the reply
        go_on.set()
        rest = list(events)
        done = rest[-1]
        assert isinstance(done, Done) and done.answer.state == "answered"
        answer = done.answer
        assert answer.claims[0] == early.claim  # what was shown first stays first, unchanged
        assert [e.claim for e in rest if isinstance(e, Shown)] == list(answer.claims[1:])  # the rest follow, none twice
        assert answer.timings["first_claim"] < answer.timings["generate_1"]


def test_a_claim_that_fails_verification_is_never_streamed():
    text = reply(("c1", "Refunds are available for 90 days.", "Refunds last 90 days."),
                 ("c1", REFUND_QUOTE, REFUND_QUOTE))
    go_on = threading.Event()
    with ScriptedLLM(Reply(text, hold=go_on, hold_after='"Refunds last 90 days."}'), REFUND_QUOTE).running() as server:
        events = answerer(server).events(QUESTION, ANON)
        assert isinstance(next(events), Retrieved)
        go_on_later = threading.Timer(0.5, go_on.set)  # if a bad claim were streamed it would arrive before this
        go_on_later.start()
        following = next(events)
        assert go_on.is_set()  # nothing came while the server held the reply after the paraphrased quote
        assert isinstance(following, Shown) and [c.quote for c in following.claim.citations] == [REFUND_QUOTE]
        done = list(events)[-1]
        assert isinstance(done, Done)
        answer = done.answer
        assert "Refunds last 90 days." not in [c.text for c in answer.claims]
        assert answer.degraded  # the rejected quote is counted, as without streaming


def test_a_reply_cut_off_after_a_verified_claim_keeps_that_claim_and_the_audit_keeps_what_arrived():
    first = f'"claim": "{REFUND_QUOTE}"}}'
    text = reply(("c1", REFUND_QUOTE, REFUND_QUOTE), ("c1", PRO_RATA, PRO_RATA))
    with ScriptedLLM(Reply(text, cut_after=first), Reply.error(503)).running() as server:
        answer = answerer(server).ask(QUESTION, ANON)
        assert answer.state == "answered"
        assert [c.text for c in answer.claims] == [REFUND_QUOTE]
        attempt = answer.attempts[0]
        assert attempt.used and attempt.error and attempt.raw.startswith('{"claims"') and PRO_RATA not in attempt.raw


def test_a_retry_adds_claims_after_those_already_shown_and_never_repeats_them():
    first = reply(("c1", REFUND_QUOTE, REFUND_QUOTE), ("c2", "Payloads are limited to 1 MB.", "Payloads up to 1 MB."))
    retry = reply(("c1", REFUND_QUOTE, REFUND_QUOTE), ("c1", PRO_RATA, PRO_RATA))
    with ScriptedLLM(first, retry).running() as server:
        events = list(answerer(server).events(QUESTION, ANON))
        streamed = [e.claim for e in events if isinstance(e, Shown)]
        done = events[-1]
        assert isinstance(done, Done)
        answer = done.answer
        assert len(server.requests) == 2
        assert [c.text for c in streamed] == [REFUND_QUOTE, PRO_RATA] == [c.text for c in answer.claims]
        assert [a.used for a in answer.attempts] == [True, True]  # both drafts gave a claim that is shown


def test_streaming_and_a_single_reply_give_the_same_answer():
    text = reply(("c1", REFUND_QUOTE, REFUND_QUOTE), ("c1", PRO_RATA, PRO_RATA))
    with ScriptedLLM(text, text).running() as server:
        streamed = answerer(server).ask(QUESTION, ANON)
        whole = answerer(server, stream=False).ask(QUESTION, ANON)
        assert [server.requests[0].get("stream"), server.requests[1].get("stream")] == [True, None]
    assert [(c.text, c.role, c.status) for c in streamed.claims] == [(c.text, c.role, c.status) for c in whole.claims]
    assert streamed.state == whole.state == "answered"


class RetryCountLLM(HoldingLLM):
    """Quotes the passage it is shown that states the retry count, then holds the rest of its reply."""

    def reply_to(self, body):  # noqa: ANN001, ANN201
        handle, sentence = quoted(body, r"By default a delivery gets up to[^.]*\.")
        later = quoted(body, r"After the last retry fails[^.]*\.")
        text = reply((handle, sentence, "A delivery gets up to 16 attempts by default."), (*later, "Then it is failed."))
        return Reply(text, hold=self.go_on, hold_after="16 attempts by default.\"}")


def test_the_page_stream_sends_the_verified_quote_while_the_model_is_still_writing(content_index, real_embedder, tmp_path):
    settings = Settings(content_dir=CONTENT, data_dir=tmp_path)
    with RetryCountLLM().running() as llm:
        generator = LiteLLMGenerator("openai/holding", api_base=llm.url, api_key="x", timeout=30, max_retries=0)
        answerer = Answerer(open_retriever(settings, store=content_index, embedder=real_embedder), generator)
        with serve(create_app(settings, answerer=answerer, store=content_index)) as base, \
                httpx.Client(base_url=base, timeout=60) as client, \
                client.stream("GET", "/ask/stream", params={"question": "How many times does Ferrydeck retry a failed webhook delivery?"}) as stream:
            events: list[tuple[str, str]] = []
            lines = stream.iter_lines()
            name, data = "", []
            for line in lines:
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif not line and name:
                    events.append((name, "\n".join(data)))
                    name, data = "", []
                    if events[-1][0] == "claim":
                        break
            held = not llm.go_on.is_set()  # the model still holds the rest of its reply
            llm.go_on.set()
            rest = "\n".join(lines)
        assert held and [n for n, _ in events] == ["retrieved", "claim"]
        assert "16 attempts" in events[-1][1] and "status-supported" in events[-1][1]
        assert "event: done" in rest and "marked" in rest  # the second claim and the finished turn follow
