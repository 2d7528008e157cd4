"""A long-lived writer diffs against the rows it knows plus what changed since, never a stale copy.

The server keeps the index's rows between its ingests (`KnownRows`) instead of
listing all of them before each diff. Another writer may move the index in
between (a CLI against a Chroma server, a full rebuild): what the server's
next ingest diffs against must still be exactly what is stored, or a page
restricted or deleted by that writer and restored in the content would stay
restricted or missing. Real embedded Chroma, the real model.
"""

from __future__ import annotations

import pytest

from ingest.corpus import load_corpus
from retrieval.indexer import KnownRows, sync_index
from retrieval.store import ChromaStore
from tests.chroma_server import edit, write_site

pytestmark = pytest.mark.integration

PUBLIC_FRONT = "---\ntitle: Retries\n---"
STAFF_FRONT = "---\ntitle: Retries\naccess: [staff]\n---"


def stored(store: ChromaStore) -> dict:
    return {row.chunk.id: row for row in store.rows()}


def test_the_known_rows_follow_every_writer_and_the_diff_sees_what_is_stored(tmp_path, real_embedder):
    site = write_site(tmp_path / "site")
    store = ChromaStore(path=str(tmp_path / "chroma"))
    known = KnownRows()
    sync_index(load_corpus(site), store, real_embedder, known=known)
    assert known.read(store) == stored(store)

    retries = site / "guides" / "retries.mdx"
    refunds = (site / "billing" / "refunds.mdx").read_text(encoding="utf-8")
    # Another writer restricts one page and deletes another (this process's rows do not see it happen).
    edit(retries, PUBLIC_FRONT, STAFF_FRONT)
    (site / "billing" / "refunds.mdx").unlink()
    sync_index(load_corpus(site), store, real_embedder)
    assert known.read(store) == stored(store)
    assert all(row.chunk.access == ("staff",) for cid, row in stored(store).items() if "guides/retries" in cid)

    # The content is restored; the long-lived writer must put both back.
    edit(retries, STAFF_FRONT, PUBLIC_FRONT)
    (site / "billing" / "refunds.mdx").write_text(refunds, encoding="utf-8")
    report = sync_index(load_corpus(site), store, real_embedder, known=known)
    rows = stored(store)
    assert report.chunks_updated > 0
    assert all(row.chunk.access == ("public",) for cid, row in rows.items() if "guides/retries" in cid)
    assert any("billing/refunds" in cid for cid in rows)
    assert {c.id for c in load_corpus(site).chunks()} == set(rows)
    assert known.read(store) == rows


def test_after_a_full_rebuild_elsewhere_the_known_rows_are_listed_again(tmp_path, real_embedder):
    site = write_site(tmp_path / "site")
    store = ChromaStore(path=str(tmp_path / "chroma"))
    known = KnownRows()
    sync_index(load_corpus(site), store, real_embedder, known=known)
    edit(site / "guides" / "retries.mdx", "up to 8 times", "up to 9 times")
    sync_index(load_corpus(site), store, real_embedder, full=True)  # a new collection: the change chain restarts
    assert known.read(store) == stored(store)
    edit(site / "guides" / "retries.mdx", "up to 9 times", "up to 10 times")
    sync_index(load_corpus(site), store, real_embedder, known=known)
    texts = " ".join(chunk.text for chunk in store.chunks())
    assert "up to 10 times" in texts and "up to 9 times" not in texts
    assert known.read(store) == stored(store)
