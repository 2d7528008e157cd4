"""Progressive answers over the real uvicorn server: titles, then verified quotes, then the final turn."""

from __future__ import annotations

import re
from html import unescape

import httpx
import pytest

from answer.generate import ExtractiveGenerator
from answer.pipeline import Answerer
from retrieval.services import open_retriever
from tests.conftest import CONTENT
from web.app import create_app
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def base_url(content_index, real_embedder, tmp_path_factory):
    settings = Settings(content_dir=CONTENT, data_dir=tmp_path_factory.mktemp("data"))
    answerer = Answerer(open_retriever(settings, store=content_index, embedder=real_embedder),
                        ExtractiveGenerator(real_embedder))
    with serve(create_app(settings, answerer=answerer, store=content_index)) as url:
        yield url


def test_the_stream_sends_titles_then_quotes_then_the_final_turn(base_url):
    browser = httpx.Client(base_url=base_url, timeout=60)  # keeps the owner cookie the chat page is given, as a browser does
    shell = browser.post("/ask", data={"question": "Which TLS versions does the API accept?"}, headers={"HX-Request": "true"}).text
    url = unescape(re.search(r'sse-connect="([^"]+)"', shell).group(1))
    names, quotes = [], []
    with browser.stream("GET", url) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("event: "):
                names.append(line[7:])
            elif line.startswith("data: ") and names[-1] == "claim":
                quotes += [unescape(re.sub(r"<[^>]+>", "", q)) for q in re.findall(r"<blockquote>(.*?)</blockquote>", line)]
    assert names[:2] == ["thread", "retrieved"] and names[-1] == "done"  # the thread id first, then titles
    assert set(names[2:-1]) == {"claim"}
    assert any("TLS 1.2" in q for q in quotes), quotes


def test_chip_links_land_on_headings_the_docs_viewer_renders(base_url):
    html = httpx.post(f"{base_url}/ask", data={"question": "What is the default request timeout of the SDKs?"},
                      timeout=60).text
    links = {unescape(h) for h in re.findall(r'<a class="chip" href="([^"]+)"', html)}
    assert links
    for link in links:
        page, _, fragment = link.partition("#")
        anchor = fragment.split(":~:")[0]
        doc = httpx.get(f"{base_url}{page}")
        assert doc.status_code == 200 and f'id="{anchor}"' in doc.text, link
