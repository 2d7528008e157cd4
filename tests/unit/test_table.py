"""The chunk table: lookups, the access rule it shares with the store's filter, and numpy similarities."""

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


def test_similarities_are_the_dot_products_of_the_stored_unit_vectors():
    t, embedder = table(), HashEmbedder()
    query = embedder.embed(["refunds within days"])[0]
    stored = embedder.embed([OPEN.embedding_text])[0]
    got = t.similarities(query, [OPEN.id, "doc:nowhere"])
    assert set(got) == {OPEN.id}
    assert math.isclose(got[OPEN.id], sum(a * b for a, b in zip(query, stored, strict=True)), abs_tol=1e-6)


def test_an_empty_table_has_no_rows_and_no_similarities():
    empty = ChunkTable.build([], dimension=8)
    assert len(empty) == 0 and empty.vectors.shape == (0, 8) and empty.similarities([0.0] * 8, ["x"]) == {}


def test_nearest_ranks_only_the_rows_the_reader_may_read():
    t, embedder = table(), HashEmbedder()
    query = embedder.embed([SECRET.embedding_text])[0]  # the restricted chunk is the closest row
    assert [c.id for c, _ in t.nearest(query, 1, STAFF)] == [SECRET.id]
    public = t.nearest(query, 10, PUBLIC)
    assert [c.id for c, _ in public] == [OPEN.id]  # never the restricted row, nor the stale-key one, however deep
    assert math.isclose(public[0][1], t.similarities(query, [OPEN.id])[OPEN.id], abs_tol=1e-6)
    assert t.nearest(query, 0, STAFF) == [] and t.nearest(query, 5, frozenset({"nobody"})) == []


def test_nearest_orders_by_similarity_then_id_and_cuts_at_k():
    chunks = [make_chunk("a/p", f"s{i}", f"text {i}") for i in range(6)]
    vectors = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.6, 0.8], [1.0, 0.0], [0.0, 1.0]]
    t = ChunkTable.build([Record(c, v, frozenset({"public"})) for c, v in zip(chunks, vectors, strict=True)])
    got = t.nearest([1.0, 0.0], 4, PUBLIC)
    assert [c.id for c, _ in got] == sorted(c.id for c in (chunks[0], chunks[2], chunks[4])) + [chunks[3].id]
    assert [round(s, 3) for _, s in got] == [1.0, 1.0, 1.0, 0.6]
