"""The audit trail: every answer stored with what is needed to check it; a broken log never costs an answer."""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import replace

import pytest

from answer.__main__ import main
from answer.audit import SQLiteAuditLog
from answer.errors import AuditError
from answer.pipeline import Answerer
from ingest.ids import content_hash
from retrieval.search import DenseRetriever
from retrieval.viewer import Viewer
from tests.fakes import HashEmbedder, MemoryStore, ScriptedGenerator, make_chunk
from web.settings import Settings

REFUNDS = make_chunk("billing/refunds", "refund-windows",
                     "Refunds are available within 14 days of the charge. Annual plans are refunded pro rata.",
                     title="Refunds", heading="Refund windows")
QUOTE = "Refunds are available within 14 days of the charge."
GOOD = json.dumps({"refused": False, "claims": [{"quotes": [{"handle": "c1", "quote": QUOTE}], "claim": QUOTE}]})


def ask(audit, chunks=(REFUNDS,), viewer=None):
    embedder = HashEmbedder()
    store = MemoryStore(embedder, chunks)
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(GOOD), audit=audit)
    return answerer.ask("How long are refunds available?", viewer or Viewer.of(["staff"])), store


def test_the_record_holds_question_viewer_retrieval_drafts_and_claims(tmp_path):
    audit = SQLiteAuditLog(tmp_path / "answers.sqlite3")
    answer, _ = ask(audit)
    record = audit.get(answer.id)
    assert record["question"] == "How long are refunds available?"
    assert record["viewer_groups"] == ["public", "staff"]
    assert record["retrieved"][0]["text"] == REFUNDS.text and record["retrieved"][0]["hash"] == REFUNDS.hash
    assert record["drafts"][0]["raw"] == GOOD
    assert record["claims"][0]["citations"][0]["quote"] == QUOTE
    assert [row["id"] for row in audit.search("refunds")] == [answer.id]
    assert audit.get("nope") is None


def test_unwritable_audit_path_still_returns_the_answer_and_logs(tmp_path, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the log directory should be")
    audit = SQLiteAuditLog(blocker / "answers.sqlite3")
    with caplog.at_level(logging.ERROR, logger="answer.pipeline"):
        answer, _ = ask(audit)
    assert answer.state == "answered"
    assert any("could not write answer" in r.getMessage() and answer.id in r.getMessage() for r in caplog.records)
    with pytest.raises(AuditError, match="cannot write answer"):
        audit.record(answer)


def test_locked_audit_db_still_returns_the_answer_and_logs(tmp_path, caplog):
    path = tmp_path / "answers.sqlite3"
    audit = SQLiteAuditLog(path, timeout=0.05)
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
    answer, _ = ask(SQLiteAuditLog(settings.audit_path))
    edited = replace(REFUNDS, text=REFUNDS.text + " Fees are kept.", hash=content_hash("Refunds", "x", "y"))
    store = MemoryStore(HashEmbedder(), {"same": [REFUNDS], "edited": [edited], "gone": []}[live])
    assert main(["show", answer.id], settings=settings, store=store) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["answer_id"] == answer.id
    assert set(record["changed_since"].values()) == expected
    assert all(key == REFUNDS.id for key in record["changed_since"])


def test_show_unknown_id_is_an_error_exit(tmp_path, capsys):
    assert main(["show", "missing"], settings=Settings(data_dir=tmp_path), store=MemoryStore(HashEmbedder())) == 1
    assert "no answer with id 'missing'" in capsys.readouterr().err
