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
