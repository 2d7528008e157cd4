"""A table refresh after an index change re-reads only what changed and never keeps an old generation's access."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from retrieval.refresh import refresh_table
from retrieval.search import HybridRetriever
from retrieval.snapshot import IndexSnapshot
from retrieval.table import ChunkTable
from retrieval.viewer import Viewer
from tests.fakes import HashEmbedder, make_chunk
from tests.memory_index import MemoryIndex

ANON = Viewer.anonymous()
STAFF = Viewer.of(["staff"])
DOCS = [
    make_chunk("billing/refunds", "policy", "Refunds are available within 14 days of the charge.", title="Refunds"),
    make_chunk("guides/retries", "schedule", "Failed deliveries are retried 15 times over 72 hours.", title="Retries"),
    make_chunk("cli/flags", "dry-run", "The --dry-run flag validates a change but changes nothing.", title="Flags"),
    make_chunk("internal/overrides", "limits", "Support may approve refund overrides up to 500 dollars.",
               title="Overrides", access=("staff",)),
]


class ListingStore(MemoryIndex):
    """The in-memory index, counting its listings and what is read by id."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        self.read_ids: list[str] = []
        self.listings = 0
        super().__init__(*args, **kwargs)

    def rows(self):  # noqa: ANN201
        self.listings += 1
        return super().rows()

    def chunks(self, groups=None, ids=None):  # noqa: ANN001, ANN201
        self.read_ids.extend(ids or [])
        return super().chunks(groups, ids)


def full(store: MemoryIndex) -> ChunkTable:
    return ChunkTable.build(store.records())


def same(a: ChunkTable, b: ChunkTable) -> bool:
    return a.chunks == b.chunks and a.readers == b.readers and np.allclose(a.vectors, b.vectors)


def test_an_edited_chunk_is_the_only_one_read_again_and_the_result_equals_a_full_read():
    embedder = HashEmbedder()
    store = ListingStore(embedder, DOCS)
    before = full(store)
    edited = replace(DOCS[1], text="Failed deliveries are retried 20 times.", hash="edited")
    store.items = [(edited, embedder.embed([edited.embedding_text])[0]) if c.id == edited.id else (c, v) for c, v in store.items]
    after, reread = refresh_table(before, store)
    assert reread == 1 and store.read_ids == [edited.id]
    assert same(after, full(store)) and after.get(edited.id) == edited


def test_a_chunk_whose_access_changed_but_text_did_not_is_relabelled_without_a_read_and_leaves_the_public_mask():
    embedder = HashEmbedder()
    store = ListingStore(embedder, DOCS)
    before = full(store)
    target = DOCS[0]
    store.items = [((replace(c, access=("staff",)) if c.id == target.id else c), v) for c, v in store.items]
    after, reread = refresh_table(before, store)
    assert reread == 0 and store.read_ids == []
    assert same(after, full(store))
    assert not after.may_read(target.id, ANON.groups) and after.may_read(target.id, STAFF.groups)
    assert target.id not in [c.id for c, _ in after.nearest(embedder.embed([target.text])[0], 10, ANON.groups)]
    assert np.array_equal(after.vectors[after.row(target.id)], before.vectors[before.row(target.id)])  # vector kept


def test_added_and_deleted_chunks_follow_the_store():
    embedder = HashEmbedder()
    store = ListingStore(embedder, DOCS)
    before = full(store)
    added = make_chunk("guides/lemur", "size", "Lemur batches hold 17 events.", title="Lemur")
    store.items = [(c, v) for c, v in store.items if c.id != DOCS[2].id] + [(added, embedder.embed([added.embedding_text])[0])]
    after, reread = refresh_table(before, store)
    assert reread == 1 and store.read_ids == [added.id]
    assert same(after, full(store)) and after.get(DOCS[2].id) is None


def test_the_searcher_refreshes_incrementally_after_the_first_full_read():
    embedder = HashEmbedder()
    store = ListingStore(embedder, DOCS)
    searcher = IndexSnapshot(store)
    searcher.view(ANON.groups)
    assert searcher.reread == len(DOCS) and store.listings == 0  # the first table is one whole read
    store.items = [((replace(c, access=("staff",)) if c.id == DOCS[0].id else c), v) for c, v in store.items]
    table, _ = searcher.view(ANON.groups)
    assert not table.may_read(DOCS[0].id, ANON.groups)  # the access part, before the query returns
    assert searcher.settle(5)
    table, index = searcher.view(ANON.groups)
    assert searcher.reread == 0 and store.listings == 0  # the rows stamped since, not a listing of every row
    assert DOCS[0].id not in [c.id for c in index.chunks] and not table.may_read(DOCS[0].id, ANON.groups)


def test_a_restricted_chunk_is_never_served_after_an_incremental_refresh_by_either_route():
    embedder = HashEmbedder()
    store = ListingStore(embedder, DOCS)
    hybrid = HybridRetriever(store, embedder)
    target = DOCS[0]
    assert target.id in [h.chunk.id for h in hybrid.search(target.text, ANON).hits]  # builds the table
    store.items = [((replace(c, access=("staff",)) if c.id == target.id else c), v) for c, v in store.items]
    # dense and BM25-only routes (the same scenario without a chunk table: test_search_hybrid.py)
    for question in (target.text, "refunds available charge 14 days", "refunds monthly plans charge 14 days"):
        assert target.id not in [h.chunk.id for h in hybrid.search(question, ANON, k=50).hits]
    assert target.id in [h.chunk.id for h in hybrid.search(target.text, STAFF).hits]
    assert store.read_ids == []  # the access change was applied from the listing alone
