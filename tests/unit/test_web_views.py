"""Docs viewer, docs search and the staff audit view: identity only from the configured header."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from starlette.testclient import TestClient

from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from ingest.documents import PUBLIC
from ingest.site import SiteConfig
from retrieval.search import DenseRetriever
from tests.conftest import CONTENT
from tests.fakes import HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.render import inline_code, is_site_url
from web.settings import Settings

QUOTE = "Refunds are available within 14 days of the charge."
REFUNDS = make_chunk("billing/refunds", "refund-windows", QUOTE + " Annual plans are refunded pro rata.",
                     title="Refunds", heading="Refund windows")
MIXED = json.dumps({"refused": False, "claims": [
    {"quotes": [{"handle": "c1", "quote": QUOTE}], "claim": "Refunds are available for 14 days after the charge."},
    {"quotes": [{"handle": "c1", "quote": "Refunds are paid in gold bars"}], "claim": "Refunds are paid in gold bars."}]})


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(CONTENT)


@pytest.fixture(scope="module")
def restricted(corpus):
    return next(p for p in corpus.pages if PUBLIC not in p.access)


def app(tmp_path, corpus, *replies, **settings) -> TestClient:  # noqa: ANN001
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS])
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(*replies),
                        audit=SQLiteAnswerLog(tmp_path / "answers.sqlite3"))
    return TestClient(create_app(Settings(data_dir=tmp_path, **settings), answerer=answerer, store=store, corpus=corpus))


def test_docs_viewer_renders_exactly_the_chunk_heading_ids(tmp_path, corpus):
    client = app(tmp_path, corpus)
    page = next(p for p in corpus.pages if PUBLIC in p.access and len(p.headings) > 3)
    html = client.get(page.url).text
    for chunk in (c for c in corpus.chunks() if c.doc_id == f"doc:{page.slug}" and c.anchor):
        assert f'id="{chunk.anchor}"' in html, chunk.id


def test_restricted_pages_404_unless_the_trusted_header_grants_access(tmp_path, corpus, restricted):
    group = restricted.access[0]
    off = app(tmp_path, corpus)
    assert off.get(restricted.url, headers={"X-Groups": group}).status_code == 404  # header ignored when off
    on = app(tmp_path, corpus, identity_header="X-Groups")
    assert on.get(restricted.url).status_code == 404
    assert on.get(restricted.url, headers={"X-Groups": "other-tenant"}).status_code == 404
    assert on.get(restricted.url, headers={"X-Groups": group}).status_code == 200
    assert restricted.title not in off.get(restricted.url).text


def test_docs_search_never_lists_a_restricted_page(tmp_path, corpus, restricted):
    client = app(tmp_path, corpus)
    html = client.get("/docs/search", params={"q": restricted.title}).text
    assert restricted.url not in html
    assert "result" in html


def test_docs_search_finds_public_sections(tmp_path, corpus):
    html = app(tmp_path, corpus).get("/docs/search", params={"q": "refund"}).text
    assert re.search(r'href="/docs/billing/refunds[#"]', html)


def test_audit_view_is_for_staff_only_and_never_trusts_a_header_when_identity_is_off(tmp_path, corpus):
    client = app(tmp_path, corpus, MIXED, MIXED)
    answer_id = re.search(r'data-answer-id="([^"]+)"', client.post("/ask", data={"question": "refund?"}).text).group(1)
    assert client.get(f"/answers/{answer_id}", headers={"X-Groups": "staff"}).status_code == 403
    assert client.get("/answers", headers={"X-Groups": "staff"}).status_code == 403
    staff = app(tmp_path, corpus, identity_header="X-Groups")
    assert staff.get(f"/answers/{answer_id}", headers={"X-Groups": "support"}).status_code == 403
    assert staff.get(f"/answers/{answer_id}", headers={"X-Groups": "staff"}).status_code == 200


def test_audit_view_shows_question_viewer_chunks_drafts_and_why_each_claim_was_dropped(tmp_path, corpus):
    asker = app(tmp_path, corpus, MIXED, MIXED)
    answer_id = re.search(r'data-answer-id="([^"]+)"', asker.post("/ask", data={"question": "refund?"}).text).group(1)
    staff = app(tmp_path, corpus, identity_header="X-Groups")
    html = staff.get(f"/answers/{answer_id}", headers={"X-Groups": "staff"}).text
    assert "refund?" in html and "public" in html
    assert REFUNDS.id in html and REFUNDS.hash in html and "version 2.4" in html
    assert "Refunds are paid in gold bars" in html  # the raw draft
    removed = re.search(r'<tr class="outcome-not-shown">(.*?)</tr>', html, re.S)
    assert removed and "gold bars" in removed.group(1) and "quote not in c1" in removed.group(1)
    assert html.count("the answer was built from this draft") == 1
    assert "unchanged" in html  # the cited source still matches the index


def test_audit_search_filters_by_text_and_state(tmp_path, corpus):
    asker = app(tmp_path, corpus, MIXED, MIXED)
    asker.post("/ask", data={"question": "refund window?"})
    staff = app(tmp_path, corpus, identity_header="X-Groups")
    found = staff.get("/answers", params={"q": "window", "state": "answered"}, headers={"X-Groups": "staff"}).text
    assert "refund window?" in found
    missing = staff.get("/answers", params={"q": "window", "state": "refused"}, headers={"X-Groups": "staff"}).text
    assert "refund window?" not in missing and "No answers match" in missing


@pytest.mark.parametrize(("url", "ok"), [
    ("/docs/billing/refunds#x:~:text=a", True), ("/docs", True), ("/docsx/evil", False), ("//evil.example/docs/x", False),
    ("javascript:alert(1)", False), ("https://evil.example/docs/x", False), ("/elsewhere", False),
])
def test_only_the_sites_own_urls_are_links(url, ok):
    assert is_site_url(url, SiteConfig(base_url="/docs")) is ok


@pytest.mark.parametrize(("url", "ok"), [
    ("https://docs.example.com/a#b", True), ("https://docs.example.com.evil.io/a", False),
    ("http://docs.example.com/a", False), ("/docs/a", False),
])
def test_external_sites_allow_only_their_own_host(url, ok):
    assert is_site_url(url, SiteConfig(base_url="https://docs.example.com")) is ok


def test_inline_code_escapes_and_marks_backticked_spans():
    assert str(inline_code("call `POST /v2/<x>` now")) == "call <code>POST /v2/&lt;x&gt;</code> now"
    assert str(inline_code("odd ` <b>")) == "odd ` &lt;b&gt;"
    # a template literal inside a double-backtick span keeps its backticks (it was cut into three spans)
    assert str(inline_code("Join ``items.map((c) => `- ${c}`)`` first")) == \
        "Join <code>items.map((c) =&gt; `- ${c}`)</code> first"


def test_audit_view_gives_the_reason_a_shown_claim_is_only_partial(tmp_path, corpus):
    partial = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": QUOTE}],
                          "claim": "Refunds are available within 14 days of the charge through the billing portal."}]})
    asker = app(tmp_path, corpus, partial, partial)
    answer_id = re.search(r'data-answer-id="([^"]+)"', asker.post("/ask", data={"question": "refund?"}).text).group(1)
    staff = app(tmp_path, corpus, identity_header="X-Groups")
    html = unescape(staff.get(f"/answers/{answer_id}", headers={"X-Groups": "staff"}).text)
    # "through the billing portal" adds words the quote does not have; the audit must say which.
    assert "some claim terms not in the quotes: billing, portal" in html


def test_docs_viewer_follows_the_published_index_not_the_disk(tmp_path):
    import shutil

    from ingest.corpus import load_corpus

    site = tmp_path / "content"
    site.mkdir()
    shutil.copy(CONTENT / "site.toml", site / "site.toml")
    page = site / "plans.mdx"
    page.write_text("---\ntitle: Plans\n---\n\n## Prices\n\nThe Growth plan costs 249 dollars.\n", encoding="utf-8")
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS])
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator())
    app = create_app(Settings(content_dir=site, data_dir=tmp_path), answerer=answerer, store=store)
    client = TestClient(app)
    assert client.get("/docs/plans").status_code == 200
    assert "249 dollars" in client.get("/docs/search", params={"q": "growth plan"}).text
    page.write_text("---\ntitle: Plans\naccess: [staff]\n---\n\n## Prices\n\nThe Growth plan costs 249 dollars!\n", encoding="utf-8")
    assert client.get("/docs/plans").status_code == 200  # an edit on disk is not published until an ingest applies it
    app.state.services.docs.publish(load_corpus(site))  # what an ingest does at its access step
    assert client.get("/docs/plans").status_code == 404
    assert "249 dollars" not in client.get("/docs/search", params={"q": "growth plan"}).text
