"""Browser fixtures: Debian's Chromium driven by Playwright against the real uvicorn server.

The app runs with the real embedding model, a real Chroma index of content/
and the offline extractive generator; a second server swaps in a scripted
generator to force states the extractive one never produces.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CONTENT, REPO, require
from tests.integration.conftest import serve

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = REPO / "test-artifacts" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


@pytest.fixture(scope="session")
def browser() -> Iterator:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require(False, "playwright is not installed")
    require(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


@pytest.fixture()
def phone(browser):
    """A page in a phone's viewport (375×812, touch), as `page` is a desktop's."""
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


@pytest.fixture(scope="session")
def shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def _app(content_index, real_embedder, data: Path, generator, **settings):  # noqa: ANN001, ANN202
    from answer.log.sqlite import SQLiteAnswerLog
    from answer.pipeline import Answerer
    from retrieval.services import open_retriever
    from web.app import create_app
    from web.settings import Settings

    config = Settings(content_dir=CONTENT, data_dir=data, **settings)
    retriever = open_retriever(config, store=content_index, embedder=real_embedder)
    answerer = Answerer(retriever, generator, audit=SQLiteAnswerLog(data / "answers.sqlite3"))
    return create_app(config, answerer=answerer, store=content_index)


@pytest.fixture(scope="session")
def live_url(content_index, real_embedder, tmp_path_factory) -> Iterator[str]:
    """The real app: real model, real Chroma index of content/, offline extractive generator."""
    from answer.generate import ExtractiveGenerator

    app = _app(content_index, real_embedder, tmp_path_factory.mktemp("web-data"), ExtractiveGenerator(real_embedder))
    with serve(app) as url:
        yield url


class Unverifiable:
    """A generator whose every quote is paraphrased, so nothing it drafts can verify."""

    name = "scripted-unverifiable"

    def draft(self, question, rset, *, feedback=()):  # noqa: ANN001, ANN201
        from answer.contract.draft import parse_draft

        claims = [{"quotes": [{"handle": h.handle, "quote": "the docs promise delivery in under one second, always"}],
                   "claim": "Deliveries always take less than a second."} for h in rset.hits[:1]]
        return parse_draft(json.dumps({"refused": False, "claims": claims}))


@pytest.fixture(scope="session")
def unverified_url(content_index, real_embedder, tmp_path_factory) -> Iterator[str]:
    app = _app(content_index, real_embedder, tmp_path_factory.mktemp("web-unverified"), Unverifiable())
    with serve(app) as url:
        yield url


class Refuser:
    """A generator that always refuses, so a question with retrieved sections shows the refusal that lists them."""

    name = "scripted-refuser"

    def draft(self, question, rset, *, feedback=()):  # noqa: ANN001, ANN201
        from answer.contract.draft import parse_draft

        return parse_draft(json.dumps({"refused": True, "claims": []}))


@pytest.fixture(scope="session")
def refusing_url(content_index, real_embedder, tmp_path_factory) -> Iterator[str]:
    app = _app(content_index, real_embedder, tmp_path_factory.mktemp("web-refusing"), Refuser())
    with serve(app) as url:
        yield url


@pytest.fixture(scope="session")
def staffed_url(content_index, real_embedder, tmp_path_factory) -> Iterator[str]:
    """The real app behind an identity header, so a browser context can be support staff (X-Groups: staff)."""
    from answer.generate import ExtractiveGenerator

    app = _app(content_index, real_embedder, tmp_path_factory.mktemp("web-staffed"), ExtractiveGenerator(real_embedder),
               identity_header="X-Groups")
    with serve(app) as url:
        yield url
