"""The project's own documentation (docs/) is a site the bot can ingest and answer from.

Every page parses, every internal link and anchor lands, and two questions a
user asks are answered, by the extractive answerer wired as `make serve` wires
it, with verbatim quotes from the page that documents the answer (real model,
real Chroma).
"""

from __future__ import annotations

import pytest

from answer.generate import ExtractiveGenerator
from answer.pipeline import Answerer
from answer.services import build_judge
from ingest.corpus import load_corpus
from ingest.links import anchor_links
from retrieval.indexer import sync_index
from retrieval.services import open_retriever
from retrieval.store import ChromaStore
from retrieval.viewer import Viewer
from tests.conftest import REPO
from web.settings import Settings

pytestmark = pytest.mark.integration

DOCS = REPO / "docs"


@pytest.fixture(scope="module")
def docs_corpus():
    return load_corpus(DOCS)


@pytest.fixture(scope="module")
def answerer(docs_corpus, tmp_path_factory, real_embedder):
    store = ChromaStore(path=str(tmp_path_factory.mktemp("docs-chroma")))
    sync_index(docs_corpus, store, real_embedder)
    settings = Settings(content_dir=DOCS, data_dir=tmp_path_factory.mktemp("docs-data"))
    retriever = open_retriever(settings, store=store, embedder=real_embedder)
    judge = build_judge(docs_corpus.site, retriever, real_embedder)
    return Answerer(retriever, ExtractiveGenerator(real_embedder, judge=judge), judge=judge)


def test_every_docs_page_parses_with_a_title_of_its_own(docs_corpus):
    assert docs_corpus.failures == ()
    assert docs_corpus.notes == ()
    titles = [page.title for page in docs_corpus.pages]
    assert len(titles) >= 9 and len(set(titles)) == len(titles), titles


def test_docs_have_no_broken_links_or_anchors(docs_corpus):
    assert [str(link) for link in docs_corpus.broken_links] == []
    anchored = anchor_links(docs_corpus.pages, docs_corpus.site)
    assert anchored, "the docs link to sections of each other"
    missing = [(a.source, a.line, a.target) for a in anchored
               if a.page is None or a.anchor not in {h.anchor for h in a.page.headings}]
    assert missing == []


QUESTIONS = [
    # question, the pages whose sections may be cited
    ("How do I embed the widget on a Docusaurus site?", {"doc:visitors"}),
    ("What does LLM_CITATIONS do?", {"doc:llm", "doc:configuration"}),
]


@pytest.mark.parametrize("question, pages", QUESTIONS, ids=[q for q, _ in QUESTIONS])
def test_the_docs_answer_questions_about_the_project(answerer, question, pages):
    answer = answerer.ask(question, Viewer.anonymous())
    assert answer.state == "answered", answer.problems
    retrieved = {hit.chunk.id: hit.chunk for hit in answer.retrieval.hits}
    citations = [citation for claim in answer.claims for citation in claim.citations]
    assert citations
    for citation in citations:
        assert citation.chunk_id.split("#")[0] in pages, [c.chunk_id for c in citations]
        chunk = retrieved[citation.chunk_id]
        assert citation.quote and chunk.text[citation.start:citation.end] == citation.quote
