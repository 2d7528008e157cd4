"""Hybrid retrieval over content/ with the real model and real Chroma: ACL, renumbering, edge cases, eval."""

from __future__ import annotations

import pytest

from retrieval.errors import QueryError, RerankerError
from retrieval.fusion import near_duplicate
from retrieval.rerank import Candidate, CrossEncoderReranker
from retrieval.search import MAX_QUESTION_CHARS, HybridRetriever
from retrieval.snapshot import IndexSnapshot
from retrieval.store import ChromaStore
from retrieval.viewer import Viewer
from tests.fakes import make_chunk

pytestmark = pytest.mark.integration

ANON = Viewer.anonymous()


@pytest.fixture(scope="module")
def hybrid(content_index, real_embedder) -> HybridRetriever:
    return HybridRetriever(content_index, real_embedder)


@pytest.fixture(scope="module")
def restricted(content_index) -> list:
    chunks = [c for c in content_index.chunks() if tuple(c.access) != ("public",)]
    assert len(chunks) >= 10, "content/ should have staff and tenant pages"
    return chunks


def query_from(chunk) -> str:
    return " ".join(f"{chunk.title} {' '.join(chunk.heading_path)} {chunk.text}".split())[:600]


def test_no_restricted_chunk_reaches_an_anonymous_viewer_but_its_group_finds_it(hybrid, restricted):
    for chunk in restricted:
        question = query_from(chunk)
        anonymous = hybrid.search(question, ANON, k=50).hits
        assert chunk.id not in [h.chunk.id for h in anonymous]
        assert all(h.chunk.readable_by(ANON.groups) for h in anonymous)
        member = [h.chunk.id for h in hybrid.search(question, Viewer.of(chunk.access), k=10).hits]
        assert chunk.id in member, f"{chunk.id} not found by its own group"


def test_lexical_search_alone_respects_access_too(content_index, restricted):
    lexical = IndexSnapshot(content_index)
    for chunk in restricted:
        question = query_from(chunk)
        assert chunk.id not in [c.id for c, _ in lexical.search(question, 50, ANON.groups)]
        assert chunk.id in [c.id for c, _ in lexical.search(question, 10, Viewer.of(chunk.access).groups)]


def test_handles_follow_rank_order_after_dedupe(hybrid):
    rset = hybrid.search("How many times are failed webhooks retried and over how long?", ANON, k=10)
    assert rset.handles == tuple(f"c{i}" for i in range(1, len(rset.hits) + 1))
    scores = [h.score for h in rset.hits]
    assert scores == sorted(scores, reverse=True)
    assert len({h.chunk.id for h in rset.hits}) == len(rset.hits)
    for i, a in enumerate(rset.hits):
        assert not any(near_duplicate(a.chunk.text, b.chunk.text) for b in rset.hits[i + 1 :])


def test_version_scoping_prefers_legacy_pages_for_a_legacy_reader(hybrid):
    question = "How many delivery attempts are made before giving up?"
    legacy = hybrid.search(question, ANON, version="1.9")
    assert legacy.hits[0].chunk.doc_version == "1.9"
    current = hybrid.search(question, ANON, version="2.4")
    assert current.hits[0].chunk.doc_version == "2.4"


def test_empty_store_gives_an_empty_set(tmp_path, real_embedder):
    store = ChromaStore(path=str(tmp_path / "empty"))
    assert not HybridRetriever(store, real_embedder).search("How do refunds work?", ANON)


def test_empty_and_very_long_questions(hybrid):
    with pytest.raises(QueryError):
        hybrid.search("   ", ANON)
    rset = hybrid.search("refund window for monthly plans " * 5_000, ANON)
    assert len(rset.question) <= MAX_QUESTION_CHARS and rset.hits


def test_identifiers_in_questions_find_their_sections(hybrid):
    assert hybrid.search("what does ferry deploy --dry-run exit with when there are changes?", ANON).hits[0].chunk.id in {
        "doc:cli/deploy#planning-and-applying", "doc:cli/flags#--dry-run~2", "doc:cli/commands#exit-codes"}
    top = [h.chunk.id for h in hybrid.search("FD-4292", ANON, k=3).hits]
    assert "doc:api/errors#fd-4292" in top


def test_cross_encoder_fails_clearly_when_its_folder_is_missing(tmp_path):
    reranker = CrossEncoderReranker(str(tmp_path / "no-such-model"))
    with pytest.raises(RerankerError, match="no-such-model"):
        reranker.rerank("question", [Candidate(make_chunk("a", "x", "text"), 0.01)])


def test_hybrid_beats_dense_only_and_lexical_only_on_the_question_set(content_index, real_embedder):
    from tests.eval.retrieval_eval import evaluate, load_questions

    report = evaluate(content_index, real_embedder, load_questions())["methods"]
    for metric in ("recall@5", "mrr"):
        assert report["hybrid"][metric] > report["dense"][metric], (metric, report)
        assert report["hybrid"][metric] > report["lexical"][metric], (metric, report)
    assert all(m["leaks"] == 0 for m in report.values())
