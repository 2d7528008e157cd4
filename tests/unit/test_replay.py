"""The CI gate: recorded drafts over fixed retrieval sets must verify exactly as recorded.

Fixed questions, fixed retrieval sets (chunk ids of content/) and recorded
model replies, good and bad, run through the real pipeline and verifier. A
drift in the chunker (ids or text), the verifier or the retry policy changes
an outcome here and fails the build; an intended change means re-recording
the expectation in tests/fixtures/replay.jsonl and reviewing the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    verbatim = [[q["verified"] for q in attempt.get("quotes", [])] for attempt in answer.drafts]
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
