"""One store contract, three implementations: the in-memory store, embedded Chroma and a real `chroma run` server.

Each test builds a small site into a store, mutates the content the way an
author would, re-ingests, and checks the stored index against what a clean
build of the mutated content holds: same ids, hashes, text and metadata.
Every test takes `make_store`, so the fake the unit tests rely on is held to
exactly what Chroma does; only the paging of whole-index reads, which the
in-memory store has no reason to do, is checked against the two Chroma modes alone.
"""

from __future__ import annotations

import contextlib
import shutil
import uuid
from pathlib import Path

import pytest

from ingest.corpus import load_corpus
from retrieval.errors import IndexMismatchError
from retrieval.indexer import sync_index
from retrieval.protocols import Store
from retrieval.records import Row
from retrieval.store import ChromaStore
from tests.chroma_server import SITE_PAGES, chroma_binary, chroma_server, edit, write_site
from tests.conftest import require
from tests.fakes import HashEmbedder
from tests.memory_index import MemoryIndex, MemorySpace

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server_url(tmp_path_factory):
    require(chroma_binary() is not None, "the `chroma` CLI is needed for server-mode tests")
    with chroma_server(tmp_path_factory.mktemp("server") / "chroma") as url:
        yield url


def store_factory(kind: str, request, tmp_path: Path):  # noqa: ANN001, ANN201
    """Stores in one backing space (an in-memory space, an embedded folder or the test server); names isolate tests."""
    prefix = f"t{uuid.uuid4().hex[:8]}"
    if kind == "memory":
        space = MemorySpace()
        return lambda name="docs": MemoryIndex(space=space, name=f"{prefix}{name}")
    location = {"path": str(tmp_path / "chroma")} if kind == "embedded" else {"url": request.getfixturevalue("server_url")}
    return lambda name="docs": ChromaStore(**location, name=f"{prefix}{name}")


@pytest.fixture(params=["memory", "embedded", "server"])
def make_store(request, tmp_path):
    return store_factory(request.param, request, tmp_path)


@pytest.fixture(params=["embedded", "server"])
def make_chroma_store(request, tmp_path):
    return store_factory(request.param, request, tmp_path)


@pytest.fixture
def site(tmp_path) -> Path:
    return write_site(tmp_path / "site")


def stored(store: Store) -> dict[str, tuple[str, Row]]:
    """Every stored record: id → (text, decoded metadata)."""
    rows = {row.chunk.id: row for row in store.rows()}
    return {c.id: (c.text, rows[c.id]) for c in store.chunks()}


def stored_ids(store: Store) -> list[str]:
    return sorted(row.chunk.id for row in store.rows())


def clean_build(root: Path) -> dict[str, tuple[str, Row]]:
    """What a clean build of the content at `root` stores (text and metadata per id)."""
    return {c.id: (c.text, Row.of(c)) for c in load_corpus(root).chunks()}


def vectors(store: Store) -> dict[str, list[float]]:
    ids = stored_ids(store)
    return dict(zip(ids, store.vectors(ids), strict=True))


def own_collections(store: ChromaStore | MemoryIndex) -> list[str]:
    return [c for c in store.collections() if c.startswith(store.name)]


class FailingEmbedder(HashEmbedder):
    """Embeds `batches` batches, then fails like a model running out of memory."""

    def __init__(self, batches: int, **kwargs) -> None:  # noqa: ANN003
        super().__init__(**kwargs)
        self.left = batches

    def embed(self, texts):  # noqa: ANN001, ANN201
        if self.left <= 0:
            raise RuntimeError("embedder died")
        self.left -= 1
        return super().embed(texts)


def test_fresh_build_then_noop(make_store, site):
    store = make_store()
    first = sync_index(load_corpus(site), store, HashEmbedder())
    assert first.chunks_embedded == len(clean_build(site)) > 0
    assert stored(store) == clean_build(site)
    again = sync_index(load_corpus(site), store, HashEmbedder())
    assert (again.chunks_embedded, again.chunks_reused, again.chunks_updated, again.chunks_deleted) == (0, 0, 0, 0)
    assert again.pages_unchanged == 4 and again.pages_changed == 0


def test_edit_one_paragraph_reembeds_exactly_that_chunk(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    before = vectors(store)
    edit(site / "guides/retries.mdx", "up to 8 times over 24 hours", "up to 12 times over 72 hours")
    report = sync_index(load_corpus(site), store, HashEmbedder())
    after = vectors(store)
    assert report.chunks_embedded == 1 and report.pages_changed == 1
    assert [cid for cid in after if after[cid] != before[cid]] == ["doc:guides/retries#retry-schedule"]
    assert stored(store) == clean_build(site)


def test_renamed_heading_replaces_the_id(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    edit(site / "guides/retries.mdx", "## Backoff", "## Exponential backoff")
    report = sync_index(load_corpus(site), store, HashEmbedder())
    ids = set(stored_ids(store))
    assert "doc:guides/retries#backoff" not in ids and "doc:guides/retries#exponential-backoff" in ids
    assert report.chunks_deleted == 1 and report.chunks_embedded == 1
    assert stored(store) == clean_build(site)


def test_deleted_page_loses_its_chunks(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    (site / "billing/refunds.mdx").unlink()
    report = sync_index(load_corpus(site), store, HashEmbedder())
    assert report.pages_removed == 1 and report.chunks_deleted == 2
    assert not [cid for cid in stored_ids(store) if cid.startswith("doc:billing/refunds")]
    assert stored(store) == clean_build(site)


def test_moved_page_reuses_vectors(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    old = {cid: v for cid, v in vectors(store).items() if cid.startswith("doc:billing/refunds")}
    (site / "account").mkdir()
    shutil.move(site / "billing/refunds.mdx", site / "account/refunds.mdx")
    report = sync_index(load_corpus(site), store, HashEmbedder())
    assert (report.chunks_embedded, report.chunks_reused) == (0, 2)
    moved = {cid: v for cid, v in vectors(store).items() if cid.startswith("doc:account/refunds")}
    assert sorted(moved.values()) == sorted(old.values())
    assert not set(old) & set(stored_ids(store))
    assert stored(store) == clean_build(site)


def test_a_broken_body_keeps_old_chunks_and_commits_the_rest(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    kept = {cid: rec for cid, rec in stored(store).items() if cid.startswith("doc:billing/refunds")}
    edit(site / "billing/refunds.mdx", "## Requesting a refund\n", "## Requesting a refund\n\n<Tabs>\n")
    edit(site / "guides/retries.mdx", "starting at 30 seconds", "starting at 45 seconds")
    report = sync_index(load_corpus(site), store, HashEmbedder())
    assert report.pages_failed == 1 and "billing/refunds.mdx" in report.failures[0]
    assert report.pages_withheld == 0 and not report.withheld
    assert report.chunks_embedded == 1 and report.chunks_deleted == 0
    now = stored(store)
    assert {cid: now[cid] for cid in kept} == kept
    assert "45 seconds" in now["doc:guides/retries#backoff"][0]


UNREADABLE_ACCESS = {
    "repeated key": ("title: Refunds\n", "title: Refunds\naccess: [staff]\naccess: [public]\n", 4),
    "wrong case": ("title: Refunds\n", "title: Refunds\nAccess: [staff]\n", 3),
    "unparsable YAML": ("title: Refunds", "title: [Refunds", 2),
}


@pytest.mark.parametrize("form", UNREADABLE_ACCESS)
def test_a_page_whose_access_cannot_be_read_is_withheld_until_fixed(make_store, site, form):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    before = stored(store)
    old, new, line = UNREADABLE_ACCESS[form]
    edit(site / "billing/refunds.mdx", old, new)
    edit(site / "guides/retries.mdx", "starting at 30 seconds", "starting at 45 seconds")
    report = sync_index(load_corpus(site), store, HashEmbedder())
    assert report.pages_failed == report.pages_withheld == 1
    assert report.withheld == report.failures and report.failures[0].startswith(f"billing/refunds.mdx:{line}: ")
    assert f"WITHHELD billing/refunds.mdx:{line}: " in report.summary()
    assert report.chunks_deleted == 2 and report.chunks_embedded == 1
    assert not [cid for cid in stored_ids(store) if cid.startswith("doc:billing/refunds")]
    assert "45 seconds" in stored(store)["doc:guides/retries#backoff"][0]

    edit(site / "billing/refunds.mdx", new, old)
    fixed = sync_index(load_corpus(site), store, HashEmbedder())
    assert fixed.pages_failed == 0 and fixed.pages_added == 1
    assert {cid: rec for cid, rec in stored(store).items() if cid.startswith("doc:billing/refunds")} == {
        cid: rec for cid, rec in before.items() if cid.startswith("doc:billing/refunds")}
    assert stored(store) == clean_build(site)


def test_a_failed_page_keeps_its_old_chunks_only_for_groups_its_new_access_still_names(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    edit(site / "internal/overrides.mdx", "access: [staff]", "access: [staff, leads]")
    for source in ("billing/refunds.mdx", "internal/overrides.mdx"):
        (site / source).write_text((site / source).read_text() + "\n<Tabs>\n")
    report = sync_index(load_corpus(site), store, HashEmbedder())
    assert report.pages_failed == 2 and report.pages_withheld == 0
    assert not [cid for cid in stored_ids(store) if cid.startswith("doc:billing/refunds")]  # public only before
    assert {c.id: c.access for c in store.chunks(groups=["staff"]) if c.doc_id == "doc:internal/overrides"} == {
        "doc:internal/overrides#refund-overrides": ("staff",)}
    assert not [c for c in store.chunks(groups=["leads"]) if c.doc_id == "doc:internal/overrides"]  # waits for new text


def test_access_change_updates_metadata_without_reembedding(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    before = vectors(store)
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    report = sync_index(load_corpus(site), store, HashEmbedder())
    assert report.chunks_embedded == 0 and report.chunks_updated == 2 and report.pages_changed == 1
    assert vectors(store) == before
    public = {c.id for c in store.chunks(groups=["public"])}
    staff = {c.id for c in store.chunks(groups=["staff"])}
    assert "doc:billing/refunds#refund-windows" not in public and "doc:billing/refunds#refund-windows" in staff
    hits = store.query(HashEmbedder().embed(["refunded within 30 days"])[0], 10, ["public"])
    assert not [c for c, _ in hits if c.doc_id == "doc:billing/refunds"]
    assert stored(store) == clean_build(site)


def test_edit_and_access_change_together_drop_the_old_group(make_store, site):
    """Chroma merges metadata on upsert: a re-embedded chunk must not keep `acl_public` from before."""
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    edit(site / "billing/refunds.mdx", "within 30 days", "within 45 days")
    report = sync_index(load_corpus(site), store, HashEmbedder())
    assert report.chunks_embedded == 1
    assert not [c for c in store.chunks(groups=["public"]) if c.doc_id == "doc:billing/refunds"]
    assert stored(store) == clean_build(site)


def test_embedder_change_is_a_clear_error_until_a_full_rebuild(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    other = HashEmbedder(dimension=32, model_id="hash-32")
    with pytest.raises(IndexMismatchError, match=r"hash-64.*hash-32.*make ingest FULL=1"):
        sync_index(load_corpus(site), store, other)
    report = sync_index(load_corpus(site), store, other, full=True)
    assert report.chunks_embedded == len(clean_build(site))
    assert (store.manifest().embedder, store.manifest().dimension) == ("hash-32", 32)
    assert stored(store) == clean_build(site)


def test_same_embedder_id_with_another_dimension_is_refused_before_writing(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    before = stored(store)
    edit(site / "guides/retries.mdx", "8 times", "9 times")
    with pytest.raises(IndexMismatchError, match="64-dim.*32-dim"):
        sync_index(load_corpus(site), store, HashEmbedder(dimension=32, model_id="hash-64"))
    assert stored(store) == before


def test_failed_full_rebuild_leaves_old_index_serving_and_next_run_drops_the_orphan(make_store, site, monkeypatch):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    serving, manifest = stored(store), store.manifest()
    live = own_collections(store)
    edit(site / "guides/retries.mdx", "8 times", "10 times")
    monkeypatch.setattr("retrieval.indexer.EMBED_BATCH", 2)
    with pytest.raises(RuntimeError, match="embedder died"):
        sync_index(load_corpus(site), store, FailingEmbedder(2, model_id="hash-v2"), full=True)
    assert stored(store) == serving and store.manifest() == manifest
    assert len(own_collections(store)) == len(live) + 1  # the half-built orphan
    sync_index(load_corpus(site), store, HashEmbedder())
    assert own_collections(store) == live
    assert stored(store) == clean_build(site)


def test_full_rebuild_keeps_chunks_of_a_broken_body_and_withholds_unreadable_access(make_store, site):
    store = make_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    kept = {cid: rec for cid, rec in stored(store).items() if cid.startswith("doc:billing/refunds")}
    edit(site / "billing/refunds.mdx", "## Requesting a refund\n", "## Requesting a refund\n\n<Tabs>\n")
    edit(site / "internal/overrides.mdx", "access: [staff]", "acess: [staff]")
    report = sync_index(load_corpus(site), store, HashEmbedder(), full=True)
    assert report.pages_failed == 2 and report.pages_withheld == 1
    now = stored(store)
    assert {cid: now[cid] for cid in kept} == kept
    assert not [cid for cid in now if cid.startswith("doc:internal/overrides")]


def test_rebuild_does_not_touch_a_store_whose_name_shares_the_prefix(make_store, site):
    docs, staging = make_store("docs"), make_store("docs-staging")
    sync_index(load_corpus(site), staging, HashEmbedder())
    sync_index(load_corpus(site), docs, HashEmbedder())
    sync_index(load_corpus(site), docs, HashEmbedder(), full=True)
    assert stored(staging) == clean_build(site)
    assert stored(docs) == clean_build(site)


def test_noop_reingest_of_content_embeds_nothing(make_store, tmp_path):
    root = tmp_path / "content"
    shutil.copytree(Path(__file__).resolve().parents[2] / "content", root)
    store = make_store()
    first = sync_index(load_corpus(root), store, HashEmbedder())
    again = sync_index(load_corpus(root), store, HashEmbedder())
    assert first.chunks_embedded > 100
    assert (again.chunks_embedded, again.chunks_updated, again.chunks_deleted) == (0, 0, 0)
    assert stored(store) == clean_build(root)


def test_real_model_one_paragraph_edit_is_searchable(make_store, site, real_embedder):
    store = make_store()
    sync_index(load_corpus(site), store, real_embedder)
    edit(site / "billing/refunds.mdx", "Annual plans can be refunded within 30 days of purchase.",
         "Monthly plans are never refunded; cancel before the renewal date instead.")
    report = sync_index(load_corpus(site), store, real_embedder)
    assert report.chunks_embedded == 1
    hits = store.query(real_embedder.embed(["can I get my monthly plan refunded?"])[0], 1, ["public"])
    assert hits[0][0].id == "doc:billing/refunds#refund-windows" and "never refunded" in hits[0][0].text
    assert stored(store) == clean_build(site)


def test_real_model_noop_reingest_of_content_embeds_nothing(content_index, corpus, real_embedder):
    report = sync_index(corpus, content_index, real_embedder)
    assert (report.chunks_embedded, report.chunks_updated, report.chunks_deleted) == (0, 0, 0)
    assert report.pages_unchanged == len(corpus.pages)


def test_a_reader_holding_the_old_collection_sees_a_full_rebuild_within_the_pointer_ttl(make_store, site):
    import time

    from retrieval.chroma import POINTER_TTL
    from retrieval.errors import StoreUnavailableError

    reader, builder = make_store(), make_store()  # two handles, as a web process and an ingest process
    embedder = HashEmbedder()
    sync_index(load_corpus(site), builder, embedder)
    probe = embedder.embed(["retries"])[0]
    before = {c.id for c, _ in reader.query(probe, 50, ["public"])}
    edit(site / "billing" / "refunds.mdx", "## Refund windows", "## Refund periods")
    sync_index(load_corpus(site), builder, embedder, full=True)  # drops the collection the reader holds
    # a clear "try again", never a stack trace or stale answer from a deleted collection
    with contextlib.suppress(StoreUnavailableError):
        reader.query(probe, 50, ["public"])
    time.sleep(POINTER_TTL + 0.1)
    after = {c.id for c, _ in reader.query(probe, 50, ["public"])}
    assert after == {c.id for c, _ in builder.query(probe, 50, ["public"])}
    assert after != before


def test_nearest_gives_the_ids_and_similarities_of_query_and_records_give_every_chunk_with_its_vector(make_store, site):
    store = make_store()
    embedder = HashEmbedder()
    sync_index(load_corpus(site), store, embedder)
    probe = embedder.embed(["refunds within 30 days of purchase"])[0]
    for groups in (["public"], ["staff"], ["public", "staff"]):
        full = [(c.id, round(s, 5)) for c, s in store.query(probe, 50, groups)]
        assert [(i, round(s, 5)) for i, s in store.nearest(probe, 50, groups)] == full
    assert "doc:internal/overrides" not in [i for i, _ in store.nearest(probe, 50, ["public"])]
    records = store.records()
    assert sorted(r.chunk.id for r in records) == [c.id for c in store.chunks()]
    by_id = {r.chunk.id: r for r in records}
    ids = sorted(by_id)
    for chunk_id, vector in zip(ids, store.vectors(ids), strict=True):
        assert [round(float(x), 6) for x in by_id[chunk_id].vector] == [round(x, 6) for x in vector]
        assert by_id[chunk_id].readers == frozenset(by_id[chunk_id].chunk.access)


def test_a_restriction_written_through_another_handle_is_never_served_by_the_next_query(make_store, site):
    """The chunk table follows the pointer's generation: a writer elsewhere is seen by the very next query."""
    from retrieval.search import HybridRetriever
    from retrieval.viewer import Viewer

    reader, writer = make_store(), make_store()  # two handles, as a web process and an ingest process
    embedder = HashEmbedder()
    sync_index(load_corpus(site), writer, embedder)
    hybrid = HybridRetriever(reader, embedder)
    anonymous = Viewer.anonymous()
    questions = ("Annual plans can be refunded within 30 days of purchase.", "refunded annual plans purchase")
    assert all("doc:billing/refunds#refund-windows" in [h.chunk.id for h in hybrid.search(q, anonymous).hits] for q in questions)
    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    sync_index(load_corpus(site), writer, embedder)
    for question in questions:
        assert not [h for h in hybrid.search(question, anonymous, k=50).hits if h.chunk.doc_id == "doc:billing/refunds"]
    staff = [h.chunk.id for h in hybrid.search(questions[0], Viewer.of(["staff"])).hits]
    assert "doc:billing/refunds#refund-windows" in staff


def test_whole_index_reads_are_paged_and_return_every_record(make_chroma_store, site, monkeypatch):
    """Chroma fails one unpaged read of ~100k records ("too many SQL variables"): every whole read is paged."""
    import retrieval.store as store_module

    store = make_chroma_store()
    sync_index(load_corpus(site), store, HashEmbedder())
    whole = (stored_ids(store), [c.id for c in store.chunks()], sorted(r.chunk.id for r in store.records()),
             store.count(["public"]), store.vectors(stored_ids(store)))
    monkeypatch.setattr(store_module, "_PAGE", 2)  # fewer than the site's chunks: several pages each
    assert len(whole[0]) > 4
    assert (stored_ids(store), [c.id for c in store.chunks()], sorted(r.chunk.id for r in store.records()),
            store.count(["public"]), store.vectors(stored_ids(store))) == whole


def test_group_names_one_character_apart_never_read_each_others_chunks(make_store, tmp_path):
    """Every store filters on the encoded access key, so a key two names shared would show here in each of them."""
    teams = {
        "teams/dash.mdx": "---\ntitle: Dash team\naccess: [team-a]\n---\n\nThe dash team rotates the pager weekly.\n",
        "teams/under.mdx": "---\ntitle: Under team\naccess: [team_a]\n---\n\nThe under team rotates the pager daily.\n",
    }
    root = write_site(tmp_path / "teams", {**SITE_PAGES, **teams})
    store, embedder = make_store(), HashEmbedder()
    sync_index(load_corpus(root), store, embedder)
    page_of = {c.id: c.doc_id for c in store.chunks()}
    probe = embedder.embed(["which team rotates the pager"])[0]
    for group, own, other in (("team-a", "doc:teams/dash", "doc:teams/under"), ("team_a", "doc:teams/under", "doc:teams/dash")):
        readable = {c.doc_id for c in store.chunks(groups=[group])}
        near = {page_of[i] for i, _ in store.nearest(probe, 50, [group])}
        hits = {c.doc_id for c, _ in store.query(probe, 50, [group])}
        assert own in readable and own in near and own in hits
        assert other not in readable | near | hits
        assert store.count([group]) == sum(1 for doc in page_of.values() if doc == own)


def test_changes_since_a_generation_are_the_rows_stamped_after_it_and_the_ids_it_deleted(make_store, site):
    """Every store stamps what a generation wrote and logs what it deleted, so a reader lists only what changed."""
    store, embedder = make_store(), HashEmbedder()
    sync_index(load_corpus(site), store, embedder)
    built = store.generation()
    assert store.changes(built) is not None and store.changes(built).rows == ()  # type: ignore[union-attr]
    edit(site / "guides/retries.mdx", "up to 8 times over 24 hours", "up to 12 times over 48 hours")
    gone = sorted(row.chunk.id for row in store.rows() if row.chunk.source == "billing/refunds.mdx")
    (site / "billing/refunds.mdx").unlink()
    sync_index(load_corpus(site), store, embedder)
    changed = store.changes(built)
    assert changed is not None and changed.complete and changed.generation == store.generation()
    assert {row.chunk.source for row in changed.rows} == {"guides/retries.mdx"}
    assert {row.chunk.id: row for row in changed.rows} == {row.chunk.id: row for row in store.rows()
                                                           if row.chunk.source == "guides/retries.mdx"}
    assert sorted(changed.deleted) == gone
    later, at_access = store.generation(), []
    sync_index(load_corpus(site), store, embedder, full=True,  # a new collection: the chains from before are broken
               on_access=lambda _: at_access.append(store.generation()))
    assert store.changes(built) is None and store.changes(later) is None
    # ... but a reader that holds the rebuild's access step has nothing to tighten, only content to list
    assert store.changes(at_access[0]) == type(changed)(store.generation(), complete=False)
