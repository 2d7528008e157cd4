"""The chunk table after a re-ingest, on real Chroma (embedded and a `chroma run` server): only changed rows are
read again (found by their change stamps, not by listing every row), the result equals a whole read of the new
generation, and a restricted chunk is never served, before or after the next table is swapped in."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.search import HybridRetriever
from retrieval.store import ChromaStore
from retrieval.table import ChunkTable
from retrieval.viewer import Viewer
from tests.chroma_server import chroma_binary, chroma_server, edit, write_site
from tests.conftest import require
from tests.fakes import HashEmbedder

pytestmark = pytest.mark.integration

ANON = Viewer.anonymous()
STAFF = Viewer.of(["staff"])
WINDOWS = "doc:billing/refunds#refund-windows"
QUESTION = "Annual plans can be refunded within 30 days of purchase."


def _served_site(store: ChromaStore, tmp_path: Path) -> tuple[Path, HashEmbedder, HybridRetriever]:
    """The test site indexed into `store` and a retriever over it, which serves the refund windows to anyone."""
    site = write_site(tmp_path / "site")
    embedder = HashEmbedder()
    sync_index(load_corpus(site), store, embedder)
    hybrid = HybridRetriever(store, embedder)
    assert WINDOWS in [h.chunk.id for h in hybrid.search(QUESTION, ANON).hits]
    return site, embedder, hybrid


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    require(chroma_binary() is not None, "the `chroma` CLI is needed for server-mode tests")
    with chroma_server(tmp_path_factory.mktemp("server") / "chroma") as url:
        yield url


@pytest.fixture(params=["embedded", "server"])
def store(request, tmp_path) -> ChromaStore:
    name = f"t{uuid.uuid4().hex[:8]}docs"
    if request.param == "embedded":
        return ChromaStore(path=str(tmp_path / "chroma"), name=name)
    return ChromaStore(url=request.getfixturevalue("server_url"), name=name)


def test_a_reingest_rereads_only_the_edited_chunk_and_restricts_the_relabelled_one(store, tmp_path):
    site, embedder, hybrid = _served_site(store, tmp_path)
    assert hybrid.snapshot.reread == len(store.chunks())  # the first table is one whole read
    built = store.generation()

    # One paragraph edited (text changes), one page restricted (access changes, text does not).
    edit(site / "guides/retries.mdx", "up to 8 times over 24 hours", "up to 12 times over 48 hours")
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    report = sync_index(load_corpus(site), store, embedder)
    assert report.chunks_embedded == 1

    for q in (QUESTION, "refunded annual plans purchase"):  # dense and BM25 routes, before the next table is ready
        assert not [h for h in hybrid.search(q, ANON, k=50).hits if h.chunk.doc_id == "doc:billing/refunds"]
    changed = store.changes(built)  # the stamp listing: the two edited pages' rows, not the index
    assert changed is not None and changed.complete and not changed.deleted
    assert {row.chunk.source for row in changed.rows} == {"guides/retries.mdx", "billing/refunds.mdx"}
    assert len(changed.rows) < len(store.rows())
    assert hybrid.snapshot.settle(60)  # the next table, prepared in the background
    for q in (QUESTION, "refunded annual plans purchase"):
        assert not [h for h in hybrid.search(q, ANON, k=50).hits if h.chunk.doc_id == "doc:billing/refunds"]
    assert hybrid.snapshot.reread == 1  # only the edited chunk was read again; the restricted ones were relabelled
    assert WINDOWS in [h.chunk.id for h in hybrid.search(QUESTION, STAFF).hits]
    assert "12 times over 48 hours" in hybrid.search("how many times is a failed delivery retried", ANON).hits[0].chunk.text

    held, whole = hybrid.snapshot.table(), ChunkTable.build(store.records())
    assert held.chunks == whole.chunks and held.readers == whole.readers
    assert np.allclose(held.vectors, whole.vectors, atol=1e-6)


def test_a_generation_moved_without_a_stamp_is_listed_whole_before_the_next_answer(tmp_path):
    """An index written before stamps, or a writer that moves the generation without stamping (older code on another
    replica), breaks the chain: the next query lists every row first, so it still never serves a restricted chunk."""
    store = ChromaStore(path=str(tmp_path / "chroma"), name=f"t{uuid.uuid4().hex[:8]}docs")
    site, embedder, hybrid = _served_site(store, tmp_path)
    held = store.generation()
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    sync_index(load_corpus(site), store, embedder)
    pointer = store._pointer()
    pointer.modify(metadata=dict(pointer.metadata) | {"generation": "unstamped01"})  # what a writer before stamps does
    assert store.changes(held) is None and store.generation().count(":") == 1  # no stamp in the token: no chain
    assert not [h for h in hybrid.search(QUESTION, ANON, k=50).hits if h.chunk.doc_id == "doc:billing/refunds"]
    assert hybrid.snapshot.table().get(WINDOWS).access == ("staff",)
