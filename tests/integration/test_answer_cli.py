"""`python -m answer "q" --json` and `python -m answer show ID` on the real model and the real content index."""

from __future__ import annotations

import json

import pytest

from answer.__main__ import main
from tests.conftest import CONTENT
from web.settings import Settings

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(tmp_path, model_dir):
    return Settings(content_dir=CONTENT, data_dir=tmp_path, embed_model=str(model_dir))


def run(capsys, argv, settings, store):
    code = main(argv, settings=settings, store=store)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_answer_shape_and_show_round_trip(capsys, settings, content_index):
    code, out, err = run(capsys, ["What is the default request timeout of the SDKs?", "--json"], settings, content_index)
    assert code == 0, err
    data = json.loads(out)
    assert data["state"] == "answered" and data["answer_id"]
    retrieved = {r["handle"]: r for r in data["retrieved"]}
    assert retrieved and all({"handle", "id", "title", "url"} <= set(r) for r in retrieved.values())
    assert "text" not in next(iter(retrieved.values()))  # chunk text is for the audit, not the public JSON
    for claim in data["claims"]:
        assert {"text", "status", "citations"} <= set(claim) and claim["status"] in ("supported", "partial")
        for citation in claim["citations"]:
            assert retrieved[citation["handle"]]["id"] == citation["chunk_id"]
            assert ":~:text=" in citation["url"]

    code, out, err = run(capsys, ["show", data["answer_id"]], settings, content_index)
    assert code == 0, err
    record = json.loads(out)
    assert record["answer_id"] == data["answer_id"] and record["changed_since"] == {}
    assert record["retrieved"][0]["text"]  # the full retrieval set is in the audit record
    assert record["viewer_groups"] == ["public"]


def test_groups_open_restricted_docs_only_for_their_members(capsys, settings, content_index):
    question = "Who may approve a refund override above $2,500?"
    _, out, _ = run(capsys, [question, "--json"], settings, content_index)
    public = json.loads(out)
    assert not any(r["id"].startswith("doc:internal/") for r in public["retrieved"])
    _, out, _ = run(capsys, [question, "--json", "--groups", "staff"], settings, content_index)
    staff = json.loads(out)
    assert any(r["id"].startswith("doc:internal/") for r in staff["retrieved"])


def test_human_output_names_the_state_and_the_answer_id(capsys, settings, content_index):
    code, out, _ = run(capsys, ["What is the capital of France?"], settings, content_index)
    assert code == 0
    assert out.startswith("[refused · Not in the docs]") and "answer id: " in out
    assert "The docs do not cover this." in out


def test_a_refused_question_in_another_language_is_told_the_docs_are_searched_in_english(capsys, settings,
                                                                                         content_index):
    code, out, _ = run(capsys, ["¿Cómo verifico la firma de un webhook?"], settings, content_index)
    assert code == 0 and out.startswith("[refused · Not in the docs]")
    assert "This question looks like Spanish; the docs are searched in English" in out
    assert "The docs do not cover this." not in out


def test_human_output_names_where_each_quote_sits_once(capsys, settings, content_index):
    code, out, _ = run(capsys, ["What is the default request timeout of the SDKs?"], settings, content_index)
    assert code == 0 and out.startswith("[answered · Answer]")
    wheres = [line.strip()[2:].split("  ")[0] for line in out.splitlines() if line.strip().startswith("— ")]
    assert wheres and all(len(parts) == len(set(parts)) for parts in (w.split(" › ") for w in wheres)), wheres
