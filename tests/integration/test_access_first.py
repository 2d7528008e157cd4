"""Access changes and deletions go live before any embedding; the docs viewer and the chat agree throughout.

Issue 14, item 2, through the real HTTP server (real model, embedded Chroma):
the server runs the ingest itself (as it does for a handed-off `make ingest`),
and the embedding step is made to fail, which is where a kill used to leave a
newly restricted page public until the next run. A page made public again is
answerable by the very next question, as quickly as a restriction.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import httpx
import pytest

from answer.generate import ExtractiveGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.services import open_retriever
from retrieval.store import ChromaStore
from tests.chroma_server import edit, write_site
from web.app import create_app
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

HEADER = "X-Groups"
REFUND_FACT = "Annual plans can be refunded within 30 days of purchase."
OVERRIDE_FACT = "Support leads may approve refunds up to 90 days after purchase."


class Switch:
    """The real model; embedding a passage fails while `broken` is set (questions still embed)."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner, self.broken = inner, threading.Event()
        self.id, self.dimension = inner.id, inner.dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.broken.is_set() and any("\n" in t for t in texts):  # passages carry their heading path on line 1
            raise RuntimeError("embedding died (simulated kill after the access step)")
        return self.inner.embed(texts)


@pytest.fixture
def world(tmp_path, real_embedder):
    site = write_site(tmp_path / "site")
    store = ChromaStore(path=str(tmp_path / "chroma"))
    embedder = Switch(real_embedder)
    sync_index(load_corpus(site), store, embedder)
    settings = Settings(content_dir=site, data_dir=tmp_path / "data", identity_header=HEADER)
    answerer = Answerer(open_retriever(settings, store=store, embedder=embedder), ExtractiveGenerator(real_embedder),
                        audit=SQLiteAnswerLog(settings.audit_path))
    app = create_app(settings, answerer=answerer, index=store)  # the index this server reads and ingests into
    with serve(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield {"site": site, "client": client, "services": app.state.services, "embedder": embedder}


def chat(client: httpx.Client, question: str, groups: str = "") -> str:
    response = client.post("/api/ask", json={"question": question}, headers={HEADER: groups} if groups else {})
    assert response.status_code == 200, response.text[:300]
    return " ".join(c["text"] for c in response.json()["claims"])


def viewer(client: httpx.Client, slug: str, groups: str = "") -> int:
    return client.get(f"/docs/{slug}", headers={HEADER: groups} if groups else {}).status_code


def test_a_restriction_and_a_deletion_are_live_before_embedding_even_when_embedding_dies(world):
    client, site, services = world["client"], world["site"], world["services"]
    assert "30 days" in chat(client, "Can annual plans be refunded?") and viewer(client, "billing/refunds") == 200
    assert "8 times" in chat(client, "How many times does Ferrydeck retry a failed delivery?")

    edit(site / "billing/refunds.mdx", "title: Refunds\n", "title: Refunds\naccess: [staff]\n")
    edit(site / "billing/refunds.mdx", "within 30 days", "within 45 days")  # new text: must be re-embedded
    (site / "guides/retries.mdx").unlink()
    # On disk only: nothing is published yet, and the viewer and the chat still agree (both serve the old page).
    assert viewer(client, "billing/refunds") == 200 and "30 days" in chat(client, "Can annual plans be refunded?")

    world["embedder"].broken.set()
    with pytest.raises(RuntimeError, match="embedding died"):
        services.ingest()
    for question in ("Can annual plans be refunded?", "refund windows annual plans purchase 30 days"):
        assert "30 days" not in chat(client, question) and "45 days" not in chat(client, question)
    assert viewer(client, "billing/refunds") == 404
    assert "8 times" not in chat(client, "How many times does Ferrydeck retry a failed delivery?")
    assert viewer(client, "guides/retries") == 404
    assert client.get("/docs/search", params={"q": "refund annual"}).text.count("30 days") == 0

    world["embedder"].broken.clear()  # the next run finishes the job
    services.ingest()
    assert "45 days" in chat(client, "Can annual plans be refunded?", "staff")
    assert "45 days" not in chat(client, "Can annual plans be refunded?")
    assert viewer(client, "billing/refunds", "staff") == 200 and viewer(client, "billing/refunds") == 404


def test_making_a_page_public_again_is_answerable_by_the_very_next_question(world):
    client, site, services = world["client"], world["site"], world["services"]
    question = "Who may approve refunds up to 90 days after purchase?"
    assert "90 days" not in chat(client, question) and viewer(client, "internal/overrides") == 404
    assert "90 days" in chat(client, question, "staff")
    chat(client, "support leads approve refunds 90 days")  # warm the public BM25 cache that used to go stale

    edit(site / "internal/overrides.mdx", "access: [staff]\n", "")
    services.ingest()
    assert "90 days" in chat(client, question)  # no waiting: the first question after the ingest
    assert "90 days" in chat(client, "support leads approve refunds 90 days")
    assert viewer(client, "internal/overrides") == 200

    edit(site / "internal/overrides.mdx", "title: Refund overrides\n", "title: Refund overrides\naccess: [staff]\n")
    services.ingest()
    assert "90 days" not in chat(client, question) and viewer(client, "internal/overrides") == 404
