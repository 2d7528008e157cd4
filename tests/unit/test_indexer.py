"""The index diff as a pure function, and the manifest rules, without Chroma."""

from __future__ import annotations

from dataclasses import replace

import pytest

from retrieval.errors import IndexMismatchError
from retrieval.indexer import plan_sync
from retrieval.records import Manifest, Row
from retrieval.store import ChromaStore
from tests.fakes import make_chunk


def index_of(*chunks):  # noqa: ANN002, ANN201
    return {c.id: Row.of(c) for c in chunks}


A = make_chunk("guides/retries", "schedule", "Ferrydeck retries up to 8 times.")
B = make_chunk("guides/retries", "backoff", "Each retry waits twice as long.")


def test_unchanged_chunks_need_nothing():
    plan = plan_sync([A, B], index_of(A, B), keep=set())
    assert (plan.embed, plan.reuse, plan.update, plan.delete) == ((), (), (), ())


def test_edited_chunk_is_embedded_and_nothing_else():
    edited = make_chunk("guides/retries", "schedule", "Ferrydeck retries up to 12 times.")
    plan = plan_sync([edited, B], index_of(A, B), keep=set())
    assert [c.id for c in plan.embed] == [A.id] and not plan.update and not plan.delete


def test_moved_chunk_reuses_the_stored_vector_of_its_old_id():
    moved = replace(A, id="doc:moved/retries#schedule", doc_id="doc:moved/retries", source="moved/retries.mdx")
    plan = plan_sync([moved, B], index_of(A, B), keep=set())
    assert plan.reuse == ((moved, A.id),) and not plan.embed and plan.delete == (A.id,)


def test_metadata_only_change_is_an_update():
    restricted = replace(A, access=("staff",))
    plan = plan_sync([restricted, B], index_of(A, B), keep=set())
    assert plan.update == (restricted,) and not plan.embed


def test_kept_ids_of_failed_pages_are_never_deleted():
    plan = plan_sync([B], index_of(A, B), keep={A.id})
    assert plan.delete == ()
    assert plan_sync([B], index_of(A, B), keep=set()).delete == (A.id,)


def test_manifest_refuses_another_embedder_by_id_alone():
    manifest = Manifest(embedder="all-MiniLM-L6-v2", dimension=384)
    manifest.check_embedder("all-MiniLM-L6-v2")
    with pytest.raises(IndexMismatchError, match=r"'all-MiniLM-L6-v2'.*'bge-small'.*make ingest FULL=1"):
        manifest.check_embedder("bge-small")
    with pytest.raises(IndexMismatchError, match="384 dims.*512 dims"):
        manifest.check("all-MiniLM-L6-v2", 512)


def test_build_collections_are_told_apart_from_a_store_sharing_the_prefix():
    store = ChromaStore(path="/nonexistent", name="docs")
    assert store._is_build("docs-20250101120000-0a1b2c")
    assert not store._is_build("docs-staging-20250101120000-0a1b2c")
    assert not store._is_build("docs-active")
