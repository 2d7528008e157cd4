"""The CI gate: recorded drafts over fixed retrieval sets must verify exactly as recorded.

Fixed questions, fixed retrieval sets (chunk ids of content/) and recorded
model replies, good and bad, run through the real pipeline and verifier. A
drift in the chunker (ids or text), the prompt, the verifier or the retry
policy changes an outcome here and fails the build; an intended change means re-recording
the expectation in tests/fixtures/replay.jsonl and reviewing the diff.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from answer.llm.prompt import build_prompt
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.conftest import CONTENT
from tests.fakes import ScriptedGenerator

CASES = [json.loads(line) for line in (Path(__file__).parents[1] / "fixtures" / "replay.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def chunks_by_id():
    return {chunk.id: chunk for chunk in load_corpus(CONTENT).chunks()}


class FixedRetriever:
    """Returns the recorded retrieval set, whatever the question."""

    def __init__(self, chunks):  # noqa: ANN001
        self.chunks = chunks

    def search(self, question, viewer, *, k=None):  # noqa: ANN001
        return renumber(question, viewer, [(chunk, 1.0) for chunk in self.chunks])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_recorded_drafts_verify_as_recorded(case, chunks_by_id):
    missing = [cid for cid in case["retrieval"] if cid not in chunks_by_id]
    assert not missing, f"chunker drift: recorded chunk ids no longer exist: {missing}"
    generator = ScriptedGenerator(*case["drafts"])
    answerer = Answerer(FixedRetriever([chunks_by_id[cid] for cid in case["retrieval"]]), generator)
    answer = answerer.ask(case["question"], Viewer.of(case["groups"]))
    expect = case["expect"]
    verbatim = [[q.check.verified for q in attempt.quotes] for attempt in answer.attempts]
    assert {
        "state": answer.state,
        "degraded": answer.degraded,
        "verbatim": verbatim,
        "statuses": [c.status for c in answer.claims],
        "phantoms": answer.phantoms,
    } == expect
    for claim in answer.claims:
        for citation in claim.citations:
            chunk = chunks_by_id[citation.chunk_id]
            assert chunk.text[citation.start:citation.end] == citation.quote


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_prompt_for_a_recorded_retrieval_set_is_unchanged(case, chunks_by_id):
    """The recorded drafts answered this exact prompt; a prompt change means re-recording them."""
    viewer = Viewer.of(case["groups"])
    rset = renumber(case["question"], viewer, [(chunks_by_id[cid], 1.0) for cid in case["retrieval"]])
    prompt = build_prompt(case["question"], rset)
    digest = hashlib.sha256(json.dumps(prompt.as_list(), ensure_ascii=False).encode()).hexdigest()[:16]
    assert digest == case["prompt_sha256"], "prompt drift: review the change, then re-record prompt_sha256 and the drafts"
