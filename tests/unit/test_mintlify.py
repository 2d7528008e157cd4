"""Mintlify sites as they are: its own heading ids, snippets placed where pages use them, components as their text.

The slugger cases are the examples Mintlify documents for its anchor ids
(written here as data, one row each); the fixture site (tests/fixtures/mintlify)
has a `docs.json`, a snippet, steps, a code group and API fields.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ingest.corpus import load_corpus
from ingest.site import load_site_config
from ingest.slugger import make_slugger
from ingest.splitter import split_page
from tests.conftest import REPO
from tests.eval.mintlify_anchors import check, corpus_headings

SITE = REPO / "tests" / "fixtures" / "mintlify"

DOCUMENTED = [  # heading text as written, the id Mintlify's docs say it gets
    ("Getting started", "getting-started"),
    ("Config.json options", "config-json-options"),
    ("What's new", "what’s-new"),
    ("Rate limits (per minute)", "rate-limits-per-minute"),
    ("Read/write access", "read/write-access"),
    ("Fees & billing", "fees-&-billing"),
    ("OAuth", "oauth"),
]


@pytest.mark.parametrize(("text", "expected"), DOCUMENTED)
def test_each_documented_example_gets_mintlify_s_id(text, expected):
    assert make_slugger("mintlify").slug(text) == expected


def test_a_repeated_heading_is_numbered_from_two_across_the_page():
    slugger = make_slugger("mintlify")
    assert [slugger.slug(t) for t in ("Overview", "Setup", "Overview", "Overview")] == [
        "overview", "setup", "overview-2", "overview-3"]


def test_the_slug_command_prints_a_preset_s_ids():
    done = subprocess.run([sys.executable, "-m", "ingest", "slug", "--preset", "mintlify", str(SITE)],
                          input="AGENTS.md\nOverview\nOverview\n", capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.split("\n")[:3] == ["agents-md", "overview", "overview-2"]


def test_a_docs_json_of_mintlify_s_schema_implies_the_preset():
    site = load_site_config(SITE)
    assert site.preset == "mintlify" and site.slugger_name == "mintlify"


def _chunks() -> dict[str, str]:
    corpus = load_corpus(SITE)
    assert not corpus.failures
    return {chunk.id: chunk.text for page in corpus.pages for chunk in split_page(page)}


def test_a_snippet_is_read_where_a_page_uses_it_and_is_never_a_page():
    corpus = load_corpus(SITE)
    assert {p.source for p in corpus.pages} == {"index.mdx", "guides/setup.mdx", "api/uploads.mdx"}
    assert "Node.js 20 or later" in _chunks()["doc:guides/setup#before-you-start"]


def test_components_are_read_as_the_text_a_visitor_sees():
    chunks = _chunks()
    fields = chunks["doc:api/uploads#request-body"]
    assert "`resolution` (string, default: `1600x1600`): The largest size" in fields  # a field's default answers
    assert "`upload_id` (string, required):" in fields and "Uploads over 50 MB are rejected" in fields
    steps = chunks["doc:guides/setup#install-the-cli"]
    assert "Sign in: Run `lumen login`" in steps  # a step's title and its text
    assert "npm install -g lumen-cli" in steps and "pnpm add -g lumen-cli" in steps  # every block of a code group
    assert "doc:index#overview-2" in chunks and "doc:guides/setup#what’s-new-in-config-json-v2" in chunks


def test_the_independent_rule_check_agrees_on_the_fixture_and_catches_a_wrong_id():
    found = corpus_headings(SITE)
    assert check(found)["share"] == 1.0
    wrong = [(page, text, "whats-new-in-configjson-v2" if "config" in text else anchor, explicit)
             for page, text, anchor, explicit in found]
    assert check(wrong)["share"] < 1.0


@pytest.mark.parametrize(("question", "fact"), [
    ("What resolution are uploaded photos scaled down to by default?", "1600x1600"),  # a <ParamField> default
    ("How do I sign in to the Lumen CLI after installing the package?", "lumen login"),  # inside <Steps>
])
def test_an_answer_sits_in_a_component(question: str, fact: str):
    from answer.generate import ExtractiveGenerator
    from answer.pipeline import Answerer
    from retrieval.search import DenseRetriever
    from retrieval.viewer import Viewer
    from tests.fakes import HashEmbedder
    from tests.memory_index import MemoryIndex

    corpus = load_corpus(SITE)
    chunks = [c for page in corpus.pages for c in split_page(page)]
    embedder = HashEmbedder()
    answerer = Answerer(DenseRetriever(MemoryIndex(embedder, chunks), embedder, floor=-1.0, k=3),
                        ExtractiveGenerator())
    answer = answerer.ask(question, Viewer.anonymous())
    quotes = [c.quote for claim in answer.claims for c in claim.citations]
    assert any(fact in q for q in quotes), (answer.outcome, quotes)
