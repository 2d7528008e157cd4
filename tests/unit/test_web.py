"""The chat page's states, streaming order and link safety, rendered by the real app with behaving fakes."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html import unescape

import pytest
from starlette.testclient import TestClient

from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever
from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.settings import Settings

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
    store = MemoryIndex(embedder, chunks)
    audit = SQLiteAnswerLog(tmp_path / "answers.sqlite3") if tmp_path else None
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


def test_a_site_without_versions_names_no_version_on_the_card(tmp_path):
    """A page with no declared version carries its content hash as `version`: never shown as "Docs version …"."""
    content = tmp_path / "content"
    content.mkdir()
    (content / "site.toml").write_text('[site]\nname = "Unversioned"\nbase_url = "/docs"\n')
    (content / "refunds.mdx").write_text(f"---\ntitle: Refunds\n---\n\n## Refund windows\n\n{QUOTE}\n")
    unversioned = replace(REFUNDS, doc_version="4889a1eee026")
    html = turn_html(client(GOOD, chunks=(unversioned,), content_dir=content).post("/ask", data={"question": "refund window?"}).text)
    card = html[html.index('class="card"'):]
    assert f"<mark>{QUOTE}</mark>" in card and "Open source" in card
    assert "4889a1eee026" not in html and "Docs version" not in html and "From the" not in html

    versioned = turn_html(client(GOOD, chunks=(replace(REFUNDS, doc_version="1.9"),)).post(  # content/ has versions
        "/ask", data={"question": "refund window?"}).text)
    assert "Docs version 1.9" in versioned and "From the 1.9 docs" in versioned


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
    assert [name for name, _ in streamed] == ["thread", "retrieved", "claim", "done"]
    assert streamed.pop(0)[1] == re.search(r'name="thread_id" id="thread-id" value="([0-9a-f]{40})"', shell).group(1)
    assert "Refunds" in streamed[0][1] and "<blockquote>" not in streamed[0][1]
    assert QUOTE in streamed[1][1] and "chip" in streamed[1][1]
    assert 'data-state="degraded"' in streamed[2][1]
    assert all("gold bars" not in data for _, data in streamed)  # never streamed, so never deleted later
    turn = re.search(r'id="turn-([^"]+)"', shell).group(1)
    assert f'id="card-{turn}-1-1"' in streamed[1][1] and f'id="card-{turn}-1-1"' in streamed[2][1]


def test_a_reconnecting_stream_does_not_ask_again():
    generator_replies = ScriptedGenerator(GOOD)
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS])
    app = TestClient(create_app(Settings(), answerer=Answerer(DenseRetriever(store, embedder, floor=-1.0),
                                                                generator_replies), store=store))
    streamed = events(app.get("/ask/stream?question=refund&turn=t1", headers={"Last-Event-ID": "2"}).text)
    assert [name for name, _ in streamed] == ["done"] and "connection dropped" in streamed[0][1]
    assert 'class="retry" data-question="refund"' in streamed[0][1]  # a Retry, never a silent re-ask
    assert generator_replies.feedback == []


def thread_of(html: str) -> str:
    return re.search(r'name="thread_id" id="thread-id" value="([0-9a-f]{40})"', html).group(1)


@pytest.mark.parametrize("logged", [True, False], ids=["answer-log", "memory"])
def test_each_turn_has_its_own_card_ids_and_a_no_js_follow_up_keeps_the_thread(tmp_path, logged):
    app = client(GOOD, GOOD, tmp_path=tmp_path if logged else None)
    first = app.post("/ask", data={"question": "refund window?"}).text
    thread = thread_of(first)
    page = app.post("/ask", data={"question": "refunds for annual plans?", "thread_id": thread}).text
    assert page.count('<article class="turn') == 2 and thread_of(page) == thread
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    reloaded = app.get(f"/?thread={thread}").text
    assert re.findall(r'<h2 class="question">([^<]+)</h2>', reloaded) == ["refund window?", "refunds for annual plans?"]
    assert reloaded.count("<blockquote>") == 2 and thread_of(reloaded) == thread


def test_a_thread_survives_a_restart_when_the_answer_log_holds_it(tmp_path):
    first = client(GOOD, tmp_path=tmp_path).post("/ask", data={"question": "refund window?"}).text
    reloaded = client(tmp_path=tmp_path).get(f"/?thread={thread_of(first)}").text  # a new app: nothing cached
    assert 'data-state="verified"' in reloaded and f"<blockquote>{QUOTE}</blockquote>" in reloaded


def test_an_elliptical_follow_up_is_searched_with_the_earlier_subject_and_says_so(tmp_path):
    app = client(GOOD, GOOD, GOOD, GOOD, tmp_path=tmp_path)
    first = app.post("/api/ask", json={"question": "What is the refund window?"}).json()
    thread = first["thread_id"]
    body = app.post("/api/ask", json={"question": "Does it apply to annual plans?", "thread_id": thread,
                                      "owner_token": first["owner_token"]}).json()
    assert body["thread_id"] == thread and body["asked"] == "Does it apply to annual plans?" and body["rewritten"]
    assert body["question"] == "Does the refund window apply to annual plans?"
    page = app.get(f"/?thread={thread}").text
    assert "Searched for: <q>Does the refund window apply to annual plans?</q>" in page
    assert app.post("/api/ask", json={"question": "x?", "thread_id": "../etc"}).status_code == 400


def test_staff_read_what_the_visitor_typed_beside_the_question_it_was_searched_as(tmp_path):
    app = client(GOOD, GOOD, tmp_path=tmp_path, identity_header="X-Groups")
    first = app.post("/api/ask", json={"question": "What is the refund window?"}).json()
    body = app.post("/api/ask", json={"question": "Does it apply to annual plans?", "thread_id": first["thread_id"],
                                      "owner_token": first["owner_token"]}).json()
    staff = {"X-Groups": "staff"}
    follow_up = app.get(f"/answers/{body['answer_id']}", headers=staff).text
    assert "<h1>Does the refund window apply to annual plans?</h1>" in follow_up
    assert "Typed in its thread as <q>Does it apply to annual plans?</q>" in follow_up
    assert "Typed in its thread as" not in app.get(f"/answers/{first['answer_id']}", headers=staff).text


def test_a_follow_up_naming_its_own_subject_is_searched_the_way_the_docs_answer_it(tmp_path):
    """Typed alone, "Are annual plans handled differently?" is only related; beside the thread's subject it is
    answered, so that reading is searched and shown. A change of subject is answered as typed."""
    from answer.followup import beside_subject
    from answer.generate import ExtractiveGenerator

    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS, TAXES])
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), ExtractiveGenerator(),
                        audit=SQLiteAnswerLog(tmp_path / "answers.sqlite3"))
    app = TestClient(create_app(Settings(), answerer=answerer, store=store))
    first = app.post("/api/ask", json={"question": "How long are refunds available?"}).json()
    follow = "Are annual plans handled differently?"
    assert app.post("/api/ask", json={"question": follow}).json()["outcome"] == "related"  # alone
    body = app.post("/api/ask", json={"question": follow, "thread_id": first["thread_id"],
                                      "owner_token": first["owner_token"]}).json()
    assert body["question"] == beside_subject(follow, "How long are refunds available?") and body["rewritten"]
    assert body["outcome"] == "answer" and "Annual plans are refunded pro rata." in json.dumps(body)
    other = "Is VAT charged on invoices issued in the EU?"
    switched = app.post("/api/ask", json={"question": other, "thread_id": first["thread_id"],
                                          "owner_token": first["owner_token"]}).json()
    assert switched["question"] == other and not switched["rewritten"] and switched["outcome"] == "answer"


def test_a_rewrite_that_does_not_read_as_a_question_is_searched_but_never_printed(tmp_path):
    """"Can refunds be raised?" then "How do I do that?" splices into "How do I do refunds be raised?"."""
    app = client(GOOD, GOOD, GOOD, tmp_path=tmp_path)
    first = app.post("/api/ask", json={"question": "Can refunds be raised?"}).json()
    body = app.post("/api/ask", json={"question": "How do I do that?", "thread_id": first["thread_id"],
                                      "owner_token": first["owner_token"]}).json()
    assert body["question"] == "How do I do refunds be raised?" and body["rewritten"]  # what was searched
    page = app.get(f"/?thread={first['thread_id']}").text  # the restored thread
    assert "Searched for" not in page and "refunds be raised" not in page.split("How do I do that?", 1)[1]
    stream = app.get("/ask/stream", params={"question": "How do I do that?", "turn": "t9",
                                            "thread": first["thread_id"], "owner": first["owner_token"]}).text
    assert "event: retrieved" in stream and "Searched for" not in stream  # nor while streaming


def test_a_refused_follow_up_offers_the_site_search_for_what_was_typed_when_its_rewrite_reads_badly(tmp_path):
    app = client(GOOD, draft(refused=True), tmp_path=tmp_path)
    first = app.post("/api/ask", json={"question": "Can refunds be raised?"}).json()
    app.post("/api/ask", json={"question": "How do I do that?", "thread_id": first["thread_id"],
                               "owner_token": first["owner_token"]})
    page = app.get(f"/?thread={first['thread_id']}").text
    assert "Search the docs for “How do I do that?”" in page and "do refunds be raised" not in page


@pytest.mark.parametrize("logged", [True, False], ids=["answer-log", "memory"])
def test_a_shared_thread_shows_a_visitor_only_turns_whose_every_source_they_may_read(tmp_path, logged):
    secret = make_chunk("internal/overrides", "refund-overrides", "Staff may override the refund window up to 90 days.",
                        title="Overrides", heading="Refund overrides", access=("staff",))
    app = client(GOOD, GOOD, GOOD, GOOD, chunks=(REFUNDS, secret), identity_header="X-Groups",
                 tmp_path=tmp_path if logged else None)
    staff = {"X-Groups": "staff"}
    staff_page = app.post("/ask", data={"question": "staff refund override window?"}, headers=staff).text
    assert "Overrides" in staff_page  # the staff turn retrieved the staff-only section
    thread = thread_of(staff_page)
    shared = app.get(f"/?thread={thread}").text  # the link opened by an anonymous visitor
    assert "staff refund override" not in shared and "Overrides" not in shared and "90 days" not in shared
    assert "One turn of this conversation is not shown" in shared
    fragment = app.get(f"/ask/thread?thread={thread}").text  # the widget's restore: the same rule
    assert "staff refund override" not in fragment and "Overrides" not in fragment and 'data-state="withheld"' in fragment
    assert "Overrides" in app.get(f"/ask/thread?thread={thread}", headers=staff).text
    page = app.post("/ask", data={"question": "Does it apply to annual plans?", "thread_id": thread}).text
    assert thread_of(page) != thread  # the visitor's follow-up forks: the staff thread is not theirs to extend
    assert "staff refund override" not in page and "Searched for" not in page  # nothing carried from a hidden turn
    assert [t.asked for t in app.app.state.services.threads.rows(thread)] == ["staff refund override window?"]


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
    store = MemoryIndex(embedder, [chunk])
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

    answerer = Answerer(Recording(MemoryIndex(embedder, (REFUNDS,)), embedder, floor=-1.0), ScriptedGenerator(GOOD, GOOD, GOOD, GOOD))
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
    from answer.contract.verify import Citation, Claim
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
    from answer.contract.verify import Citation, Claim
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


def test_a_chip_and_its_source_name_the_section_the_quote_resolved_to_not_the_recorded_title():
    """A restored answer's record may carry a title, headings or version the page has since changed."""
    from dataclasses import replace

    from answer.contract.verify import Citation, Claim
    from ingest.site import SiteConfig
    from retrieval.search import renumber
    from retrieval.viewer import Viewer
    from web import render

    live = make_chunk("billing/refunds", "refund-windows", QUOTE + " Annual plans are refunded pro rata.",
                      title="Refunds and credits", heading="Refund windows")
    live = replace(live, doc_version="2.5")
    rset = renumber("q", Viewer.anonymous(), [(live, 1.0)])
    recorded = Citation("c1", live.id, QUOTE, 0, len(QUOTE), "", live.url, "Refunds", ("Old heading",), "2.4", live.hash)
    cite = render.cite_view(rset, recorded, SiteConfig(), "card")
    assert cite is not None and cite.title == "Refunds and credits" and cite.doc_version == "2.5"
    assert "Old heading" not in cite.heading_path and "Refund windows" in cite.heading_path
    [source] = render.sources([Claim("x", "supported", (recorded,))], rset, SiteConfig())
    assert source.title == "Refunds and credits" and "Old heading" not in source.heading_path


def test_quotes_from_two_parts_of_one_long_section_share_its_chip_number_and_its_sources_line():
    """A long section is cut into parts with one heading and one link: Sources listed "Key expiry and rotation" twice."""
    from answer.contract.verify import Citation, Claim
    from ingest.site import SiteConfig
    from retrieval.search import renumber
    from retrieval.viewer import Viewer
    from web import render

    first = make_chunk("api/authentication", "key-expiry", "Keys expire after 90 days.", title="Authentication",
                       heading="Key expiry and rotation")
    second = make_chunk("api/authentication", "key-expiry", "Rotate a key from the dashboard.", title="Authentication",
                        heading="Key expiry and rotation", part=2)
    other = make_chunk("api/errors", "codes", "A 401 means the key expired.", title="Errors", heading="Codes")
    rset = renumber("q", Viewer.anonymous(), [(first, 1.0), (other, 0.9), (second, 0.8)])

    def cite(handle: str, chunk) -> Citation:  # noqa: ANN001
        return Citation(handle, chunk.id, chunk.text, 0, len(chunk.text), "", chunk.url, chunk.title,
                        chunk.heading_path, "2.4", chunk.hash)

    claims = [Claim("a", "supported", (cite("c1", first),)), Claim("b", "supported", (cite("c2", other),)),
              Claim("c", "supported", (cite("c3", second),))]
    numbers = render.ChipNumbers()
    chips = [render.claim_view(c, rset, SiteConfig(), "t", n, numbers).cites[0].number for n, c in enumerate(claims, 1)]
    assert chips == [1, 2, 1]
    panel = render.sources(claims, rset, SiteConfig(), numbers)
    assert [(s.title, s.number, len(s.quotes)) for s in panel] == [("Authentication", 1, 2), ("Errors", 2, 1)]
    # a written sentence resting on both parts shows the section's chip once
    from answer.contract.written import Sentence, Written

    views = {n: render.claim_view(c, rset, SiteConfig(), "t", n + 1, render.ChipNumbers()) for n, c in enumerate(claims)}
    written = Written((Sentence("Keys expire after 90 days and are rotated from the dashboard.", (1, 3), "supported"),))
    [line] = render.written_lines(written, claims, views)
    assert [number for number, _ in line.refs] == [1]


def test_a_very_long_refused_question_is_offered_to_the_site_search_shortened(tmp_path):
    """A 929-character question made the refusal's "Search the docs for …" link a paragraph long."""
    app = client(draft(refused=True), tmp_path=tmp_path)
    question = "Can refunds be raised " + "after the customer already disputed the charge with their bank " * 14 + "?"
    page = app.post("/ask", data={"question": question}).text
    link = page.split("Search the docs for “", 1)[1].split("”", 1)[0]
    assert link.endswith("…") and len(link) <= 121 and link.startswith("Can refunds be raised")
    href = page.split('class="search-link" href="', 1)[1].split('"', 1)[0]
    assert len(href) < 300 and "%E2%80%A6" not in href  # the query is cut too, without the ellipsis
    staffed = client(draft(refused=True), tmp_path=tmp_path, identity_header="X-Groups")
    listed = staffed.get("/answers", headers={"X-Groups": "staff"}).text  # the audit list: one line, whole in its title
    row = listed.split('<a href="/answers/', 1)[1].split("</a>", 1)[0]
    shown = row.split(">", 1)[1]
    assert shown.endswith("…") and len(shown) <= 121 and f'title="{question}"' in row


def test_short_keeps_a_short_text_and_cuts_a_long_one_at_a_word():
    from web.render import short

    assert short("How do refunds work?") == "How do refunds work?"
    cut = short("word " * 40, limit=22)
    assert cut == "word word word word…"


@pytest.mark.parametrize("path", ["/", "/docs/billing/refunds", "/docs/search?q=refund", "/healthz"])
def test_what_depends_on_the_reader_is_never_kept_by_a_shared_cache(path):
    """A proxy cache keyed on the URL alone served one reader's restricted page to the next."""
    response = client(GOOD, identity_header="X-Groups").get(path)
    assert response.headers["cache-control"] == "private, no-store"
    vary = [v.strip().lower() for v in response.headers["vary"].split(",")]
    assert "x-groups" in vary and "cookie" in vary


def test_an_answer_stream_keeps_its_own_no_store_and_static_assets_stay_cacheable():
    app = client(GOOD, identity_header="X-Groups", cors_origins="https://docs.example.com")
    stream = app.get("/ask/stream", params={"question": "refund window?"}, headers={"Origin": "https://docs.example.com"})
    assert stream.headers["cache-control"] == "private, no-store"
    assert "origin" in [v.strip().lower() for v in stream.headers["vary"].split(",")]  # CORS' own Vary is kept
    assert "no-store" not in app.get("/static/app.css").headers.get("cache-control", "")


@pytest.mark.parametrize(("trusted", "proto", "secure"), [
    ("", "", False), ("", "https", False),  # no proxy trusted: a client's X-Forwarded-Proto counts for nothing
    ("X-Forwarded-For", "https", True), ("X-Forwarded-For", "http", False)])
def test_the_owner_cookie_is_secure_behind_a_trusted_tls_proxy(trusted, proto, secure):
    headers = {"X-Forwarded-Proto": proto, "X-Forwarded-For": "203.0.113.9"} if proto else {}
    response = client(GOOD, trusted_proxy_header=trusted).post("/ask", data={"question": "refund window?"},
                                                                headers=headers)
    cookie = response.headers["set-cookie"]
    assert ("secure" in cookie.lower().split("; ")) == secure, cookie
