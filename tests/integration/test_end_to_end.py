"""Question → real model → real Chroma → verified quotes → rendered chips whose anchors exist.

This is the walking skeleton's promise, checked through the real HTTP server.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import httpx
import pytest

from answer.generate import ExtractiveGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever
from tests.conftest import CONTENT
from web.app import create_app
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def base_url(content_index, real_embedder, tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    settings = Settings(content_dir=CONTENT, data_dir=data)
    answerer = Answerer(DenseRetriever(content_index, real_embedder), ExtractiveGenerator(real_embedder),
                        audit=SQLiteAnswerLog(Path(data) / "answers.sqlite3"))
    with serve(create_app(settings, answerer=answerer, store=content_index)) as url:
        yield url


def test_readyz_reports_the_index_and_healthz_only_liveness(base_url):
    assert httpx.get(f"{base_url}/healthz").json() == {"status": "alive"}
    response = httpx.get(f"{base_url}/readyz")
    assert response.status_code == 200
    assert response.json()["chunks"] > 100


def test_question_gets_verified_quotes_with_chips_that_land_on_real_headings(base_url):
    response = httpx.post(f"{base_url}/ask", data={"question": "What is the default request timeout of the SDKs?"},
                          timeout=60)
    assert response.status_code == 200
    html = response.text
    assert re.search(r'<article class="turn state-(verified|degraded)', html)
    quotes = [unescape(re.sub(r"<[^>]+>", "", q)) for q in re.findall(r"<blockquote>(.*?)</blockquote>", html, re.S)]
    assert any("30 seconds" in q for q in quotes), quotes
    links = set(re.findall(r'<a class="chip" href="([^"]+)"', html))
    assert links
    for link in links:
        page, _, fragment = unescape(link).partition("#")
        anchor = fragment.split(":~:")[0]
        doc = httpx.get(f"{base_url}{page}")
        assert doc.status_code == 200, page
        assert f'id="{anchor}"' in doc.text, f"{anchor} is not a heading id on {page}"


def test_api_returns_quotes_that_are_substrings_of_the_retrieved_chunks(base_url):
    data = httpx.post(f"{base_url}/api/ask", json={"question": "Which TLS versions does the API accept?"}, timeout=60).json()
    assert data["state"] == "answered"
    retrieved = {r["handle"]: r for r in data["retrieved"]}
    for claim in data["claims"]:
        for citation in claim["citations"]:
            assert citation["handle"] in retrieved
            assert retrieved[citation["handle"]]["id"] == citation["chunk_id"]


def test_off_topic_question_is_refused(base_url):
    data = httpx.post(f"{base_url}/api/ask", json={"question": "What is the capital of France?"}, timeout=60).json()
    assert data["state"] == "refused"
    assert data["claims"] == []


@pytest.mark.parametrize("payload", [{"question": ""}, {"question": "   "}, {"question": "x" * 5000}, {"nope": 1}, [1, 2]])
def test_bad_questions_get_a_clear_400(base_url, payload):
    response = httpx.post(f"{base_url}/api/ask", json=payload)
    assert response.status_code == 400
    assert "error" in response.json() and "Traceback" not in response.text
