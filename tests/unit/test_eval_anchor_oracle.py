"""`make eval`'s anchor check asks github-slugger itself, so it fails on an anchor the real site would not have."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ingest.corpus import load_corpus
from tests.eval.__main__ import anchor_validity
from tests.slugger_oracle import oracle_dir, requires_oracle

REPO = Path(__file__).resolve().parents[2]
PAGE = """---
title: Flags
---

# Flags

## Intro

## Intro

## Set `--force`

## Custom heading {#mine}

<h3>Raw heading</h3>

## Intro
"""


@requires_oracle
def test_every_heading_id_of_content_is_one_github_slugger_gives() -> None:
    corpus = load_corpus(REPO / "content")
    urls = {f"{page.url}#{h.anchor}" for page in corpus.pages for h in page.headings if h.anchor}
    checked = anchor_validity(corpus, urls, oracle_dir())
    assert len(checked) > 100
    assert [url for url, ok in checked.items() if not ok] == []


@requires_oracle
def test_a_wrong_anchor_fails_even_when_our_own_renderer_agrees_with_it(tmp_path: Path) -> None:
    (tmp_path / "flags.mdx").write_text(PAGE, encoding="utf-8")
    corpus = load_corpus(tmp_path)
    page = corpus.page("flags")
    assert page is not None
    good = ["intro", "intro-1", "intro-2", "set---force", "mine", "flags", ""]
    bad = ["intro-3", "custom-heading", "raw-heading", "set-force", "nowhere"]
    checked = anchor_validity(corpus, {f"{page.url}#{a}" if a else page.url for a in good + bad}, oracle_dir())
    assert {a for a in good + bad if checked[f"{page.url}#{a}" if a else page.url]} == set(good)


@requires_oracle
def test_the_oracle_rejects_an_id_our_slugger_got_wrong_where_the_renderer_check_passes(tmp_path: Path) -> None:
    (tmp_path / "flags.mdx").write_text(PAGE, encoding="utf-8")
    corpus = load_corpus(tmp_path)
    page = corpus.page("flags")
    assert page is not None
    # A slugger bug: "Set `--force`" gets "set-force" (dashes collapsed); the page renders it and a chunk cites it.
    headings = tuple(dataclasses.replace(h, anchor="set-force") if h.anchor == "set---force" else h for h in page.headings)
    wrong = dataclasses.replace(corpus, pages=(dataclasses.replace(page, headings=headings),))
    url = f"{page.url}#set-force"
    assert anchor_validity(wrong, {url}) == {url: True}  # the old check: the id is on our own page
    assert anchor_validity(wrong, {url}, oracle_dir()) == {url: False}  # the real site has no such id


def test_a_cited_page_that_does_not_exist_is_invalid(tmp_path: Path) -> None:
    (tmp_path / "flags.mdx").write_text(PAGE, encoding="utf-8")
    corpus = load_corpus(tmp_path)
    url = "/docs/missing#intro"
    assert anchor_validity(corpus, {url}) == {url: False}


@requires_oracle
def test_a_cited_page_that_does_not_exist_is_invalid_for_the_oracle_too(tmp_path: Path) -> None:
    (tmp_path / "flags.mdx").write_text(PAGE, encoding="utf-8")
    url = "/docs/missing#intro"
    assert anchor_validity(load_corpus(tmp_path), {url}, oracle_dir()) == {url: False}
