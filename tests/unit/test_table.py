"""The chunk table: lookups, the access rule it shares with the store's filter, and numpy dense search."""

from __future__ import annotations

import math

from retrieval.records import Record
from retrieval.table import ChunkTable
from tests.fakes import HashEmbedder, make_chunk

PUBLIC = frozenset({"public"})
STAFF = frozenset({"staff"})

OPEN = make_chunk("billing/refunds", "policy", "Refunds within 14 days.")
SECRET = make_chunk("internal/limits", "cap", "Override cap is 500 dollars.", access=("staff",))
STALE_KEY = make_chunk("billing/plans", "annual", "Annual plans renew yearly.", access=("staff",))


def table() -> ChunkTable:
    embedder = HashEmbedder()
    vectors = embedder.embed([c.embedding_text for c in (OPEN, SECRET, STALE_KEY)])
    return ChunkTable.build([
        Record(SECRET, vectors[1], frozenset({"staff"})),
        Record(OPEN, vectors[0], frozenset({"public"})),
        # a record whose access key still says public while its access list says staff: both must agree
        Record(STALE_KEY, vectors[2], frozenset({"public", "staff"})),
    ])


def test_rows_are_in_id_order_and_ids_look_up_their_chunk():
    t = table()
    assert [c.id for c in t.chunks] == sorted(c.id for c in (OPEN, SECRET, STALE_KEY))
    assert t.get(OPEN.id) == OPEN and t.get("doc:nowhere") is None and len(t) == 3


def test_a_chunk_is_readable_only_when_its_access_keys_and_its_access_list_both_admit_the_reader():
    t = table()
    assert [c.id for c in t.readable(PUBLIC)] == [OPEN.id]
    assert sorted(c.id for c in t.readable(STAFF)) == sorted([SECRET.id, STALE_KEY.id])
    assert not t.may_read(STALE_KEY.id, PUBLIC) and not t.may_read(SECRET.id, PUBLIC) and t.may_read(OPEN.id, PUBLIC)
    assert not t.may_read("doc:nowhere", PUBLIC)


def test_dense_scores_are_the_dot_products_of_the_stored_unit_vectors():
    t, embedder = table(), HashEmbedder()
    query = embedder.embed(["refunds within days"])[0]
    stored = embedder.embed([OPEN.embedding_text])[0]
    found = t.dense_search(query, 0, PUBLIC, also=[OPEN.id, "doc:nowhere"])
    assert found.top == [] and set(found.ranks) == {OPEN.id} and found.ranks[OPEN.id][0] == 1
    assert math.isclose(found.ranks[OPEN.id][1], sum(a * b for a, b in zip(query, stored, strict=True)), abs_tol=1e-6)


def test_an_empty_table_has_no_rows_and_ranks_nothing():
    empty = ChunkTable.build([], dimension=8)
    assert len(empty) == 0 and empty.vectors.shape == (0, 8)
    found = empty.dense_search([0.0] * 8, 5, PUBLIC, also=["x"])
    assert found.top == [] and found.ranks == {}


def test_nearest_ranks_only_the_rows_the_reader_may_read():
    t, embedder = table(), HashEmbedder()
    query = embedder.embed([SECRET.embedding_text])[0]  # the restricted chunk is the closest row
    assert [c.id for c, _ in t.nearest(query, 1, STAFF)] == [SECRET.id]
    public = t.nearest(query, 10, PUBLIC)
    assert [c.id for c, _ in public] == [OPEN.id]  # never the restricted row, nor the stale-key one, however deep
    assert math.isclose(public[0][1], t.dense_search(query, 0, PUBLIC, also=[OPEN.id]).ranks[OPEN.id][1], abs_tol=1e-6)
    assert t.nearest(query, 0, STAFF) == [] and t.nearest(query, 5, frozenset({"nobody"})) == []


def test_nearest_orders_by_similarity_then_id_and_cuts_at_k():
    chunks = [make_chunk("a/p", f"s{i}", f"text {i}") for i in range(6)]
    vectors = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.6, 0.8], [1.0, 0.0], [0.0, 1.0]]
    t = ChunkTable.build([Record(c, v, frozenset({"public"})) for c, v in zip(chunks, vectors, strict=True)])
    got = t.nearest([1.0, 0.0], 4, PUBLIC)
    assert [c.id for c, _ in got] == sorted(c.id for c in (chunks[0], chunks[2], chunks[4])) + [chunks[3].id]
    assert [round(s, 3) for _, s in got] == [1.0, 1.0, 1.0, 0.6]


def test_ids_below_the_top_k_are_placed_where_they_stand_in_the_readers_full_ranking():
    # A BM25 hit outside the dense top k is fused at its true dense rank (see HybridRetriever), so that rank
    # must be the one the full ranking of what this reader may read gives it, and nothing for a row they may not read.
    chunks = [make_chunk("a/p", f"s{i}", f"text {i}") for i in range(5)]
    vectors = [[1.0, 0.0], [0.8, 0.6], [0.6, 0.8], [0.0, 1.0], [0.9, 0.436]]
    access = [PUBLIC, PUBLIC, PUBLIC, PUBLIC, STAFF]
    t = ChunkTable.build([Record(c, v, a) for c, v, a in zip(chunks, vectors, access, strict=True)])
    ids = [c.id for c in chunks]
    found = t.dense_search([1.0, 0.0], 1, PUBLIC, also=[ids[3], ids[0], ids[2], ids[4], "doc:nowhere"])
    assert [c.id for c, _ in found.top] == [ids[0]]
    assert {i: r for i, (r, _) in found.ranks.items()} == {ids[0]: 1, ids[2]: 3, ids[3]: 4}  # s1 is 2nd; s4 is staff's
    assert round(found.ranks[ids[2]][1], 3) == 0.6
    staff = t.dense_search([1.0, 0.0], 1, STAFF | PUBLIC, also=[ids[2]])
    assert staff.ranks[ids[2]][0] == 4  # the staff row that reader may read scores above it
