"""The replay gate for provider-native citations: recorded Anthropic and Gemini responses verify as recorded.

Fixed questions and retrieval sets (chunk ids of content/), and responses in
each provider's wire format, are served by the scripted provider servers and
read through the real litellm client, the real generator, pipeline and
verifier. A drift in the chunker, the request we send, litellm's handling of
`citations` or `groundingMetadata`, the mapping to handles or the verifier
changes an outcome here and fails the build; an intended change means
re-recording tests/fixtures/replay_provider.jsonl and reviewing the diff.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from answer.llm.client import LiteLLMGenerator
from answer.llm.provider_citations import ProviderCitationGenerator, documents, request_messages
from answer.pipeline import Answerer
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.scripted_llm import Reply
from tests.scripted_providers import ScriptedProvider
from tests.unit.test_replay import FixedRetriever, chunks_by_id  # noqa: F401 - chunks_by_id is a fixture

pytestmark = pytest.mark.integration

CASES = [json.loads(line) for line in (Path(__file__).parents[1] / "fixtures" / "replay_provider.jsonl").read_text().splitlines()
         if line.strip()]
MODELS = {"anthropic": "anthropic/claude-recorded", "gemini": "gemini/gemini-recorded"}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_recorded_provider_responses_verify_as_recorded(case, chunks_by_id):  # noqa: F811
    missing = [cid for cid in case["retrieval"] if cid not in chunks_by_id]
    assert not missing, f"chunker drift: recorded chunk ids no longer exist: {missing}"
    replies = [Reply(text=json.dumps(r)) for r in case["responses"]]
    with ScriptedProvider(case["wire"], *replies).running() as server:
        client = LiteLLMGenerator(MODELS[case["wire"]], api_base=server.url, api_key="x", timeout=10, max_retries=0)
        answerer = Answerer(FixedRetriever([chunks_by_id[cid] for cid in case["retrieval"]]), ProviderCitationGenerator(client))
        answer = answerer.ask(case["question"], Viewer.of(case["groups"]))
    quotes = [attempt.quotes for attempt in answer.attempts]
    assert {
        "state": answer.state,
        "degraded": answer.degraded,
        "requests": len(server.requests),
        "verbatim": [[q.check.verified for q in attempt] for attempt in quotes],
        "kinds": [[q.check.kind for q in attempt] for attempt in quotes],
        "ranges": [[q.provider["range"].split(":")[0] for q in attempt] for attempt in quotes],
        "statuses": [c.status for c in answer.claims],
        "phantoms": answer.phantoms,
    } == case["expect"]
    for claim in answer.claims:
        for citation in claim.citations:
            assert chunks_by_id[citation.chunk_id].text[citation.start:citation.end] == citation.quote


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_request_for_a_recorded_retrieval_set_is_unchanged(case, chunks_by_id):  # noqa: F811
    """The recorded responses answered this exact request; a change to it means re-recording them."""
    rset = renumber(case["question"], Viewer.of(case["groups"]), [(chunks_by_id[cid], 1.0) for cid in case["retrieval"]])
    messages = request_messages(case["wire"], case["question"], documents(rset))
    digest = hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()[:16]
    assert digest == case["request_sha256"], "request drift: review the change, then re-record request_sha256 and the responses"
