"""The content-gap report with the real embedding model and the real index of content/, and `python -m answer gaps`."""

from __future__ import annotations

import csv
import io
import json
import time

import pytest

from answer.__main__ import main
from answer.log.sqlite import SQLiteAnswerLog
from answer.reports.gap_index import QuestionIndex
from answer.reports.gaps import gap_report
from tests.conftest import CONTENT
from tests.fakes import CountingEmbedder
from tests.gap_seed import DAY, refusal, seed
from web.settings import Settings

pytestmark = pytest.mark.integration

NOW = time.time()
# Three things the docs do not cover, each asked several ways (some naming the product), and questions asked once.
TOPICS = {
    "terraform": ["Is there a Terraform provider for Ferrydeck?", "Can I manage Ferrydeck endpoints with Terraform?",
                  "How do I configure Ferrydeck with Terraform?", "Do you have an official Terraform provider?",
                  "terraform provider for ferrydeck webhooks", "Can I use Terraform to create Ferrydeck endpoints?"],
    "gdpr": ["Is Ferrydeck GDPR compliant?", "How does Ferrydeck handle GDPR?", "Do you comply with GDPR?",
             "What is Ferrydeck's GDPR compliance status?", "Are you GDPR compliant for EU customers?"],
    "mobile": ["Is there a Ferrydeck mobile app?", "Can I use Ferrydeck on my iPhone?", "Is there an iOS app for Ferrydeck?",
               "Do you have a mobile app for iOS or Android?"],
}
NOISE = ["What is the capital of France?", "How do I bake sourdough bread?", "Who won the 1998 world cup?",
         "What's a good name for a cat?", "How tall is Mount Everest?", "Can you recommend a pizza place in Rome?"]


@pytest.fixture
def settings(tmp_path, model_dir):
    return Settings(content_dir=CONTENT, data_dir=tmp_path, embed_model=str(model_dir))


@pytest.fixture
def seeded(settings, content_index):
    """The three topics and the noise, interleaved in time, each refusal looking at a real section of content/."""
    looked = content_index.chunks(groups=["public"])[:3]
    questions = [(topic, q) for topic, qs in TOPICS.items() for q in qs] + [("noise", q) for q in NOISE]
    answers = [refusal(q, created=NOW - 3600 + 60 * ((i * 7) % len(questions)), chunks=[looked[i % 3]])
               for i, (_, q) in enumerate(questions)]
    audit = SQLiteAnswerLog(settings.audit_path)
    seed(audit, answers)
    seed(audit, [refusal("Is there a Terraform provider yet?", created=NOW - 40 * DAY)])  # before the period
    return audit, {a.id: topic for a, (topic, _) in zip(answers, questions, strict=True)}


def test_paraphrases_of_three_missing_topics_make_three_groups_with_the_right_counts(seeded, content_index, real_embedder):
    audit, topic_of = seeded
    report = gap_report(audit, content_index, real_embedder, frozenset({"public", "staff"}), since=NOW - 30 * DAY,
                        site_name="Ferrydeck Docs")
    topics = [g for g in report.gaps if g.count > 1]
    assert [(g.count, {topic_of[i] for i in g.answer_ids}) for g in topics] == [
        (6, {"terraform"}), (5, {"gdpr"}), (4, {"mobile"})]
    assert all(g.label in TOPICS[topic_of[g.answer_ids[0]]] for g in topics)  # labelled by one of its own questions
    assert sorted(topic_of[g.answer_ids[0]] for g in report.gaps if g.count == 1) == ["noise"] * len(NOISE)
    assert report.answers == 21  # the refusal from before the period is not counted
    assert all(g.sections and g.sections[0].url.startswith("/docs/") for g in topics)


def test_questions_embedded_as_they_are_answered_are_grouped_without_embedding_again(settings, content_index,
                                                                                      real_embedder):
    embedder = CountingEmbedder(real_embedder)
    audit = SQLiteAnswerLog(settings.audit_path)
    audit.index_gaps(QuestionIndex(embedder, lambda: "Ferrydeck Docs"))
    looked = content_index.chunks(groups=["public"])[:1]
    seed(audit, [refusal(q, created=NOW - 600 + i, chunks=looked) for i, q in enumerate(TOPICS["terraform"] + TOPICS["gdpr"])])
    assert len(embedder.texts) == 11
    embedder.texts.clear()
    report = gap_report(audit, content_index, embedder, frozenset({"public", "staff"}), since=NOW - DAY,
                        site_name="Ferrydeck Docs")
    assert embedder.texts == [] and report.pending == 0
    assert [g.count for g in report.gaps] == [6, 5]


def run(capsys, argv, settings, store):
    code = main(["gaps", *argv], settings=settings, store=store)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def test_the_cli_writes_the_report_as_json_csv_and_text_for_a_period(capsys, seeded, settings, content_index):
    data = json.loads(run(capsys, ["--json"], settings, content_index))
    assert [g["count"] for g in data["gaps"][:3]] == [6, 5, 4] and data["answers"] == 21
    assert data["not_yet_grouped"] == 0  # the CLI embeds every question the log has no vector of
    first = data["gaps"][0]
    assert {"label", "examples", "reasons", "sections", "answer_ids"} <= set(first)
    assert first["examples"][0]["created"] >= first["examples"][-1]["created"]  # newest first
    assert first["reasons"][0] == {"reason": "the quote does not address the question closely enough", "answers": 6}

    rows = list(csv.DictReader(io.StringIO(run(capsys, ["--csv"], settings, content_index))))
    assert [int(r["count"]) for r in rows[:3]] == [6, 5, 4] and len(rows) == 3 + len(NOISE)
    assert rows[0]["label"] == first["label"] and rows[0]["answer_ids"].split() == first["answer_ids"]

    older = json.loads(run(capsys, ["--json", "--since", time.strftime("%Y-%m-%d", time.gmtime(NOW - 60 * DAY))],
                           settings, content_index))
    assert older["answers"] == 22 and older["gaps"][0]["count"] == 7  # the older Terraform question joins its group
    recent = json.loads(run(capsys, ["--json", "--since", time.strftime("%Y-%m-%dT%H:%M", time.gmtime(NOW - 3000))],
                            settings, content_index))
    assert 0 < recent["answers"] < 21

    text = run(capsys, [], settings, content_index)
    assert text.startswith("21 answers since") and "1. " in text and "looked at: " in text


def test_a_date_the_cli_cannot_read_is_an_error_naming_the_format(capsys, settings, content_index):
    assert main(["gaps", "--since", "last tuesday"], settings=settings, store=content_index) == 2
    assert "a date like 2025-06-01" in capsys.readouterr().err
