"""No visitor pays for a publish: queries are answered from the held snapshot while the next one is prepared in the
background, the access part of a change is applied before the next query returns, and a refresh reads only the rows
stamped since the table's generation (the whole index only when the stamp chain is broken)."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np

from ingest.corpus import load_corpus
from retrieval.indexer import IndexReport, sync_index
from retrieval.search import HybridRetriever
from retrieval.table import ChunkTable
from retrieval.viewer import Viewer
from tests.chroma_server import edit, write_site
from tests.fakes import HashEmbedder
from tests.memory_index import MemoryIndex, MemorySpace

ANON = Viewer.anonymous()
STAFF = Viewer.of(["staff"])
WINDOWS = "doc:billing/refunds#refund-windows"
REFUND_QUESTIONS = ("Annual plans can be refunded within 30 days of purchase.", "refunded annual plans purchase")


class HeldStore(MemoryIndex):
    """The in-memory index, counting whole listings and rows read, whose background reads wait for `release`."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        self.release, self.holding = threading.Event(), threading.Event()
        self.release.set()
        self.listings = 0
        self.changed_rows: list[list[str] | None] = []  # the source of each row every change listing returned
        self.read_ids: list[str] = []
        super().__init__(*args, **kwargs)

    def rows(self):  # noqa: ANN201
        import inspect

        if not any(frame.function == "sync_index" for frame in inspect.stack()):  # the reader's listings only
            self.listings += 1
        return super().rows()

    def changes(self, since):  # noqa: ANN001, ANN201
        found = super().changes(since)
        self.changed_rows.append(None if found is None else [row.chunk.source for row in found.rows])
        return found

    def chunks(self, groups=None, ids=None):  # noqa: ANN001, ANN201
        if ids and threading.current_thread().name == "table-refresh":
            self.holding.set()
            assert self.release.wait(10), "the test never released the background refresh"
        self.read_ids.extend(ids or [])
        return super().chunks(groups, ids)


def built(tmp_path, store: MemoryIndex | None = None):  # noqa: ANN001, ANN201
    site = write_site(tmp_path / "site")
    store = store or HeldStore(space=MemorySpace())
    embedder = HashEmbedder()
    sync_index(load_corpus(site), store, embedder)
    hybrid = HybridRetriever(store, embedder)
    assert all(WINDOWS in ids(hybrid, q, ANON) for q in REFUND_QUESTIONS)  # the first load
    return site, store, embedder, hybrid


def ids(hybrid: HybridRetriever, question: str, viewer: Viewer) -> list[str]:
    return [h.chunk.id for h in hybrid.search(question, viewer, k=50).hits]


def refund_pages(hybrid: HybridRetriever, viewer: Viewer) -> list[str]:
    return [i for q in REFUND_QUESTIONS for i in ids(hybrid, q, viewer) if i.startswith("doc:billing/refunds")]


def test_queries_during_a_background_refresh_are_answered_from_the_old_snapshot_then_the_new_one_is_swapped_in(tmp_path):
    site, store, embedder, hybrid = built(tmp_path)
    retries = "How many times is a failed delivery retried?"
    assert "up to 8 times over 24 hours" in hybrid.search(retries, ANON).hits[0].chunk.text
    store.release.clear()  # the refresh will wait inside its read of the edited row
    edit(site / "guides/retries.mdx", "up to 8 times over 24 hours", "up to 12 times over 48 hours")
    sync_index(load_corpus(site), store, embedder)
    old = hybrid.snapshot.table()
    assert "up to 8 times over 24 hours" in hybrid.search(retries, ANON).hits[0].chunk.text  # not waiting: the old text
    assert store.holding.wait(5) and not store.release.is_set()  # ... while the refresh is still held
    assert hybrid.snapshot.prepared == 0 and hybrid.snapshot.table() is old
    store.release.set()
    assert hybrid.snapshot.settle(5)
    assert hybrid.snapshot.prepared == 1 and hybrid.snapshot.table() is not old  # swapped in
    assert "up to 12 times over 48 hours" in hybrid.search(retries, ANON).hits[0].chunk.text
    assert store.listings == 0 and store.read_ids == ["doc:guides/retries#retry-schedule"]


def test_a_restriction_is_never_served_from_the_old_snapshot_once_on_access_returned(tmp_path):
    site, store, embedder, hybrid = built(tmp_path)
    store.release.clear()  # the background refresh is never ready during this ingest
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    edit(site / "billing/refunds.mdx", "within 30 days", "within 45 days")  # text changed too: old text tightened
    seen: list[list[str]] = []

    def on_access(_: IndexReport) -> None:
        hybrid.snapshot.follow()  # what `PublishedDocs.publish` does at the access step
        seen.append(refund_pages(hybrid, ANON))

    sync_index(load_corpus(site), store, embedder, on_access=on_access)
    assert seen == [[]]  # before any embedding, by the dense and the BM25 route
    assert refund_pages(hybrid, ANON) == [] and not store.release.is_set()  # after the commit, still the old snapshot
    assert [i for i in ids(hybrid, REFUND_QUESTIONS[0], STAFF) if i.startswith("doc:billing/refunds")]
    store.release.set()
    assert hybrid.snapshot.settle(5)
    assert refund_pages(hybrid, ANON) == []
    assert "45 days" in hybrid.snapshot.table().get("doc:billing/refunds#refund-windows").text


def test_an_in_process_ingest_prepares_one_next_table_after_its_commit_and_its_restriction_is_live_before(tmp_path):
    site, store, embedder, hybrid = built(tmp_path)
    retries = "How many times is a failed delivery retried?"
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    edit(site / "guides/retries.mdx", "up to 8 times over 24 hours", "up to 12 times over 48 hours")
    seen: list[tuple[list[str], int]] = []

    def on_access(_: IndexReport) -> None:
        hybrid.snapshot.follow()
        seen.append((refund_pages(hybrid, ANON), hybrid.snapshot.prepared))

    with hybrid.snapshot.publishing():
        sync_index(load_corpus(site), store, embedder, on_access=on_access)
        assert refund_pages(hybrid, ANON) == []  # after the commit too: every access change is applied as seen
        assert "up to 8 times" in hybrid.search(retries, ANON).hits[0].chunk.text  # the content waits for the end
        assert hybrid.snapshot.prepared == 0 and not hybrid.snapshot.caught_up()  # nothing was prepared meanwhile
    assert seen == [([], 0)]  # the restriction was live at the access step, before any embedding
    assert hybrid.snapshot.settle(5) and hybrid.snapshot.prepared == 1  # one table, for the commit
    assert "up to 12 times over 48 hours" in hybrid.search(retries, ANON).hits[0].chunk.text
    assert refund_pages(hybrid, ANON) == [] and WINDOWS in ids(hybrid, REFUND_QUESTIONS[0], STAFF)


def test_a_restriction_written_by_another_process_is_applied_by_the_next_query_without_waiting(tmp_path):
    space = MemorySpace()
    site, reader, embedder, hybrid = built(tmp_path, HeldStore(space=space))
    writer = MemoryIndex(space=space)  # another handle on the same store: an ingest elsewhere
    reader.release.clear()
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    edit(site / "guides/retries.mdx", "up to 8 times over 24 hours", "up to 12 times over 48 hours")
    sync_index(load_corpus(site), writer, embedder)
    assert refund_pages(hybrid, ANON) == []  # the first query after the pointer moved
    assert not reader.release.is_set() and reader.listings == 0
    assert WINDOWS in ids(hybrid, REFUND_QUESTIONS[0], STAFF)  # relabelled in place: same text, new access
    reader.release.set()
    assert hybrid.snapshot.settle(5) and refund_pages(hybrid, ANON) == []


def test_a_refresh_reads_only_the_rows_stamped_since_and_drops_the_logged_deletions(tmp_path):
    site, store, embedder, hybrid = built(tmp_path)
    before = len(hybrid.snapshot.table())
    edit(site / "guides/retries.mdx", "up to 8 times over 24 hours", "up to 12 times over 48 hours")
    deleted = [c.id for c in store.chunks() if c.source == "billing/refunds.mdx"]
    (site / "billing/refunds.mdx").unlink()
    sync_index(load_corpus(site), store, embedder)
    assert hybrid.search("refunds", ANON) is not None and hybrid.snapshot.settle(5)
    assert store.listings == 0  # no listing of every row
    # the edited page's rows (one new text, the rest shifted lines), whatever the size of the index
    assert store.changed_rows and all(found and set(found) == {"guides/retries.mdx"} for found in store.changed_rows)
    assert store.read_ids == ["doc:guides/retries#retry-schedule"] and hybrid.snapshot.reread == 1
    table = hybrid.snapshot.table()
    assert len(table) == before - len(deleted) and not any(table.get(i) for i in deleted)
    whole = ChunkTable.build(store.records())
    assert table.chunks == whole.chunks and table.readers == whole.readers and np.allclose(table.vectors, whole.vectors)


def test_a_full_rebuild_breaks_the_chain_and_the_refresh_lists_the_new_collection_whole(tmp_path):
    site, store, embedder, hybrid = built(tmp_path)
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    sync_index(load_corpus(site), store, embedder, full=True,
               on_access=lambda _: hybrid.snapshot.follow())  # this reader holds the rebuild's access step
    assert refund_pages(hybrid, ANON) == []
    assert hybrid.snapshot.settle(5) and store.listings == 1  # one listing of the new collection, off the query path
    whole = ChunkTable.build(store.records())
    assert hybrid.snapshot.table().chunks == whole.chunks and refund_pages(hybrid, ANON) == []


def test_a_reader_that_missed_the_access_step_of_a_full_rebuild_lists_every_row_before_it_answers(tmp_path):
    site, store, embedder, hybrid = built(tmp_path)
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    sync_index(load_corpus(site), store, embedder, full=True)  # no query saw the old collection's access step
    store.release.clear()  # nothing may come from the background: the query itself must not serve the old access
    assert refund_pages(hybrid, ANON) == [] and store.listings == 1
    store.release.set()


def test_the_access_part_relabels_shares_vectors_and_patches_only_the_changed_rows_of_cached_masks(tmp_path):
    _, store, _, hybrid = built(tmp_path)
    table = hybrid.snapshot.table()
    target = table.row(WINDOWS)
    assert target is not None and table.mask(ANON.groups)[target]
    chunk = table.chunks[target]
    relabelled = table.relabelled({target: (replace(chunk, access=("staff",)), frozenset({"staff"}))})
    assert relabelled.vectors is table.vectors
    assert not relabelled.mask(ANON.groups)[target] and relabelled.mask(STAFF.groups)[target]
    assert (relabelled.mask(ANON.groups).sum(), table.mask(ANON.groups).sum()) == (table.mask(ANON.groups).sum() - 1,
                                                                                    len(table.readable(ANON.groups)))
