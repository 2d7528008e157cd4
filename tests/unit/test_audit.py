"""The audit trail: every answer stored with what is needed to check it; a broken log never costs an answer."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from dataclasses import replace

import pytest

from answer.__main__ import main
from answer.errors import AnswerLogError
from answer.log.protocol import MAX_RATINGS_PER_ANSWER, MAX_REASON_CHARS, TurnRow
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.ids import content_hash
from retrieval.search import DenseRetriever
from retrieval.viewer import Viewer
from tests.fakes import HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web.settings import Settings

REFUNDS = make_chunk("billing/refunds", "refund-windows",
                     "Refunds are available within 14 days of the charge. Annual plans are refunded pro rata.",
                     title="Refunds", heading="Refund windows")
QUOTE = "Refunds are available within 14 days of the charge."
GOOD = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": QUOTE}], "claim": QUOTE}]})


def ask(audit, chunks=(REFUNDS,), viewer=None):
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, chunks)
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(GOOD), audit=audit)
    return answerer.ask("How long are refunds available?", viewer or Viewer.of(["staff"])), store


def test_the_record_holds_question_viewer_retrieval_drafts_and_claims(make_log):
    audit = make_log()
    answer, _ = ask(audit)
    record = audit.get(answer.id)
    assert record.question == "How long are refunds available?"
    assert record.viewer_groups == ("public", "staff")
    assert record.retrieved[0].text == REFUNDS.text and record.retrieved[0].hash == REFUNDS.hash
    assert record.attempts[0].raw == GOOD
    assert record.claims[0].citations[0].quote == QUOTE
    assert [row.id for row in audit.search("refunds")] == [answer.id]
    assert audit.get("nope") is None


def test_unwritable_audit_path_still_returns_the_answer_and_logs(tmp_path, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the log directory should be")
    audit = SQLiteAnswerLog(blocker / "answers.sqlite3")
    with caplog.at_level(logging.ERROR, logger="answer.pipeline"):
        answer, _ = ask(audit)
    assert answer.state == "answered"
    assert any("could not write answer" in r.getMessage() and answer.id in r.getMessage() for r in caplog.records)
    with pytest.raises(AnswerLogError, match="cannot write answer"):
        audit.record(answer)


def test_locked_audit_db_still_returns_the_answer_and_logs(tmp_path, caplog):
    path = tmp_path / "answers.sqlite3"
    audit = SQLiteAnswerLog(path, timeout=0.05)
    ask(audit)  # creates the schema
    holder = sqlite3.connect(path, timeout=0.05)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with caplog.at_level(logging.ERROR, logger="answer.pipeline"):
            answer, _ = ask(audit)
        assert answer.state == "answered" and answer.claims
        assert any("could not write answer" in r.getMessage() for r in caplog.records)
    finally:
        holder.rollback()
        holder.close()
    assert audit.get(answer.id) is None  # really not written: the failure was not hidden


@pytest.mark.parametrize("live, expected", [("same", set()), ("edited", {"changed"}), ("gone", {"removed"})])
def test_show_prints_the_record_with_changed_since(tmp_path, capsys, live, expected):
    settings = Settings(data_dir=tmp_path)
    answer, _ = ask(SQLiteAnswerLog(settings.audit_path))
    edited = replace(REFUNDS, text=REFUNDS.text + " Fees are kept.", hash=content_hash("Refunds", "x", "y"))
    store = MemoryIndex(HashEmbedder(), {"same": [REFUNDS], "edited": [edited], "gone": []}[live])
    assert main(["show", answer.id], settings=settings, store=store) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["answer_id"] == answer.id
    assert set(record["changed_since"].values()) == expected
    assert all(key == REFUNDS.id for key in record["changed_since"])


def test_show_gives_what_a_follow_up_s_visitor_typed_beside_its_rewrite(tmp_path, capsys):
    settings = Settings(data_dir=tmp_path)
    audit = SQLiteAnswerLog(settings.audit_path)
    answer, _ = ask(audit)
    store = MemoryIndex(HashEmbedder(), [REFUNDS])
    assert main(["show", answer.id], settings=settings, store=store) == 0
    assert "asked" not in json.loads(capsys.readouterr().out)  # not a turn of a thread
    audit.add_turn("t3", answer.id, "and for that?", answer.question, frozenset({"public"}))
    assert main(["show", answer.id], settings=settings, store=store) == 0
    assert json.loads(capsys.readouterr().out)["asked"] == "and for that?"


def test_show_unknown_id_is_an_error_exit(tmp_path, capsys):
    assert main(["show", "missing"], settings=Settings(data_dir=tmp_path), store=MemoryIndex(HashEmbedder())) == 1
    assert "no answer with id 'missing'" in capsys.readouterr().err


def test_the_record_reads_back_as_it_was_written(make_log):
    from answer.contract.record import from_json, to_json

    audit = make_log()
    answer, _ = ask(audit)
    stored = audit.get(answer.id)
    assert stored == answer.record()  # every field, typed, through one serializer and back
    assert from_json(to_json(stored, full=True)) == stored
    assert to_json(stored) == answer.to_dict()  # the public JSON is the same serializer without the audit part


# A row as the log stored it before findings were typed: plain sentences, no per-attempt findings.
OLD_ROW = {
    "answer_id": "0123456789abcdef", "question": "How long are refunds available?", "state": "answered",
    "degraded": True, "model_unavailable": False, "generator": "scripted", "created": 1700000000.0,
    "claims": [{"text": QUOTE, "status": "supported", "role": "", "stitched": False, "reasons": [], "citations": [
        {"handle": "c1", "chunk_id": REFUNDS.id, "quote": QUOTE, "start": 0, "end": len(QUOTE), "url": "u",
         "page_url": "p", "title": "Refunds", "heading_path": ["Refund windows"], "doc_version": "", "hash": REFUNDS.hash}]}],
    "retrieved": [{"handle": "c1", "id": REFUNDS.id, "title": "Refunds", "url": "u", "heading_path": ["Refund windows"],
                   "doc_version": "", "hash": REFUNDS.hash, "text": REFUNDS.text, "score": 0.5}],
    "problems": ["claim 2: c7 does not exist; cite only c1"],
    "hidden": [], "timings": {"retrieve": 0.01}, "viewer_groups": ["public"],
    "quotes_total": 3, "quotes_verbatim": 2, "phantoms": 1,
    "drafts": [
        {"raw": "{}", "feedback": [], "draft": {"refused": False, "claims": [
            {"quotes": [{"handle": "c1", "quote": QUOTE}], "claim": QUOTE},
            {"quotes": [{"handle": "c7", "quote": "Refunds are forever."}], "claim": "Refunds are forever."}]},
         "quotes": [{"claim": 1, "handle": "c1", "quote": QUOTE, "verified": True, "reason": "", "kind": "verified"},
                    {"claim": 2, "handle": "c7", "quote": "Refunds are forever.", "verified": False,
                     "reason": "c7 does not exist; cite only c1", "kind": "phantom"}]},
        {"raw": "", "error": "the model returned an empty reply",
         "feedback": ["claim 2: c7 does not exist; cite only c1"]},
    ],
}


def test_a_row_written_before_findings_were_typed_still_opens(tmp_path):
    from web.audit_view import attempts

    audit = SQLiteAnswerLog(tmp_path / "answers.sqlite3")
    ask(audit)  # creates the schema
    with sqlite3.connect(audit.path) as connection:
        connection.execute("INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (OLD_ROW["answer_id"], OLD_ROW["created"], OLD_ROW["question"], "public", "answered", 1,
                            "scripted", json.dumps(OLD_ROW)))
    record = audit.get(OLD_ROW["answer_id"])
    assert record is not None and record.state == "answered" and record.degraded
    assert record.claims[0].citations[0].heading_path == ("Refund windows",)
    assert [(f.claim, f.text) for f in record.problems] == [(2, "claim 2: c7 does not exist; cite only c1")]
    first, second = record.attempts
    assert first.findings is None and [q.check.kind for q in first.quotes] == ["verified", "phantom"]
    assert second.draft is None and second.error and second.feedback[0].claim == 2
    # The audit view still puts the old finding beside the claim it was about (the retry's feedback names it).
    [used, retry] = attempts(record)
    assert [o.why for o in used.outcomes] == [(), ("claim 2: c7 does not exist; cite only c1",)]
    assert used.findings_known and retry.error


def test_a_turns_table_from_before_owners_gains_the_column_and_keeps_its_threads(tmp_path):
    path = tmp_path / "answers.sqlite3"
    with sqlite3.connect(path) as db:  # the previous version's table, holding a thread
        db.execute("CREATE TABLE turns (thread_id TEXT NOT NULL, position INTEGER NOT NULL, answer_id TEXT NOT NULL,"
                   " asked TEXT NOT NULL, question TEXT NOT NULL, groups TEXT NOT NULL, created REAL NOT NULL,"
                   " PRIMARY KEY (thread_id, position))")
        db.execute("INSERT INTO turns VALUES ('0123456789abcdef', 1, 'a1', 'refunds?', 'refunds?', 'public', 0)")
    first, second = SQLiteAnswerLog(path), SQLiteAnswerLog(path)  # two workers opening the same old log
    assert [(t.asked, t.owner) for t in first.thread("0123456789abcdef")] == [("refunds?", None)]
    assert [(t.asked, t.owner) for t in second.thread("0123456789abcdef")] == [("refunds?", None)]
    second.add_turn("0123456789abcdef", "a2", "and annual?", "and annual?", frozenset({"public"}), "f" * 64)
    assert [t.owner for t in first.thread("0123456789abcdef")] == [None, "f" * 64]


# -- the contract both logs keep (SQLite and PostgreSQL, via make_log) -----------------------------------

def test_a_thread_keeps_its_turns_in_order_even_when_they_are_added_at_once(make_log):
    logs = [make_log(), make_log()]  # two workers, or two replicas, on one log
    logs[0].add_turn("t1", "a0", "refunds?", "refunds?", frozenset({"public", "staff"}), "f" * 64)

    def ask(n: int) -> None:
        logs[n % 2].add_turn("t1", f"a{n}", f"q{n}", f"q{n}", frozenset({"public"}))

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    turns = logs[1].thread("t1")
    assert turns[0] == TurnRow("a0", "refunds?", "refunds?", frozenset({"public", "staff"}), "f" * 64)
    assert sorted(t.answer_id for t in turns[1:]) == [f"a{n}" for n in range(1, 9)] and turns[1].owner is None
    assert logs[0].thread("another") == []


def test_what_the_visitor_typed_is_found_by_the_answer_it_gave(make_log):
    log = make_log()
    log.add_turn("t2", "a0", "How do I rotate an API key?", "How do I rotate an API key?", frozenset({"public"}))
    log.add_turn("t2", "a1", "And from the CLI?", "How do I rotate an API key from the CLI?", frozenset({"public"}))
    assert log.asked("a1") == "And from the CLI?" and log.asked("a0") == "How do I rotate an API key?"
    assert log.asked("never-asked") is None and log.asked("a\x00") is None


def test_feedback_is_kept_in_order_capped_per_answer_and_counted_in_the_search(make_log):
    audit = make_log()
    answer, _ = ask(audit)
    assert audit.add_feedback(answer.id, "up", "clear", frozenset({"public"}))
    assert audit.add_feedback(answer.id, "down", "x" * 600, frozenset({"staff", "public"}))
    ratings = audit.feedback(answer.id)
    assert [(r.rating, r.reason, r.groups) for r in ratings] == [("up", "clear", "public"),
                                                                ("down", "x" * MAX_REASON_CHARS, "public,staff")]
    assert all(abs(r.created - time.time()) < 60 for r in ratings)
    [row] = audit.search(feedback="down")
    assert (row.id, row.up, row.down, row.state) == (answer.id, 1, 1, "answered")
    for _ in range(MAX_RATINGS_PER_ANSWER - 2):
        assert audit.add_feedback(answer.id, "up", "", frozenset({"public"}))
    assert not audit.add_feedback(answer.id, "down", "one too many", frozenset({"public"}))
    assert len(audit.feedback(answer.id)) == MAX_RATINGS_PER_ANSWER
    with pytest.raises(ValueError, match="rating must be one of"):
        audit.add_feedback(answer.id, "meh", "", frozenset())


def test_the_search_filters_by_text_state_feedback_and_ids(make_log):
    audit = make_log()
    first, _ = ask(audit)
    second = replace(first, id="b" * 16, question="What does 100% off_peak mean?", state="refused", created=first.created + 1)
    audit.record(second)
    assert [r.id for r in audit.search()] == [second.id, first.id]  # newest first
    assert [r.id for r in audit.search("REFUNDS")] == [first.id]  # case does not matter
    assert [r.id for r in audit.search("100% off_")] == [second.id] and audit.search("100%_off") == []
    assert [r.id for r in audit.search(state="refused")] == [second.id]
    assert [r.id for r in audit.search(ids=[first.id, "nope"])] == [first.id]
    assert audit.search(feedback="any") == [] and [r.id for r in audit.search(limit=1)] == [second.id]
    audit.record(replace(second, question="Rewritten"))  # the same id again replaces the answer
    assert [r.question for r in audit.search(ids=[second.id])] == ["Rewritten"]


def test_question_vectors_are_kept_per_model_and_replaced(make_log):
    audit = make_log()
    ask(audit)
    audit.keep_question_vectors("m1", [("a", "h1", b"\x00\x01"), ("b", "h2", b"\xff" * 256)])
    audit.keep_question_vectors("m1", [("a", "h3", b"\x02")])
    audit.keep_question_vectors("m2", [("a", "h9", b"\x09")])
    assert audit.question_vectors("m1", ["a", "b", "c"]) == {"a": ("h3", b"\x02"), "b": ("h2", b"\xff" * 256)}
    assert audit.question_vectors("m2", ["a"]) == {"a": ("h9", b"\x09")} and audit.question_vectors("m1", []) == {}


def test_a_log_shares_its_secrets_and_its_budgets_with_every_log_on_the_same_store(make_log):
    from answer.log.ratelimit import Rate

    one, two = make_log(), make_log()
    secret = one.secrets().secret("thread_secret")
    assert len(secret) == 64 and two.secrets().secret("thread_secret") == secret
    assert two.secrets().secret("another") != secret
    rate, now = Rate(2, 60.0), 1_000_000.0
    assert [one.limiter().take("ask:a", rate, now), two.limiter().take("ask:a", rate, now)] == [0.0, 0.0]
    assert one.limiter().take("ask:a", rate, now) == pytest.approx(30.0)
    one.check()


def test_an_id_holding_a_nul_names_no_answer_in_either_database(make_log):
    """PostgreSQL text holds no NUL: such an id failed the statement and the visitor got a 503 (SQLite: a 404)."""
    audit = make_log()
    answer, _ = ask(audit)
    forged = answer.id[:8] + "\x00" + answer.id[8:]
    assert audit.get(forged) is None and audit.feedback(forged) == [] and audit.thread("t\x00") == []
    assert audit.search(ids=[forged]) == [] and audit.search(text="refunds\x00") == []
    assert audit.get(answer.id) is not None  # and the log still answers afterwards


def test_a_feedback_reason_loses_its_control_characters_at_the_edge():
    from web.api import read_feedback

    assert read_feedback({"rating": "down", "reason": "wrong\x00 page\x07\u200b here\n"}) == ("down", "wrong page here")


def test_the_sqlite_log_records_its_schema_version_and_adopts_a_log_written_before_thread_owners(tmp_path):
    import sqlite3

    from answer.log.sqlite_schema import LATEST, migrate

    legacy = tmp_path / "legacy.sqlite3"
    with sqlite3.connect(legacy) as db:  # the turns table as it was before owners, one thread in it
        db.execute("CREATE TABLE turns (thread_id TEXT NOT NULL, position INTEGER NOT NULL, answer_id TEXT NOT NULL,"
                   " asked TEXT NOT NULL, question TEXT NOT NULL, groups TEXT NOT NULL, created REAL NOT NULL,"
                   " PRIMARY KEY (thread_id, position))")
        db.execute("INSERT INTO turns VALUES ('t1', 0, 'a1', 'q', 'q', 'public', 1.0)")
    db = sqlite3.connect(legacy)
    assert migrate(db) == [1]
    assert db.execute("PRAGMA user_version").fetchone()[0] == LATEST
    assert db.execute("SELECT thread_id, owner FROM turns").fetchall() == [("t1", None)]  # kept, owned by nobody
    assert migrate(db) == []  # recorded: the next worker applies nothing
    db.close()

    fresh = SQLiteAnswerLog(tmp_path / "answers.sqlite3")
    assert fresh.prune() == 0  # the first write opens the file, which takes the whole schema
    with sqlite3.connect(fresh.path) as check:
        assert check.execute("PRAGMA user_version").fetchone()[0] == LATEST
        tables = {row[0] for row in check.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"answers", "turns", "feedback", "question_vectors", "rate_limits"}
