"""A serving process freezes its long-lived heap after each table swap, and still frees every table it swaps out."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from dataclasses import replace

import pytest

from retrieval.heap import freeze_long_lived
from retrieval.snapshot import IndexSnapshot
from retrieval.viewer import Viewer
from tests.fakes import HashEmbedder, make_chunk
from tests.memory_index import MemoryIndex

PAGES = 200
PUBLISHES = 12


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    """Freezing is process-wide: give the rest of the test run its heap back."""
    try:
        yield
    finally:
        gc.unfreeze()


def publish(store: MemoryIndex, embedder: HashEmbedder, edition: int) -> None:
    """Every chunk edited: the next table holds only new chunk objects."""
    pairs = []
    for chunk, _ in store.items:
        edited = replace(chunk, text=f"{chunk.text.split(' Edition')[0]} Edition {edition}.", hash=f"{chunk.id}-{edition}")
        pairs.append((edited, embedder.embed([edited.embedding_text])[0]))
    store.items = pairs


def served_chunks(snapshot: IndexSnapshot) -> list[weakref.ref]:
    return [weakref.ref(c) for c in snapshot.table().chunks]


def test_tables_swapped_out_are_freed_although_they_were_frozen(frozen_heap: None) -> None:
    embedder = HashEmbedder()
    docs = [make_chunk(f"guides/page-{i}", "setup", f"Page {i} explains setup step {i}.", title=f"Page {i}")
            for i in range(PAGES)]
    store = MemoryIndex(embedder, docs)
    snapshot = IndexSnapshot(store)
    snapshot.view({"public"})
    snapshot.on_swap = freeze_long_lived
    freeze_long_lived()
    first = served_chunks(snapshot)
    frozen_at_start = gc.get_freeze_count()

    for edition in range(1, PUBLISHES + 1):
        publish(store, embedder, edition)
        snapshot.view({"public"})  # the query that sees the generation move wakes the background swap
        assert snapshot.settle(timeout=30)
    assert snapshot.prepared == PUBLISHES
    assert "Edition 12." in snapshot.table().chunks[0].text

    # The first table was frozen, and every one after it at its swap: frozen or not, none is kept.
    assert all(ref() is None for ref in first)
    growth = gc.get_freeze_count() - frozen_at_start
    per_table = growth / PUBLISHES
    assert per_table < 2 * PAGES, f"the permanent generation grew by {growth} objects over {PUBLISHES} publishes"


def test_a_frozen_snapshot_answers_the_new_generation(frozen_heap: None) -> None:
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [make_chunk("cli/flags", "dry-run", "The --dry-run flag changes nothing.", title="Flags")])
    snapshot = IndexSnapshot(store)
    snapshot.view({"public"})
    snapshot.on_swap = freeze_long_lived
    freeze_long_lived()
    publish(store, embedder, 2)
    snapshot.view({"public"})
    assert snapshot.settle(timeout=30)
    hits = snapshot.search("dry-run flag", 5, Viewer.anonymous().groups)
    assert [c.text for c, _ in hits] == ["The --dry-run flag changes nothing. Edition 2."]


def test_a_warm_serving_process_hands_the_interpreter_to_a_waiting_query_sooner():
    """A publish's pure-Python work in another thread holds a query up for at most the switch interval per hand-off."""
    import sys

    from retrieval.heap import SWITCH_INTERVAL, share_the_interpreter

    before = sys.getswitchinterval()
    try:
        share_the_interpreter()
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL) and SWITCH_INTERVAL < 0.005
    finally:
        sys.setswitchinterval(before)


class FullCollectionCount:
    """How many full collections start while it is entered."""

    def __init__(self) -> None:
        self.n = 0

    def _seen(self, phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            self.n += 1

    def __enter__(self) -> FullCollectionCount:
        gc.callbacks.append(self._seen)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._seen)


def build_long_lived(n: int) -> list:
    """What a publish builds: many tracked objects that outlive every young collection."""
    return [{"id": i, "headings": [str(i)]} for i in range(n)]


def test_while_a_publish_builds_no_full_collection_walks_what_it_builds():
    from retrieval.heap import building

    before = gc.get_threshold()
    with FullCollectionCount() as outside:
        kept = build_long_lived(600_000)  # the same build outside: the collector walks it as it grows
    del kept
    with building(), FullCollectionCount() as inside:
        assert gc.get_threshold()[:2] == before[:2], "young collections go on"
        kept = build_long_lived(600_000)
    del kept
    assert outside.n >= 1 and inside.n == 0
    assert gc.get_threshold() == before


def test_building_in_two_threads_at_once_restores_the_threshold_when_the_last_one_leaves():
    """An ingest's parse and the table refresh it wakes overlap; the first to finish must not end the other's hold."""
    import threading

    from retrieval.heap import HELD_BACK, building

    before = gc.get_threshold()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[int] = []

    def second() -> None:
        first_in.wait()
        with building():
            second_in.set()
            first_out.wait()
            seen.append(gc.get_threshold()[2])

    thread = threading.Thread(target=second)
    thread.start()
    with building():
        first_in.set()
        second_in.wait()
    first_out.set()
    thread.join()
    assert seen == [HELD_BACK]
    assert gc.get_threshold() == before


def test_the_table_refresh_builds_with_full_collections_held_back():
    from retrieval.heap import HELD_BACK

    class Watched(MemoryIndex):
        thresholds: list[int] = []

        def changes(self, since: str):  # noqa: ANN201 — the first thing the refresh reads
            self.thresholds.append(gc.get_threshold()[2])
            return super().changes(since)

    embedder = HashEmbedder()
    store = Watched(embedder, [make_chunk("cli/flags", "dry-run", "The --dry-run flag changes nothing.", title="Flags")])
    snapshot = IndexSnapshot(store)
    snapshot.view({"public"})
    publish(store, embedder, 2)
    snapshot.view({"public"})
    assert snapshot.settle(timeout=30)
    assert HELD_BACK in store.thresholds and gc.get_threshold()[2] != HELD_BACK
