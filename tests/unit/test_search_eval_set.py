"""The retrieval/grounding question set stays valid against the current content/ (drift fails here)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

QUESTIONS = Path(__file__).resolve().parents[1] / "eval" / "questions.jsonl"
FIELDS = {"id": str, "question": str, "kind": str, "groups": list, "answerable": bool, "gold": list,
          "answer_quote": str, "version": str}
KINDS = {"fact", "number", "multi-section", "how-to", "staff", "tenant", "unanswerable"}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def chunks(corpus) -> dict:
    return {chunk.id: chunk for chunk in corpus.chunks()}


def test_every_row_has_the_same_fields_with_the_same_types(rows):
    """One schema for every line, so `datasets.load_dataset("json", …)` infers stable features."""
    for row in rows:
        assert set(row) == set(FIELDS), row["id"]
        for name, kind in FIELDS.items():
            assert type(row[name]) is kind, (row["id"], name)
        assert all(isinstance(x, str) for x in row["groups"] + row["gold"]), row["id"]
        assert row["kind"] in KINDS, row["id"]
    assert len({row["id"] for row in rows}) == len(rows)
    assert len({(row["question"], tuple(row["groups"])) for row in rows}) == len(rows)


def test_the_set_has_the_required_mix(rows):
    answerable = [r for r in rows if r["answerable"]]
    kinds = Counter(r["kind"] for r in answerable)
    assert len(answerable) >= 80
    assert sum(1 for r in rows if r["kind"] == "unanswerable") >= 15
    assert kinds["number"] >= 10 and kinds["how-to"] >= 5
    assert sum(1 for r in answerable if r["kind"] == "multi-section" and len(r["gold"]) >= 2) >= 5
    staff_answered = {r["question"] for r in answerable if r["kind"] == "staff" and "staff" in r["groups"]}
    staff_refused = {r["question"] for r in rows if r["kind"] == "staff" and not r["answerable"] and not r["groups"]}
    assert len(staff_answered) >= 10 and staff_answered == staff_refused


def test_unanswerable_rows_have_no_gold_and_answerable_rows_have_a_quote(rows):
    for row in rows:
        if row["kind"] == "unanswerable":
            assert not row["answerable"] and row["gold"] == [] and row["answer_quote"] == "", row["id"]
        else:
            assert row["gold"] and len(row["answer_quote"]) >= 5, row["id"]


def test_every_gold_id_exists_and_the_quote_is_verbatim_in_a_gold_chunk(rows, chunks):
    for row in rows:
        missing = [g for g in row["gold"] if g not in chunks]
        assert not missing, f"{row['id']}: gold ids not in the current outline: {missing}"
        if row["gold"]:
            assert any(row["answer_quote"] in chunks[g].text for g in row["gold"]), (
                f"{row['id']}: answer_quote not found verbatim in {row['gold']}: {row['answer_quote']!r}"
            )


def test_access_matches_the_expectation(rows, chunks):
    """Answerable rows' gold is readable by their viewer; refused rows with gold are exactly the restricted ones."""
    for row in rows:
        groups = frozenset({"public", *row["groups"]})
        readable = [chunks[g].readable_by(groups) for g in row["gold"]]
        if row["answerable"]:
            assert all(readable), row["id"]
        elif row["gold"]:
            assert not any(readable), row["id"]


def test_questions_are_not_copies_of_their_gold_headings(rows, chunks):
    def norm(text: str) -> str:
        return " ".join(re.findall(r"[a-z0-9]+", text.lower()))

    for row in rows:
        headings = {norm(h) for g in row["gold"] for h in (*chunks[g].heading_path, chunks[g].title)}
        assert norm(row["question"]) not in headings, row["id"]


def test_version_rows_point_at_pages_of_that_version(rows, chunks):
    for row in rows:
        if row["version"]:
            assert all(chunks[g].doc_version == row["version"] for g in row["gold"]), row["id"]


def test_loads_as_a_hugging_face_dataset(rows):
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset("json", data_files=str(QUESTIONS), split="train")
    assert loaded.num_rows == len(rows)
    assert set(loaded.column_names) == set(FIELDS)
