"""Provider-native citations through the real litellm client, the real Answerer and the real verifier.

Scripted servers on 127.0.0.1 speak Anthropic Messages (text blocks with
`citations`) and Gemini generateContent (`groundingMetadata`). Each adversarial
citation must end exactly as the JSON path ends it: a phantom or a quote that
is not verbatim is dropped and retried once with the finding, a malformed reply
is a failed verification retried once, a restricted chunk never reaches the
provider nor the reader. A range that disagrees with the chunk is recorded for
the audit, and the cited text is what gets verified.
"""

from __future__ import annotations

import json

import pytest

from answer.gate import AnswerGate, Thresholds
from answer.gate.features import AnswerExtractor
from answer.gate.vocabulary import Vocabulary
from answer.llm.client import LiteLLMGenerator
from answer.llm.provider_citations import ProviderCitationGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from retrieval.viewer import Viewer
from tests.fakes import LIMITS, REFUNDS
from tests.integration.test_llm_adversarial import ANON, REFUND_QUOTE, RETRIES, SECRET, FixedRetriever
from tests.scripted_llm import Reply
from tests.scripted_providers import (
    ScriptedProvider,
    anthropic_message,
    cite,
    gemini_response,
    grounded,
    support,
)

pytestmark = pytest.mark.integration

MODELS = {"anthropic": "anthropic/claude-scripted", "gemini": "gemini/gemini-scripted"}
PAYLOAD = "The maximum payload size is 256 KB."
PARAPHRASE = "You can get your money back up to 14 days after paying."


def reply(wire: str, *claims: tuple[str, list[tuple[int | str, str]]]) -> dict:
    """A provider response citing (document, text) pairs per claim: an index for Anthropic, a uri for Gemini."""
    if wire == "anthropic":
        return anthropic_message(*((text, [cite(doc, quote) for doc, quote in cited]) for text, cited in claims))
    text = " ".join(t for t, _ in claims)
    chunks, supports = [], []
    for claim, cited in claims:
        indices = []
        for doc, quote in cited:
            chunks.append(grounded(doc if isinstance(doc, str) else f"c{doc + 1}", quote))
            indices.append(len(chunks) - 1)
        supports.append(support(claim, *indices, text=text))
    return gemini_response(text, chunks, supports)


def good(wire: str) -> dict:
    return reply(wire, (REFUND_QUOTE, [(0, REFUND_QUOTE)]))


@pytest.fixture(params=["anthropic", "gemini"])
def provider(request):
    with ScriptedProvider(request.param).running() as server:
        yield server


def ask(server, *chunks, question="How long are refunds available?", viewer=ANON, leaky=False, audit=None,
        judge=None, timeout=5.0, max_retries=1):
    client = LiteLLMGenerator(MODELS[server.wire], api_base=server.url, api_key="x", timeout=timeout,
                              max_retries=max_retries, backoff=0.01)
    answerer = Answerer(FixedRetriever(*(chunks or (REFUNDS, LIMITS, RETRIES)), leaky=leaky),
                        ProviderCitationGenerator(client), audit=audit, judge=judge)
    return answerer.ask(question, viewer)


def test_correct_citations_are_verified_shown_and_audited_beside_the_verdict(provider, tmp_path):
    provider.push(good(provider.wire))
    audit = SQLiteAnswerLog(tmp_path / "answers.sqlite3")
    answer = ask(provider, audit=audit)
    assert (answer.state, answer.degraded) == ("answered", False)
    assert [(c.handle, c.quote) for c in answer.claims[0].citations] == [("c1", REFUND_QUOTE)]
    assert answer.generator == f"{provider.wire}-citations:{MODELS[provider.wire]}"
    assert len(provider.requests) == 1
    # One document per chunk, in handle order, each the chunk's exact text.
    assert provider.documents[0] == [REFUNDS.text, LIMITS.text, RETRIES.text]
    assert "Refunds › Refund windows" in provider.prompts[0]
    [check] = audit.get(answer.id).attempts[0].quotes
    assert (check.check.verified, check.check.kind, check.provider["document"]) == (True, "verified", "c1")
    raw = check.provider["raw"]
    assert REFUND_QUOTE in json.dumps(raw)  # the provider's own citation, as received


def test_anthropic_documents_ask_for_citations_and_a_matching_range_is_recorded():
    with ScriptedProvider("anthropic").running() as server:
        server.push(anthropic_message("Based on the docs, ", (REFUND_QUOTE, [cite(0, REFUND_QUOTE, 0, len(REFUND_QUOTE))]), "."))
        answer = ask(server)
    [document, *_] = [p for p in server.requests[0]["messages"][0]["content"] if p["type"] == "document"]
    assert document == {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": REFUNDS.text},
                        "title": "Refunds › Refund windows", "citations": {"enabled": True}}
    assert server.paths == ["/v1/messages"]
    # Uncited connective text is not a claim: nothing was dropped, nothing retried.
    assert (answer.state, answer.degraded, [c.text for c in answer.claims]) == ("answered", False, [REFUND_QUOTE])
    assert answer.attempts[0].quotes[0].provider["range"] == "matches"


@pytest.mark.parametrize("start, end, recorded", [
    (500, 600, "outside the chunk"),
    (52, 87, "the chunk holds 'Annual plans are refunded pro rata.'"),
])
def test_a_range_that_disagrees_is_recorded_and_the_cited_text_is_what_is_verified(start, end, recorded):
    with ScriptedProvider("anthropic").running() as server:
        server.push(anthropic_message((REFUND_QUOTE, [cite(0, REFUND_QUOTE, start, end)])))
        answer = ask(server)
    assert answer.state == "answered"
    citation = answer.claims[0].citations[0]
    assert REFUNDS.text[citation.start:citation.end] == REFUND_QUOTE  # located by the verifier, not by the range
    assert recorded in answer.attempts[0].quotes[0].provider["range"]


def test_a_document_we_never_sent_is_a_phantom_retried_once_with_the_finding(provider):
    never_sent = 7 if provider.wire == "anthropic" else "c9"
    provider.push(reply(provider.wire, (REFUND_QUOTE, [(never_sent, REFUND_QUOTE)])), good(provider.wire))
    answer = ask(provider)
    assert answer.state == "answered" and answer.phantoms == 1
    assert len(provider.requests) == 2
    assert "does not exist; cite only c1, c2, c3" in provider.prompts[1]
    assert answer.attempts[0].quotes[0].check.kind == "phantom"


def test_a_grounding_index_past_the_grounding_chunks_is_a_phantom():
    with ScriptedProvider("gemini").running() as server:
        bad = gemini_response(REFUND_QUOTE, [grounded("c1", REFUND_QUOTE)], [support(REFUND_QUOTE, 4, text=REFUND_QUOTE)])
        server.push(bad, bad)
        answer = ask(server)
    assert (answer.state, answer.claims, answer.phantoms) == ("unverified", (), 2)
    assert "grounding chunk 4 does not exist" in server.prompts[1]


def test_cited_text_not_in_the_chunk_is_rejected_retried_once_then_unverified(provider):
    paraphrase = reply(provider.wire, ("Refunds take 14 days.", [(0, PARAPHRASE)]))
    provider.push(paraphrase, paraphrase, good(provider.wire))
    answer = ask(provider)
    assert (answer.state, answer.claims, answer.degraded) == ("unverified", (), True)
    assert len(provider.requests) == 2
    assert "quote not in c1" in provider.prompts[1]
    assert answer.hidden == ("Refunds take 14 days.",)


def test_text_cited_from_another_document_is_rejected_with_a_hint_never_reattributed(provider):
    misattributed = reply(provider.wire, (PAYLOAD, [(0, PAYLOAD)]))
    provider.push(misattributed, misattributed)
    answer = ask(provider, question="What is the payload limit?")
    assert answer.state == "unverified" and answer.claims == ()
    assert "it is in c2" in provider.prompts[1]


def test_a_restricted_chunk_is_never_sent_nor_shown(provider):
    secret = "Support can override refunds up to 90 days after the charge using the admin console."
    # The retriever leaks a staff chunk (c2). The provider only ever sees c1; it cites the secret anyway, by the
    # restricted chunk's own handle (Gemini's uri), by an index past what was sent, and as text of c1.
    restricted = "c2" if provider.wire == "gemini" else 1
    leak = reply(provider.wire, ("Support can override refunds up to 90 days.", [(restricted, secret), (0, secret)]))
    provider.push(leak, leak)
    answer = ask(provider, REFUNDS, SECRET, leaky=True)
    assert answer.retrieval.get("c2").chunk.id == SECRET.id
    assert (answer.state, answer.claims) == ("unverified", ())
    assert all(docs == [d for d in docs if "override" not in d] for docs in provider.documents)
    assert all(len(docs) == 1 for docs in provider.documents)
    # Only documents sent in this request can be cited: the restricted chunk's handle is a phantom like any other.
    assert [q.check.kind for q in answer.attempts[0].quotes] == ["phantom", "not-verbatim"]
    assert "cite only c1" in provider.prompts[1] and "cite only c1," not in provider.prompts[1]
    assert "override" not in json.dumps([c.text for c in answer.claims])
    # A staff reader's request carries the chunk, and the same citation verifies.
    provider.push(reply(provider.wire, ("Support can override refunds up to 90 days after the charge.", [(1, secret)])))
    staff = ask(provider, REFUNDS, SECRET, viewer=Viewer.of(["staff"]), question="How late can support override a refund?")
    assert staff.state == "answered" and staff.claims[0].citations[0].chunk_id == SECRET.id


MALFORMED = {
    "anthropic": anthropic_message((REFUND_QUOTE, [{"type": "char_location", "cited_text": REFUND_QUOTE, "document_index": "first"}])),
    "gemini": gemini_response(REFUND_QUOTE, [grounded("c1", REFUND_QUOTE)],
                              [{"segment": {"text": REFUND_QUOTE}, "groundingChunkIndices": "0"}]),
}


def test_a_malformed_citation_is_a_failed_verification_retried_once(provider):
    provider.push(MALFORMED[provider.wire], good(provider.wire))
    answer = ask(provider)
    assert answer.state == "answered"
    assert len(provider.requests) == 2
    assert "could not be used" in provider.prompts[1]
    assert "first" in answer.attempts[0].raw or '"0"' in answer.attempts[0].raw  # what the provider said, kept


def test_an_empty_reply_twice_is_unverified(provider):
    empty = anthropic_message() if provider.wire == "anthropic" else gemini_response("")
    provider.push(empty, empty)
    answer = ask(provider)
    assert (answer.state, answer.claims) == ("unverified", ())
    assert all("empty reply" in a.error for a in answer.attempts)


def test_an_answer_without_any_citation_is_dropped_retried_and_kept_only_for_the_audit(provider):
    uncited = anthropic_message("Refunds are available for 90 days.") if provider.wire == "anthropic" \
        else gemini_response("Refunds are available for 90 days.")
    provider.push(uncited, uncited)
    answer = ask(provider)
    assert (answer.state, answer.claims) == ("unverified", ())
    assert answer.hidden == ("Refunds are available for 90 days.",)
    assert "no verified quote" in provider.prompts[1]


def test_a_refusal_is_refused_without_a_retry(provider):
    provider.push(anthropic_message("NOT IN THE DOCS") if provider.wire == "anthropic" else gemini_response("NOT IN THE DOCS"))
    answer = ask(provider, question="Does Ferrydeck support carrier pigeons?")
    assert (answer.state, answer.claims, answer.degraded) == ("refused", (), False)
    assert len(provider.requests) == 1


def test_a_wrong_number_is_unsupported_and_never_shown(provider):
    wrong = reply(provider.wire, ("Refunds are available within 90 days of the charge.", [(0, REFUND_QUOTE)]))
    provider.push(wrong, wrong)
    answer = ask(provider)
    assert answer.state == "unverified" and answer.claims == ()
    assert "90 days" not in json.dumps([c.text for c in answer.claims])


def test_a_transient_error_is_retried_at_the_transport_level(provider):
    provider.push(Reply.error(500), good(provider.wire))
    answer = ask(provider)
    assert answer.state == "answered"
    assert len(provider.requests) == 2 and provider.requests[0] == provider.requests[1]


def test_verified_but_beside_the_point_citations_meet_the_answer_gate(provider):
    # The provider cites, verbatim, a sentence that does not answer: verified, supported, and still not an answer.
    beside = reply(provider.wire, (PAYLOAD, [(1, PAYLOAD)]))
    provider.push(beside)
    texts = [REFUNDS.text, LIMITS.text, RETRIES.text]
    judge = AnswerGate(AnswerExtractor(vocabulary=lambda: Vocabulary.from_texts(texts)), Thresholds(floor=0.5, support_floor=0.4))
    answer = ask(provider, judge=judge, question="How many times are failed deliveries retried?")
    assert (answer.state, answer.claims) == ("refused", ())
    assert answer.attempts[0].quotes[0].check.verified  # the citation itself was fine
    assert any("not an answer" in p.text or "does not answer" in p.text for p in answer.problems)


# -- the written answer (LLM_ROLE=write): the provider cites the shown quotes, the checker decides -----------------

def write(server, question="How long are refunds available?"):  # noqa: ANN001, ANN201
    from answer.contract.support import DeterministicChecker
    from answer.contract.written import Writer
    from answer.gate import AnswerGate
    from answer.gate.features import AnswerExtractor
    from answer.generate import ExtractiveGenerator
    from answer.llm.provider_citations import CitedWriting

    client = LiteLLMGenerator(MODELS[server.wire], api_base=server.url, api_key="x", timeout=5.0, max_retries=0)
    gate = AnswerGate(AnswerExtractor())
    answerer = Answerer(FixedRetriever(REFUNDS, LIMITS, RETRIES), ExtractiveGenerator(judge=gate), judge=gate,
                        writer=Writer(CitedWriting(client), DeterministicChecker(supported_at=1.0)))
    return answerer.ask(question, ANON)


def test_a_written_sentence_the_provider_cites_is_shown_resting_on_that_quote(provider):
    sentence = "Refunds are available within 14 days of the charge."
    provider.push(reply(provider.wire, (sentence, [(0, REFUND_QUOTE)])) if provider.wire == "anthropic"
                  else reply(provider.wire, (sentence, [("1", REFUND_QUOTE)])))
    answer = write(provider)
    assert answer.outcome == "answer" and answer.written is not None and answer.written.shown
    [shown] = answer.written.sentences
    assert shown.text == sentence and shown.passages == (1,)
    assert answer.written.passages[0].quote == REFUND_QUOTE
    # The provider was sent the shown quotes as its documents, not the retrieved sections.
    assert provider.documents[0] == [p.quote for p in answer.written.passages]
    assert "NOT ANSWERED" in json.dumps(provider.requests[0])


def test_a_written_sentence_citing_a_document_never_sent_or_moving_a_number_is_not_shown(provider):
    never_sent = ("Refunds are available within 14 days of the charge.", [(7, REFUND_QUOTE)] if provider.wire ==
                  "anthropic" else [("c9", REFUND_QUOTE)])
    moved = ("Refunds are available within 30 days of the charge.", [(0, REFUND_QUOTE)] if provider.wire ==
             "anthropic" else [("1", REFUND_QUOTE)])
    provider.push(reply(provider.wire, never_sent, moved))
    answer = write(provider)
    assert answer.outcome == "answer" and answer.written is not None
    assert answer.written.sentences == ()
    assert {s.status for s in answer.written.dropped} >= {"unknown quote"}
    assert any("30 days" in s.text for s in answer.written.dropped)


def test_the_provider_saying_the_quotes_do_not_answer_leaves_the_offline_answer(provider):
    provider.push(anthropic_message("NOT ANSWERED") if provider.wire == "anthropic" else gemini_response("NOT ANSWERED"))
    answer = write(provider)
    assert answer.outcome == "answer" and answer.claims  # the proof stands
    assert answer.written is not None and answer.written.declined and not answer.written.shown
