"""Hybrid retrieval with fakes: fusion, dedupe, renumbering, floor, ACL, version and query edge cases."""

from __future__ import annotations

from dataclasses import replace

import pytest

from retrieval.errors import QueryError
from retrieval.fusion import dedupe, near_duplicate, reciprocal_rank_score
from retrieval.rerank import Candidate
from retrieval.search import MAX_QUESTION_CHARS, HybridRetriever
from retrieval.table import DenseSearch
from retrieval.viewer import Viewer
from tests.fakes import HashEmbedder, make_chunk
from tests.memory_index import MemoryIndex

ANON = Viewer.anonymous()
STAFF = Viewer.of(["staff"])

DOCS = [
    make_chunk("billing/refunds", "policy", "Refunds are available within 14 days of the charge for monthly plans.",
               title="Refunds", heading="Refund policy"),
    make_chunk("guides/retries", "schedule", "Failed deliveries are retried 15 times over 72 hours with backoff.",
               title="Endpoints and retries", heading="Retry schedule"),
    make_chunk("cli/flags", "dry-run", "The --dry-run flag validates a change with the API but changes nothing.",
               title="Global flags", heading="--dry-run"),
    make_chunk("api/errors", "fd-4291", "FD-4291 means the workspace sent more requests than its plan allows.",
               title="Errors", heading="FD-4291 Rate limit exceeded"),
    make_chunk("internal/overrides", "limits", "A support agent may approve refund overrides up to 500 dollars.",
               title="Refund override procedure", heading="Approval limits", access=("staff",)),
]


def retriever(chunks=DOCS, **kwargs) -> HybridRetriever:
    embedder = HashEmbedder()
    return HybridRetriever(MemoryIndex(embedder, chunks), embedder, **kwargs)


# -- fusion -------------------------------------------------------------------


def test_reciprocal_rank_score_sums_over_the_rankings_holding_the_item():
    assert reciprocal_rank_score([2, 1]) == pytest.approx(1 / 62 + 1 / 61)
    assert reciprocal_rank_score([1, None]) == pytest.approx(1 / 61) and reciprocal_rank_score([None, None]) == 0
    assert reciprocal_rank_score([1], k=20) == pytest.approx(1 / 21)


def test_a_bm25_hit_is_fused_at_its_true_dense_rank_so_one_far_in_meaning_falls_below_one_near():
    # cypress-docs: "Is there a setting to simulate a slow 3G connection …?" — the FAQ entry that answers
    # ("Can I throttle network speeds?") was a BM25 hit outside the dense top 50, tied in fusion with BM25
    # hits far from the question in meaning and below the six sections read. Each BM25 hit now counts at its
    # place in the full dense ranking, so one near in meaning (rank 60) is fused above one that only shares
    # words (rank 5,000).
    hybrid = retriever()
    far, near, dense_only = DOCS[0], DOCS[1], DOCS[2]
    dense = DenseSearch([(dense_only, 0.8)], {dense_only.id: (1, 0.8), far.id: (5000, 0.05), near.id: (60, 0.55)})
    fused = hybrid._fuse(dense, [(far, 9.0), (near, 8.0)], ANON)
    assert [c.chunk.id for c in fused] == [near.id, far.id, dense_only.id]
    assert fused[0].fused == pytest.approx(1 / 120 + 1 / 62) and fused[0].dense == 0.55 and fused[0].dense_rank == 60
    assert fused[2].lexical is None and fused[2].lexical_rank is None and fused[2].dense_rank == 1
    # A BM25 hit the viewer may not read has no dense rank for them and is not a candidate at all.
    assert [c.chunk.id for c in hybrid._fuse(DenseSearch([], {}), [(DOCS[4], 3.0)], ANON)] == []


# -- dedupe -------------------------------------------------------------------


def test_near_duplicate_normalizes_case_whitespace_and_unicode_width():
    assert near_duplicate("Refunds  are\navailable", "refunds are AVAILABLE")
    assert near_duplicate("ＡＢＣ refunds", "abc refunds")
    assert not near_duplicate("Refunds are available", "Retries are scheduled")


def test_a_shared_partial_inside_a_longer_section_is_a_duplicate():
    partial = "Verify every delivery with the signing secret before acting on the event body."
    longer = "Intro paragraph about receivers. " + partial + " Then respond quickly."
    assert near_duplicate(partial, longer)
    assert not near_duplicate(partial, "Intro paragraph about receivers. Then respond quickly and log the attempt.")


def test_dedupe_keeps_the_best_ranked_of_each_group_in_order():
    ranked = ["Alpha beta gamma delta epsilon zeta", "Other text entirely here now ok",
              "alpha  BETA gamma delta epsilon zeta", "Third distinct passage of words here"]
    assert dedupe(ranked, str) == [ranked[0], ranked[1], ranked[3]]
    assert dedupe(ranked, str, limit=2) == [ranked[0], ranked[1]]


# -- the retriever --------------------------------------------------------------


def test_handles_are_c1_to_cn_in_rank_order_with_non_increasing_scores():
    rset = retriever().search("how many times are failed deliveries retried?", ANON, k=4)
    assert rset.handles == tuple(f"c{i}" for i in range(1, len(rset.hits) + 1))
    assert rset.hits[0].chunk.id == "doc:guides/retries#schedule"
    scores = [h.score for h in rset.hits]
    assert scores == sorted(scores, reverse=True)


def test_renumbering_happens_after_dedupe_so_handles_have_no_gaps():
    copy = replace(DOCS[1], id="doc:guides/retries-copy#schedule", url="/docs/guides/retries-copy#schedule")
    rset = retriever([*DOCS, copy]).search("how many times are failed deliveries retried?", ANON, k=5)
    texts = [h.chunk.text for h in rset.hits]
    assert texts.count(DOCS[1].text) == 1
    assert rset.handles == tuple(f"c{i}" for i in range(1, len(rset.hits) + 1))


def test_identifier_in_the_question_finds_its_section():
    assert retriever().search("what is --dry-run for?", ANON).hits[0].chunk.id == "doc:cli/flags#dry-run"
    assert retriever().search("I keep getting FD-4291", ANON).hits[0].chunk.id == "doc:api/errors#fd-4291"


def test_restricted_chunk_never_reaches_an_anonymous_viewer_at_any_k():
    secret = DOCS[-1]
    for k in (1, 3, 50):
        assert secret.id not in [h.chunk.id for h in retriever().search(secret.text, ANON, k=k).hits]
    assert retriever().search(secret.text, STAFF, k=3).hits[0].chunk.id == secret.id


def test_version_prefers_the_pages_of_that_version():
    legacy = replace(make_chunk("v1/retries", "schedule", "Failed deliveries are retried 8 times over 24 hours.",
                                title="Retries in v1", heading="Retry schedule"), doc_version="1.9")
    r = retriever([*DOCS, legacy])
    question = "how many times are failed deliveries retried?"
    assert r.search(question, ANON, version="1.9").hits[0].chunk.id == legacy.id
    assert r.search(question, ANON, version="2.4").hits[0].chunk.id == "doc:guides/retries#schedule"
    assert legacy.id in [h.chunk.id for h in r.search(question, ANON, version="2.4", k=6).hits]


def test_floor_keeps_similar_or_term_sharing_candidates_and_drops_the_rest():
    r = retriever(dense_floor=0.25, lexical_dense_floor=0.1)
    chunk = DOCS[0]
    assert r.relevant(Candidate(chunk, 0.01, dense=0.3))
    assert r.relevant(Candidate(chunk, 0.01, dense=0.15, lexical=2.0))
    assert not r.relevant(Candidate(chunk, 0.01, dense=0.15))
    assert not r.relevant(Candidate(chunk, 0.01, dense=0.05, lexical=2.0))


def test_nothing_above_the_floor_gives_an_empty_set():
    r = retriever(dense_floor=1.01, lexical_dense_floor=1.01)
    assert not r.search("refunds within 14 days", ANON)


def test_empty_store_gives_an_empty_set():
    assert retriever([]).search("how do refunds work?", ANON).hits == ()


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_empty_question_is_a_query_error(question):
    with pytest.raises(QueryError, match="empty"):
        retriever().search(question, ANON)


def test_very_long_question_is_truncated_not_an_error():
    rset = retriever().search("refund policy " * 10_000, ANON)
    assert len(rset.question) <= MAX_QUESTION_CHARS
    assert rset.hits[0].chunk.id == "doc:billing/refunds#policy"


def test_default_k_and_call_without_version_still_work():
    r = retriever(k=2)
    assert len(r.search("refunds retries flags errors", ANON).hits) <= 2


def test_a_chunk_made_restricted_by_a_reingest_is_not_served_from_the_stale_lexical_cache():
    # Same chunk count, so the BM25 cache does not notice; the store's access filter must still win.
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, DOCS)
    hybrid = HybridRetriever(store, embedder)
    target = DOCS[0]
    assert target.id in [h.chunk.id for h in hybrid.search(target.text, ANON).hits]  # warms the cache
    store.items = [((replace(c, access=("staff",)) if c.id == target.id else c), v) for c, v in store.items]
    assert target.id not in [h.chunk.id for h in hybrid.search(target.text, ANON, k=50).hits]
    store.items = [(c, v) for c, v in store.items if c.id != DOCS[1].id] + [(DOCS[1], embedder.embed(["x"])[0])]
    assert hybrid.search("retried 15 times", ANON).hits is not None  # a changed vector set never crashes a query


# -- the chunk table: a store that says when it changed is read once per change ---------


class Counting(MemoryIndex):
    """Counts store reads, to show a query reads nothing twice once the table is built."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        self.reads = {"chunks": 0, "records": 0, "query": 0, "nearest": 0}
        super().__init__(*args, **kwargs)

    def chunks(self, groups=None, ids=None):  # noqa: ANN001, ANN201
        self.reads["chunks"] += 1
        return super().chunks(groups, ids)

    def records(self):  # noqa: ANN201
        self.reads["records"] += 1
        return super().records()

    def nearest(self, vector, k, groups):  # noqa: ANN001, ANN201
        self.reads["nearest"] += 1
        return super().nearest(vector, k, groups)


QUESTIONS = ["How long do refunds take?", "retried 15 times", "--dry-run", "FD-4291", "refund overrides", "zebra"]


@pytest.mark.parametrize("viewer", [ANON, STAFF])
def test_the_table_path_ranks_exactly_like_the_store_reread_path(viewer):
    embedder = HashEmbedder()
    plain = HybridRetriever(MemoryIndex(embedder, DOCS), embedder)
    tabled = HybridRetriever(MemoryIndex(embedder, DOCS), embedder)
    for question in QUESTIONS:
        expected = [(h.handle, h.chunk.id, round(h.score, 6)) for h in plain.search(question, viewer, k=5).hits]
        assert [(h.handle, h.chunk.id, round(h.score, 6)) for h in tabled.search(question, viewer, k=5).hits] == expected


def test_after_the_first_query_a_search_reads_nothing_from_the_store_but_its_generation():
    # Dense search runs over the chunk table in process: no store query, no nearest ids, no chunk re-read.
    embedder = HashEmbedder()
    store = Counting(embedder, DOCS)
    hybrid = HybridRetriever(store, embedder)
    hybrid.search("refund policy", ANON)
    before = dict(store.reads)
    for question in QUESTIONS:
        assert hybrid.search(question, ANON) is not None
    assert {k: store.reads[k] - before[k] for k in store.reads} == {"chunks": 0, "records": 0, "query": 0, "nearest": 0}


def test_chunks_an_ingest_is_still_writing_are_served_once_the_generation_moves_and_only_to_their_readers():
    # An ingest still writing: the store has new chunks but its generation has not moved yet. The table
    # serves the generation the pointer names, so neither is served yet; once it moves and the next table
    # is prepared, the public one is, and the staff one never reaches an anonymous viewer.
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, DOCS)
    hybrid = HybridRetriever(store, embedder)
    hybrid.search("refund policy", ANON)
    fresh = make_chunk("guides/lemur", "size", "Lemur batches hold 17 events.", title="Lemur", heading="Batch size")
    secret = make_chunk("internal/lemur", "quota", "Lemur internal quota is 9 events.", title="Lemur", heading="Quota",
                        access=("staff",))
    store.replace_items(store.items + list(zip([fresh, secret], embedder.embed([fresh.embedding_text, secret.embedding_text]),
                                               strict=True)), announce=False)
    found = [h.chunk.id for h in hybrid.search("lemur batches events", ANON, k=50).hits]
    assert fresh.id not in found and secret.id not in found
    store.items = store.items  # the ingest commits: the generation moves
    assert secret.id not in [h.chunk.id for h in hybrid.search("lemur batches events", ANON, k=50).hits]
    assert hybrid.snapshot.settle(5)  # new content is served once the background has prepared it
    found = [h.chunk.id for h in hybrid.search("lemur batches events", ANON, k=50).hits]
    assert fresh.id in found and secret.id not in found
    assert secret.id in [h.chunk.id for h in hybrid.search("lemur internal quota", STAFF, k=50).hits]


def test_concurrent_queries_after_a_change_read_the_whole_index_once():
    import threading
    import time

    class Slow(Counting):
        def records(self):  # noqa: ANN201
            time.sleep(0.2)  # a large index: long enough for every thread to arrive while it is read
            return super().records()

    embedder = HashEmbedder()
    store = Slow(embedder, DOCS)
    hybrid = HybridRetriever(store, embedder)
    threads = [threading.Thread(target=hybrid.search, args=(q, ANON)) for q in QUESTIONS[:4]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.reads["records"] == 1
