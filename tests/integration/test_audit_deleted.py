"""A past answer's sources as they are now: "deleted source" for a page taken out of the docs, "restricted" only
for one the reader may not read.

Seen in use: switching the content folder deleted a whole site's chunks, and the
audit then called every source of every past answer "restricted", sending
support staff to ask for access to pages that no longer exist. Real server,
real model, real Chroma index; the page is deleted from disk and re-indexed as
an author would.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from answer.generate import ExtractiveGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.services import open_retriever
from retrieval.store import ChromaStore
from tests.chroma_server import write_site
from web.app import create_app
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

GROUPS = "X-Groups"
FINANCE_PAGE = """---
title: Card fees
access: [finance]
---

# Card fees

Card payments carry a processing fee of 2.9 percent on every refund issued.
"""


def test_a_deleted_source_is_called_deleted_and_a_restricted_one_restricted(tmp_path: Path, real_embedder):
    root = write_site(tmp_path / "site")
    (root / "billing" / "fees.mdx").write_text(FINANCE_PAGE, encoding="utf-8")
    store = ChromaStore(path=str(tmp_path / "chroma"))
    sync_index(load_corpus(root), store, real_embedder)
    settings = Settings(content_dir=root, data_dir=tmp_path / "data", identity_header=GROUPS)
    answerer = Answerer(open_retriever(settings, store=store, embedder=real_embedder),
                        ExtractiveGenerator(real_embedder), audit=SQLiteAnswerLog(tmp_path / "answers.sqlite3"))
    with serve(create_app(settings, answerer=answerer, store=store)) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        staff = {GROUPS: "staff"}
        retries = client.post("/api/ask", json={"question": "How many times is a failed delivery retried?"}).json()
        assert any("guides/retries" in c["chunk_id"] for claim in retries["claims"] for c in claim["citations"])
        fees = client.post("/api/ask", json={"question": "What fee do card payments carry on a refund?"},
                           headers={GROUPS: "finance"}).json()
        assert any("billing/fees" in c["chunk_id"] for claim in fees["claims"] for c in claim["citations"])

        before = client.get(f"/answers/{retries['answer_id']}", headers=staff).text
        assert "deleted source" not in before and "restricted source" not in before

        (root / "guides" / "retries.mdx").unlink()
        sync_index(load_corpus(root), store, real_embedder)

        gone = client.get(f"/answers/{retries['answer_id']}", headers=staff)
        assert gone.status_code == 200
        assert "deleted source" in gone.text and "Deleted from the docs since this answer" in gone.text
        assert "restricted source" not in gone.text and "may not read" not in gone.text
        assert "8 times over 24 hours" not in gone.text  # a page taken down leaves past answers too
        # its citation says it is gone, never "unchanged" beside a version and hash it no longer has
        assert "source deleted since" in gone.text and 'class="label unchanged"' not in gone.text

        hidden = client.get(f"/answers/{fees['answer_id']}", headers=staff)
        assert "restricted source" in hidden.text and "Your groups may not read this source." in hidden.text
        assert "2.9 percent" not in hidden.text
        assert "not readable by your groups" in hidden.text and 'class="label unchanged"' not in hidden.text
