"""Feedback, threads rebuilt against the live index, copy-answer Markdown, "looked at" grouping and the widget's CORS."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from starlette.testclient import TestClient

from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever, Hit, RetrievalSet
from retrieval.viewer import Viewer
from tests.fakes import REFUNDS, HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web import render
from web.app import create_app
from web.settings import Settings

from .test_web import GOOD, QUOTE, thread_of

STAFF = {"X-Groups": "staff"}


def app_with(tmp_path, *replies: str, chunks=(REFUNDS,), **settings):  # noqa: ANN001, ANN201
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, list(chunks))
    audit = SQLiteAnswerLog(tmp_path / "answers.sqlite3")
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), ScriptedGenerator(*replies), audit=audit)
    return TestClient(create_app(Settings(identity_header="X-Groups", **settings), answerer=answerer, store=store)), store


def test_feedback_is_stored_with_the_answer_and_staff_filter_by_it(tmp_path):
    app, _ = app_with(tmp_path, GOOD, GOOD)
    good = app.post("/api/ask", json={"question": "refund window?"}).json()["answer_id"]
    bad = app.post("/api/ask", json={"question": "refunds for annual plans?"}).json()["answer_id"]
    assert app.post(f"/api/answers/{bad}/feedback", json={"rating": "down", "reason": "  wrong   plan "}).status_code == 201
    assert app.post(f"/api/answers/{good}/feedback", json={"rating": "up"}).status_code == 201
    queue = app.get("/answers?feedback=down", headers=STAFF).text
    assert f'href="/answers/{bad}"' in queue and f'href="/answers/{good}"' not in queue and "Bad answers" in queue
    assert "1 not helpful" in queue
    assert f'href="/answers/{good}"' in app.get("/answers?feedback=up", headers=STAFF).text
    audit = app.get(f"/answers/{bad}", headers=STAFF).text
    assert "<q>wrong plan</q>" in audit and "not helpful" in audit
    assert app.get("/answers?feedback=down").status_code == 403  # the queue is for staff only


def test_feedback_rejects_what_it_cannot_store():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        app, _ = app_with(Path(tmp), GOOD)
        answer = app.post("/api/ask", json={"question": "refund window?"}).json()["answer_id"]
        url = f"/api/answers/{answer}/feedback"
        assert app.post(url, json={"rating": "meh"}).status_code == 400
        assert app.post(url, json={"rating": "down", "reason": "x" * 501}).status_code == 400
        assert app.post(url, json={"rating": "down", "reason": 3}).status_code == 400
        assert app.post(url, content="rating=down", headers={"content-type": "text/plain"}).status_code == 415
        assert app.post("/api/answers/0123456789abcdef/feedback", json={"rating": "up"}).status_code == 404
        assert SQLiteAnswerLog(Path(tmp) / "answers.sqlite3").feedback(answer) == []


def test_one_answer_keeps_a_bounded_number_of_ratings():
    import tempfile
    from pathlib import Path

    from answer.log.protocol import MAX_RATINGS_PER_ANSWER

    with tempfile.TemporaryDirectory() as tmp:
        app, _ = app_with(Path(tmp), GOOD)
        answer = app.post("/api/ask", json={"question": "refund window?"}).json()["answer_id"]
        url = f"/api/answers/{answer}/feedback"
        assert all(app.post(url, json={"rating": "up"}).status_code == 201 for _ in range(MAX_RATINGS_PER_ANSWER))
        refused = app.post(url, json={"rating": "down", "reason": "spam"})
        assert refused.status_code == 429 and "no more are kept" in refused.json()["error"]
        ratings = SQLiteAnswerLog(Path(tmp) / "answers.sqlite3").feedback(answer)
        assert len(ratings) == MAX_RATINGS_PER_ANSWER and all(r.rating == "up" for r in ratings)


def test_a_reloaded_turn_whose_source_changed_never_shows_the_old_quote(tmp_path):
    app, store = app_with(tmp_path, GOOD)
    page = app.post("/ask", data={"question": "refund window?"}).text
    thread = thread_of(page)
    edited = replace(REFUNDS, text=REFUNDS.text.replace("14 days", "30 days"), hash="edited")
    store.items = [(edited if c.id == REFUNDS.id else c, v) for c, v in store.items]
    fresh = create_app(Settings(identity_header="X-Groups"), answerer=app.app.state.services.answerer, store=store)
    reloaded = TestClient(fresh).get(f"/?thread={thread}").text  # a restarted server: rebuilt from the log
    assert QUOTE not in reloaded and "<blockquote>" not in reloaded
    assert 'data-state="stale"' in reloaded and "refund window?" in reloaded and 'class="retry"' in reloaded


def test_the_askers_own_reload_is_rebuilt_after_a_reingest_restricted_its_source(tmp_path):
    """No shortcut for the asker: the same running app, with and without an answer log, withholds the turn."""
    for logged in (True, False):
        embedder = HashEmbedder()
        store = MemoryIndex(embedder, [REFUNDS])
        audit = SQLiteAnswerLog(tmp_path / f"answers-{logged}.sqlite3") if logged else None
        answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), ScriptedGenerator(GOOD), audit=audit)
        app = TestClient(create_app(Settings(identity_header="X-Groups"), answerer=answerer, store=store))
        thread = thread_of(app.post("/ask", data={"question": "refund window?"}).text)
        assert QUOTE in app.get(f"/?thread={thread}").text  # before: the asker sees their answer again
        restricted = replace(REFUNDS, access=("team-x",))  # same text, same hash: only the access changed
        store.items = [(restricted if c.id == REFUNDS.id else c, v) for c, v in store.items]
        for path in (f"/?thread={thread}", f"/ask/thread?thread={thread}"):
            for headers in ({}, {"X-Groups": "staff"}):
                shown = app.get(path, headers=headers).text
                assert QUOTE not in shown and REFUNDS.text[:40] not in shown, (logged, path, headers)
        assert QUOTE in app.get(f"/?thread={thread}", headers={"X-Groups": "team-x"}).text, logged


def test_a_rebuilt_turn_resolves_every_citation_against_the_live_chunk():
    record_rset = RetrievalSet("r", "q", Viewer.anonymous(), (Hit("c1", REFUNDS, 1.0),))
    from answer.contract.record import from_json
    from answer.contract.result import Answer
    from answer.contract.verify import Citation, Claim
    from answer.restore import restore

    start = REFUNDS.text.index(QUOTE)
    cite = Citation("c1", REFUNDS.id, QUOTE, start, start + len(QUOTE), "", "", "Refunds", ("Refund windows",), "2.4", REFUNDS.hash)
    answer = Answer("a1", "q", "answered", (Claim("Refunds last 14 days.", "supported", (cite,)),), record_rset)
    record = answer.to_dict(include_chunks=True)
    phantom = json.loads(json.dumps(record))
    phantom["claims"][0]["citations"][0]["handle"] = "c9"  # a record edited to point at a handle that was never retrieved
    for rec, shown in ((record, True), (phantom, False)):
        view = render.turn_view(restore(from_json(rec), Viewer.anonymous(), [REFUNDS]), render.SiteConfig(), "t")
        assert (QUOTE in [c.quote for claim in view.claims for c in claim.cites]) is shown
        assert view.state == ("verified" if shown else "stale")


def test_copy_answer_markdown_has_each_quote_with_its_deep_link_and_the_sources(tmp_path):
    app, _ = app_with(tmp_path, GOOD)
    html = app.post("/ask", data={"question": "refund window?"}).text
    markdown = re.search(r'data-markdown="([^"]*)"', html).group(1)
    from html import unescape

    text = unescape(markdown)
    assert text.startswith("**refund window?**")
    assert f"> {QUOTE} [1](/docs/billing/refunds#refund-windows:~:text=" in text
    assert "Sources:\n1. [Refunds › Refund windows](/docs/billing/refunds#refund-windows:~:text=" in text


def test_looked_at_names_a_split_section_once_with_every_part_and_links_only_site_urls():
    part2 = make_chunk("billing/refunds", "refund-windows", "Annual plans are refunded pro rata.", title="Refunds",
                       heading="Refund windows", part=2)
    secret = make_chunk("internal/x", "y", "Secret.", title="Internal", heading="Y", access=("staff",))
    rset = RetrievalSet("r", "q", Viewer.anonymous(), (Hit("c1", REFUNDS, 1.0), Hit("c2", secret, 0.9), Hit("c3", part2, 0.8)))
    looked = render.looked_at(rset, render.SiteConfig())
    assert [(item.title, item.handles, item.href) for item in looked] == [
        ("Refunds", ("c1", "c3"), "/docs/billing/refunds#refund-windows")]  # the restricted hit is never titled


def test_only_allowlisted_origins_get_cors_and_never_credentials(tmp_path):
    app, _ = app_with(tmp_path, GOOD, cors_origins="https://docs.example.com")
    preflight = app.options("/api/ask", headers={"Origin": "https://docs.example.com", "Access-Control-Request-Method": "POST",
                                                 "Access-Control-Request-Headers": "content-type"})
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "https://docs.example.com"
    assert "access-control-allow-credentials" not in preflight.headers
    answered = app.post("/api/ask", json={"question": "refund window?"}, headers={"Origin": "https://docs.example.com"})
    assert answered.headers["access-control-allow-origin"] == "https://docs.example.com"
    for origin, path in (("https://evil.example", "/api/ask"), ("https://docs.example.com", "/answers")):
        response = app.get(path, headers={"Origin": origin} | STAFF)
        assert "access-control-allow-origin" not in response.headers, (origin, path)
    assert "access-control-allow-origin" in app.get("/static/widget.js", headers={"Origin": "https://docs.example.com"}).headers


def test_a_broken_answer_log_costs_the_thread_never_the_answer(tmp_path, caplog):
    (tmp_path / "answers.sqlite3").mkdir()  # the log path is a directory: every read and write fails
    app, _ = app_with(tmp_path, GOOD, GOOD, GOOD)
    first = app.post("/api/ask", json={"question": "refund window?"})
    assert first.status_code == 200 and first.json()["state"] == "answered"
    again = app.post("/api/ask", json={"question": "Is it longer for annual plans?", "thread_id": first.json()["thread_id"]})
    assert again.status_code == 200 and not again.json()["rewritten"]  # no history could be read: asked as typed
    assert app.get(f"/?thread={first.json()['thread_id']}").status_code == 200
    page = app.post("/ask", data={"question": "refund window?"}).text  # without JavaScript: the page shows the answer
    assert 'data-state="verified"' in page and f"<blockquote>{QUOTE}</blockquote>" in page
    assert "could not add answer" in caplog.text
