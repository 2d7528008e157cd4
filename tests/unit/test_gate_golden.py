"""Golden fixtures of the answer gate: what it reads in a question, and how it scores and judges spans.

The files under tests/fixtures/gate are written to be read: one question per line with the kind, focus
terms and identifiers the gate takes from it (`questions.tsv`), and for a few sections, every candidate
span with its named features, its score and the gate's verdict (`spans.json`). A change to a weight, a
threshold or a rule shows here as a diff a reviewer can eyeball before `make eval` says what it cost.

Meaning is word overlap in this tier (no model); the real model's scores are measured by `make eval`.
After a deliberate change, `UPDATE_GOLDEN=1 make test-unit` rewrites the expected parts; review the diff.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest

from answer.gate import AnswerGate, analyze
from answer.gate.features import AnswerExtractor
from answer.gate.stage import RetrievedFocus, direct_verdict
from answer.gate.vocabulary import Vocabulary
from ingest.documents import Chunk
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import make_chunk

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gate"
QUESTIONS = FIXTURES / "questions.tsv"
SPANS = FIXTURES / "spans.json"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
COLUMNS = ["question", "kind", "focus", "identifiers"]


def _analysed(question: str) -> dict[str, str]:
    q = analyze(question)
    return {"question": question, "kind": q.kind, "focus": " ".join(sorted(q.focus)),
            "identifiers": " ".join(sorted(q.identifiers))}


def _read_questions() -> list[dict[str, str]]:
    with QUESTIONS.open(newline="", encoding="utf-8") as f:
        return [dict(row) for row in csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")]


def test_each_question_is_read_as_its_golden_line_says():
    rows = _read_questions()
    assert len(rows) >= 40, "the fixture lost its questions"
    got = [_analysed(row["question"]) for row in rows]
    if UPDATE:
        header = QUESTIONS.read_text(encoding="utf-8").split("\n" + "\t".join(COLUMNS))[0]
        lines = ["\t".join(r[c] for c in COLUMNS) for r in got]
        QUESTIONS.write_text(header + "\n" + "\t".join(COLUMNS) + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
        return
    mismatched = [(want, have) for want, have in zip(rows, got, strict=True) if want != have]
    assert not mismatched, "\n".join(f"{w['question']}\n  golden {w}\n  now    {h}" for w, h in mismatched)


def _chunks(sections: list[dict[str, str]]) -> list[Chunk]:
    return [make_chunk(s["slug"], s["anchor"], s["text"], title=s["title"], heading=s["heading"]) for s in sections]


def _judged(case: dict[str, Any], site: list[Chunk]) -> dict[str, Any]:
    """The gate's view of one case; term rarity comes from `site`, the sections of a small docs site."""
    chunks = _chunks(case["sections"])
    vocabulary = Vocabulary.from_chunks(site)
    gate = AnswerGate(AnswerExtractor(vocabulary=lambda: vocabulary))
    question = gate.question(case["question"])
    rset = renumber(question.text, Viewer.anonymous(), [(c, 1.0) for c in chunks])
    focus = RetrievedFocus.of(question, rset.hits, vocabulary)
    spans = []
    for scored in gate.extractor.rank(question, rset):
        verdict = direct_verdict(question, scored, rset.get(scored.span.handle), focus, vocabulary,  # type: ignore[arg-type]
                                 gate.thresholds)
        spans.append({"text": scored.span.text, "score": scored.score, "features": dict(scored.features),
                      "direct": "answers" if verdict.answers else list(verdict.reasons)})
    chosen, reasons = gate.pick(question, rset)
    return {"kind": question.kind, "spans": spans, "picked": [s.span.text for s in chosen], "refused": list(reasons)}


def _cases() -> list[dict[str, Any]]:
    return json.loads(SPANS.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("index", range(len(_cases())))
def test_each_span_scores_and_is_judged_as_its_golden_entry_says(index: int):
    document = json.loads(SPANS.read_text(encoding="utf-8"))
    case = document["cases"][index]
    site = {(s["slug"], s["anchor"]): s for s in [*document["site"], *case["sections"]]}  # a case's own sections count once
    got = _judged(case, _chunks(list(site.values())))
    if UPDATE:
        case["expected"] = got
        SPANS.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    assert got == case["expected"], f"{case['name']}: the gate's view changed; review and regenerate"
