"""The chat page's states, streaming order and link safety, rendered by the real app with behaving fakes."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html import unescape

import pytest
from starlette.testclient import TestClient

from answer.audit import SQLiteAuditLog
from answer.pipeline import Answerer
from ingest.settings import Settings
from retrieval.search import DenseRetriever
from tests.fakes import REFUNDS, HashEmbedder, MemoryStore, ScriptedGenerator, make_chunk
from web.app import create_app

TAXES = make_chunk("billing/taxes", "vat", "VAT is charged on every invoice issued to customers in the EU.",
                   title="Taxes", heading="VAT")
QUOTE = "Refunds are available within 14 days of the charge."


def draft(*claims: tuple[str, list[tuple[str, str]]], refused: bool = False) -> str:
    return json.dumps({"refused": refused, "claims": [
        {"quotes": [{"handle": h, "quote": q} for h, q in quotes], "claim": text} for text, quotes in claims]})


GOOD = draft(("Refunds are available for 14 days after the charge.", [("c1", QUOTE)]))
PHANTOM = draft(("Refunds are instant for everyone.", [("c9", "Refunds are instant for everyone")]))
MIXED = draft(("Refunds are available for 14 days after the charge.", [("c1", QUOTE)]),
              ("Refunds are paid in gold bars.", [("c1", "Refunds are paid in gold bars")]))
PARTIAL = draft(("Refunds are available within 14 days of the charge for annual enterprise invoices.", [("c1", QUOTE)]))


def client(*replies: str, chunks=(REFUNDS, TAXES), tmp_path=None, **settings) -> TestClient:  # noqa: ANN001
    embedder = HashEmbedder()
    store = MemoryStore(embedder, chunks)
    audit = SQLiteAuditLog(tmp_path / "answers.sqlite3") if tmp_path else None
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), ScriptedGenerator(*replies), audit=audit)
    return TestClient(create_app(Settings(**settings), answerer=answerer, store=store))


def turn_html(html: str) -> str:
    start = html.index('<article class="turn')
    return html[start : html.index("</article>", start)]


def hrefs(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'href="([^"]*)"', html)]


def test_verified_answer_shows_quotes_with_chips_cards_and_one_source_each():
    html = turn_html(client(GOOD).post("/ask", data={"question": "refund window?"}).text)
    assert 'data-state="verified"' in html and "Verified against the docs" in html
    assert f"<blockquote>{QUOTE}</blockquote>" in html
    assert '<p class="caption">Refunds are available for 14 days after the charge.</p>' in html
    chip = re.search(r'<a class="chip" href="([^"]+)"[^>]*aria-describedby="([^"]+)" aria-label="([^"]+)">([^<]*)</a>', html)
    assert chip and unescape(chip.group(1)).startswith("/docs/billing/refunds#refund-windows:~:text=")
    assert chip.group(4) == "1" and unescape(chip.group(3)) == "Source 1: Refunds › Refund windows"  # not the handle
    assert 'data-handle="c1"' in chip.group(0)
    card = html[html.index(f'id="{chip.group(2)}"'):]
    assert f"<mark>{QUOTE}</mark> Annual plans" in card and "Docs version 2.4" in card and "Open source" in card
    sources = html[html.index('<aside class="sources"'):]
    assert sources.count('class="source-title"') == 1 and "score" not in sources.lower()
    assert '<span class="num">1</span>' in sources  # the side panel uses the chip's number


def test_partial_claims_are_labelled():
    html = turn_html(client(PARTIAL).post("/ask", data={"question": "refund window?"}).text)
    assert "status-partial" in html and "Partly supported" in html


def test_degraded_answer_says_statements_were_removed_and_never_shows_them():
    html = turn_html(client(MIXED, MIXED).post("/ask", data={"question": "refund window?"}).text)
    assert 'data-state="degraded"' in html
    assert "some statements could not be verified and were removed" in html.lower()
    assert "gold bars" not in html


def test_refusal_when_nothing_is_retrieved_links_to_site_search():
    html = turn_html(client(GOOD, chunks=()).post("/ask", data={"question": "capital of France?"}).text)
    assert 'data-state="refused"' in html and "No docs section matched this question." in html
    assert "No answer in the docs" in html and "Verified" not in html
    assert "/docs/search?q=capital%20of%20France%3F" in hrefs(html)
    assert "<blockquote>" not in html


def test_nothing_verified_keeps_the_text_behind_a_closed_unverified_toggle():
    html = turn_html(client(PHANTOM, PHANTOM).post("/ask", data={"question": "refund window?"}).text)
    assert 'data-state="unverified"' in html
    toggle = re.search(r"<details class=\"unverified-text\"([^>]*)>(.*?)</details>", html, re.S)
    assert toggle and "open" not in toggle.group(1)
    assert "Refunds are instant for everyone." in toggle.group(2)
    assert "Refunds are instant" not in html.replace(toggle.group(0), "")
    looked = html.split('class="looked-at"', 1)[1]
    assert "Refunds" in looked and 'data-handle="c1"' in looked  # the sections looked at are listed


def test_refuse_policy_shows_unverified_answers_as_refusals():
    html = turn_html(client(PHANTOM, PHANTOM, unverified_policy="refuse").post("/ask", data={"question": "refund?"}).text)
    assert 'data-state="refused"' in html and "Refunds are instant" not in html


def events(body: str) -> list[tuple[str, str]]:
    out = []
    for block in body.strip().split("\n\n"):
        lines = block.split("\n")
        name = next(line[7:] for line in lines if line.startswith("event: "))
        out.append((name, "\n".join(line[6:] for line in lines if line.startswith("data: "))))
    return out


def test_htmx_post_returns_a_shell_and_the_stream_sends_titles_then_quotes_then_the_final_turn():
    app = client(MIXED, MIXED)
    shell = app.post("/ask", data={"question": "refund window?"}, headers={"HX-Request": "true"}).text
    assert 'sse-connect="/ask/stream?' in shell and "<blockquote>" not in shell
    url = unescape(re.search(r'sse-connect="([^"]+)"', shell).group(1))
    streamed = events(app.get(url).text)
    assert [name for name, _ in streamed] == ["retrieved", "claim", "done"]
    assert "Refunds" in streamed[0][1] and "<blockquote>" not in streamed[0][1]
    assert QUOTE in streamed[1][1] and "chip" in streamed[1][1]
    assert 'data-state="degraded"' in streamed[2][1]
    assert all("gold bars" not in data for _, data in streamed)  # never streamed, so never deleted later
    turn = re.search(r'id="turn-([^"]+)"', shell).group(1)
    assert f'id="card-{turn}-1-1"' in streamed[1][1] and f'id="card-{turn}-1-1"' in streamed[2][1]


def test_a_reconnecting_stream_does_not_ask_again():
    generator_replies = ScriptedGenerator(GOOD)
    embedder = HashEmbedder()
    store = MemoryStore(embedder, [REFUNDS])
    app = TestClient(create_app(Settings(), answerer=Answerer(DenseRetriever(store, embedder, floor=-1.0),
                                                                generator_replies), store=store))
    streamed = events(app.get("/ask/stream?question=refund&turn=t1", headers={"Last-Event-ID": "2"}).text)
    assert [name for name, _ in streamed] == ["done"] and "ask again" in streamed[0][1]
    assert generator_replies.feedback == []


def test_each_turn_has_its_own_card_ids_and_a_no_js_follow_up_keeps_the_thread():
    app = client(GOOD, GOOD)
    first = app.post("/ask", data={"question": "refund window?"}).text
    answer_id = re.search(r'data-answer-id="([^"]+)"', first).group(1)
    page = app.post("/ask", data={"question": "refunds for annual plans?", "thread": answer_id}).text
    assert page.count('<article class="turn') == 2
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids))


def test_a_thread_never_shows_another_viewers_turn():
    app = client(GOOD, GOOD, identity_header="X-Groups")
    staff_page = app.post("/ask", data={"question": "refund window?"}, headers={"X-Groups": "staff"}).text
    staff_answer = re.search(r'data-answer-id="([^"]+)"', staff_page).group(1)
    page = app.post("/ask", data={"question": "vat?", "thread": staff_answer}).text
    assert page.count('<article class="turn') == 1


def test_hostile_content_renders_inert_in_quotes_and_cards():
    evil = replace(REFUNDS, text=f"{QUOTE} <script>alert(1)</script> <img src=x onerror=alert(2)> &amp; more.")
    html = turn_html(client(GOOD, chunks=(evil,)).post("/ask", data={"question": "refunds"}).text)
    assert 'data-state="verified"' in html
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the card excerpt shows the content as text
    assert "&amp;amp; more" in html


def test_model_text_renders_inert_and_a_model_written_url_never_becomes_a_link():
    hostile = "Refunds: see javascript:alert(3) and https://evil.example/steal <b onmouseover=alert(4)>x</b>"
    for reply in (draft((hostile, [("c1", QUOTE)])), draft((hostile + " " + QUOTE, [("c1", QUOTE)]))):
        html = turn_html(client(reply, reply).post("/ask", data={"question": "refunds"}).text)
        assert "<b " not in html and "&lt;b onmouseover=alert(4)&gt;" in html
        for href in hrefs(html):
            assert href.startswith("/docs/"), href


def test_chips_link_to_an_external_site_when_the_site_config_says_so():
    from ingest.corpus import load_corpus
    from ingest.site import SiteConfig
    from tests.conftest import CONTENT

    site = SiteConfig(name="Ferrydeck", base_url="https://docs.ferrydeck.example")
    corpus = load_corpus(CONTENT, site=site)
    chunk = next(c for c in corpus.chunks() if "30 seconds" in c.text and c.anchor)
    sentence = next(s for s in re.split(r"(?<=\.)\s+", chunk.text) if "30 seconds" in s)
    embedder = HashEmbedder()
    store = MemoryStore(embedder, [chunk])
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0),
                        ScriptedGenerator(draft(("Timeouts are 30 seconds.", [("c1", sentence)]))))
    app = TestClient(create_app(Settings(), answerer=answerer, store=store, corpus=corpus))
    html = turn_html(app.post("/ask", data={"question": "timeout?"}).text)
    links = [h for h in hrefs(html) if ":~:text=" in h]
    assert links and all(h.startswith(f"https://docs.ferrydeck.example/{chunk.url.split('/', 3)[3]}") for h in links)


def test_a_chunk_url_off_the_site_is_never_linked():
    offsite = replace(REFUNDS, url="https://evil.example/refunds#refund-windows")
    html = turn_html(client(GOOD, chunks=(offsite,)).post("/ask", data={"question": "refund window?"}).text)
    assert f"<blockquote>{QUOTE}</blockquote>" in html
    assert not any("evil.example" in h for h in hrefs(html))


@pytest.mark.parametrize("question", ["", "   ", "x" * 5000, "bad\x00byte"])
def test_bad_questions_get_a_clear_400(question):
    app = client(GOOD)
    page = app.post("/ask", data={"question": question})
    fragment = app.post("/ask", data={"question": question}, headers={"HX-Request": "true"})
    assert page.status_code == fragment.status_code == 400
    assert 'role="alert"' in fragment.text and "<!doctype" not in fragment.text
    assert "Traceback" not in page.text


def test_first_visit_shows_question_suggestions_from_the_docs():
    html = client(GOOD).get("/").text
    suggestions = [unescape(s) for s in re.findall(r'class="suggestion">([^<]+)<', html)]
    assert suggestions and all(s.endswith("?") for s in suggestions)


def test_the_browsed_docs_version_reaches_retrieval_and_unknown_versions_are_ignored():
    embedder = HashEmbedder()
    seen: list = []

    class Recording(DenseRetriever):
        def search(self, question, viewer, *, k=None, version=None):  # noqa: ANN001
            seen.append(version)
            return super().search(question, viewer, k=k)

    answerer = Answerer(Recording(MemoryStore(embedder, (REFUNDS,)), embedder, floor=-1.0), ScriptedGenerator(GOOD, GOOD, GOOD, GOOD))
    app = TestClient(create_app(Settings(), answerer=answerer))
    app.post("/api/ask", json={"question": "refund window?", "version": "1.9"})
    app.post("/api/ask", json={"question": "refund window?", "version": "9.9"})
    app.post("/ask", data={"question": "refund window?", "version": "1.9"})
    shell = app.post("/ask", data={"question": "refund window?", "version": "1.9"}, headers={"HX-Request": "true"}).text
    stream_url = unescape(re.search(r'sse-connect="([^"]+)"', shell).group(1))
    app.get(stream_url).read()
    assert seen == ["1.9", None, "1.9", "1.9"]
    assert 'name="version" value="1.9"' in app.get("/?version=1.9").text


def test_every_response_carries_the_security_headers():
    app = client(GOOD)
    for response in (app.get("/"), app.post("/api/ask", json={"question": "refund window?"}), app.get("/static/app.css"),
                     app.get("/docs/no-such-page")):
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "same-origin"


def test_a_citation_that_does_not_resolve_in_this_turns_retrieval_set_is_never_rendered():
    from answer.verify import Citation, Claim
    from ingest.site import SiteConfig
    from retrieval.search import renumber
    from retrieval.viewer import Viewer
    from web import render

    rset = renumber("q", Viewer.anonymous(), [(REFUNDS, 1.0)])
    good = Citation("c1", REFUNDS.id, QUOTE, 0, len(QUOTE), "/docs/billing/refunds#refund-windows", REFUNDS.url,
                    "Refunds", ("Refund windows",), "2.4", REFUNDS.hash)
    phantom = replace(good, handle="c2")                       # not in this set
    wrong_chunk = replace(good, chunk_id="doc:billing/taxes#vat")  # handle resolves to another chunk
    wrong_span = replace(good, quote="Refunds are paid in gold bars.")
    site = SiteConfig()
    assert render.claim_view(Claim("x", "supported", (good,)), rset, site, "t", 1, render.ChipNumbers()) is not None
    for bad in (phantom, wrong_chunk, wrong_span):
        assert render.cite_view(rset, bad, site, "card") is None
        assert render.claim_view(Claim("x", "supported", (bad,)), rset, site, "t", 1, render.ChipNumbers()) is None
    mixed = render.claim_view(Claim("x", "supported", (good, phantom)), rset, site, "t", 1, render.ChipNumbers())
    assert [c.handle for c in mixed.cites] == ["c1"]


def test_the_side_panel_passes_the_same_gate_as_the_chips():
    from answer.verify import Citation, Claim
    from ingest.site import SiteConfig
    from retrieval.search import renumber
    from retrieval.viewer import Viewer
    from web import render

    secret = make_chunk("internal/overrides", "limits", "Support agents may approve overrides up to 500 dollars.",
                        access=("staff",))
    rset = renumber("q", Viewer.anonymous(), [(REFUNDS, 1.0), (secret, 0.5)])
    good = Citation("c1", REFUNDS.id, QUOTE, 0, len(QUOTE), "", REFUNDS.url, "Refunds", ("Refund windows",), "2.4", REFUNDS.hash)
    phantom = replace(good, handle="c3", title="Invented page")
    restricted = Citation("c2", secret.id, secret.text, 0, len(secret.text), "", secret.url, "Overrides", (), "2.4", secret.hash)
    panel = render.sources([Claim("x", "supported", (good, phantom, restricted))], rset, SiteConfig())
    assert [(s.handle, s.title) for s in panel] == [("c1", "Refunds")]
    assert render.cite_view(rset, restricted, SiteConfig(), "card") is None  # the viewer may not read it
