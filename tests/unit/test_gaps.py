"""The content-gap report with fakes: grouping, redaction, the audit view's readable rule, the vector cache, vectors
written with their answers, the web page's embedding cap, /gaps."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
from starlette.testclient import TestClient

from answer.log.retention import Retention
from answer.log.sqlite import SQLiteAnswerLog
from answer.reports.clusters import central, cluster
from answer.reports.gap_export import report_json, report_text
from answer.reports.gap_index import QuestionIndex
from answer.reports.gaps import gap_report, gap_text, parse_since, reason_text, topic_text
from answer.reports.redaction import EMAIL, KEY, NUMBER, redact
from retrieval.search import DenseRetriever
from tests.answer_logs import raw
from tests.fakes import CountingEmbedder, HashEmbedder, ScriptedGenerator, make_chunk
from tests.gap_seed import DAY, refusal, seed
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.settings import Settings

NOW = time.time()
PUBLIC_CHUNK = make_chunk("guides/team-and-roles", "single-sign-on", "SAML single sign-on is on the Enterprise plan.",
                          title="Team and roles", heading="Single sign-on")
ACME_CHUNK = make_chunk("customers/acme", "maintenance-windows", "Acme's cluster is patched on Sundays at 02:00.",
                        title="Acme cluster", heading="Maintenance windows", access=("tenant-acme",))


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


# -- clustering --------------------------------------------------------------------------------------


def test_a_centre_takes_its_neighbours_and_groups_do_not_chain():
    # Four questions on an arc, each at cosine 0.8 from the next and 0.28 from the one after: single linkage
    # would chain them into one group. b and c both have three neighbours; b comes first and takes a, b and c.
    angles = np.radians([0, 36.87, 73.74, 110.61])
    vectors = np.stack([unit(np.cos(t), np.sin(t), 0) for t in angles])
    assert cluster(vectors, threshold=0.7) == [[1, 0, 2], [3]]


def test_the_heaviest_neighbourhood_is_taken_first_and_weights_count_repeats():
    near = [unit(1, 0.05 * i, 0) for i in range(3)]
    other = unit(0, 1, 0)
    vectors = np.stack([other, *near])
    assert cluster(vectors, threshold=0.9)[0] == [1, 2, 3]  # three questions outweigh one
    assert cluster(vectors, weights=[5, 1, 1, 1], threshold=0.9)[0] == [0]  # asked five times, it comes first


def test_clustering_is_deterministic_and_the_label_is_the_most_central_member():
    rng = np.random.default_rng(7)
    vectors = np.stack([unit(*rng.normal(size=8)) for _ in range(60)])
    assert cluster(vectors, threshold=0.3) == cluster(vectors.copy(), threshold=0.3)
    edge, middle, other_edge = unit(1, 0.3, 0), unit(1, 0, 0), unit(1, -0.3, 0)
    assert central(np.stack([edge, middle, other_edge]), [0, 1, 2]) == 1


def test_nothing_to_cluster_is_no_groups():
    assert cluster(np.zeros((0, 4), dtype=np.float32)) == []


# -- redaction ---------------------------------------------------------------------------------------


def test_email_addresses_are_redacted():
    assert redact("Mail jane.doe+billing@example.co.uk about it") == f"Mail {EMAIL} about it"


@pytest.mark.parametrize("key", ["sk-proj-abcDEF1234567890xyz", "sk_live_51HqLyjWDarjtT1zdp7dc", "fd_live_4eC39HqLyjWD",
                                 "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",  # 40 hex digits
                                 "dGhpcyBpcyBhIHNlY3JldCB0b2tlbiAxMjM0NTY3OA==",  # base64
                                 "ghp_abcdefghijklmnopqrstuvwxyz0123", "AKIAIOSFODNN7EXAMPLE"])
def test_tokens_that_look_like_keys_are_redacted(key):
    assert redact(f"my key {key} is rejected") == f"my key {KEY} is rejected"


@pytest.mark.parametrize("card", ["4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111", "3782 822463 10005"])
def test_card_numbers_are_redacted(card):
    assert redact(f"card {card} was declined") == f"card {NUMBER} was declined"


@pytest.mark.parametrize("phone", ["+1 (415) 555-0100", "415.555.0100", "+44 20 7946 0958", "07946 095800"])
def test_phone_numbers_are_redacted(phone):
    assert redact(f"call me on {phone} today") == f"call me on {NUMBER} today"


@pytest.mark.parametrize("text", ["Is 10,000 events per month the limit?", "version 2.4.1 since 2024-05-01",
                                  "error FD-4131 is a 413", "a 256 KB payload in 30 seconds", "IP 192.168.100.200 blocked",
                                  "internationalization-configuration-settings", "is fd_live_ the key prefix?"])
def test_docs_questions_keep_their_numbers_and_words(text):
    assert redact(text) == text


# -- the report --------------------------------------------------------------------------------------


def world(make_log, answers, chunks=(PUBLIC_CHUNK, ACME_CHUNK)):
    embedder = HashEmbedder()
    audit = make_log()
    seed(audit, answers)
    return audit, MemoryIndex(embedder, chunks), embedder


def report(audit, store, embedder, groups=("public", "staff"), since=NOW - 30 * DAY, **options):
    return gap_report(audit, store, embedder, frozenset(groups), since=since, **options)


def test_refused_unverified_and_rated_down_answers_are_grouped_and_answered_ones_left_out(make_log):
    answers = [refusal("how do I set up saml single sign-on", created=NOW - 300, chunks=[PUBLIC_CHUNK]),
               refusal("set up saml single sign-on how", created=NOW - 200, chunks=[PUBLIC_CHUNK], state="unverified"),
               refusal("saml single sign-on set up", created=NOW - 100, chunks=[PUBLIC_CHUNK], state="answered"),
               refusal("what colour is the logo", created=NOW - 50, state="answered")]
    audit, store, embedder = world(make_log, answers)
    audit.add_feedback(answers[2].id, "down", "it did not say which identity providers", frozenset({"public"}))
    found = report(audit, store, embedder)
    assert found.answers == 3 and len(found.gaps) == 1
    gap = found.gaps[0]
    assert (gap.count, gap.refused, gap.unverified, gap.rated_down) == (3, 1, 1, 1)
    assert [e.answer_id for e in gap.examples] == [answers[2].id, answers[1].id, answers[0].id]  # newest first
    assert gap.answer_ids == tuple(e.answer_id for e in gap.examples)
    assert gap.feedback == ("it did not say which identity providers",)
    assert gap.reasons == (("the quote does not address the question closely enough", 2),)
    assert [(s.url, s.answers) for s in gap.sections] == [(PUBLIC_CHUNK.url, 3)]
    assert report_text(found).startswith("3 answers since ") and ": 1 group, largest first" in report_text(found)
    assert "(3 answers, 1 refused, 1 unverified, 1 not helpful)" in report_text(found)


def test_one_answer_is_counted_as_one(make_log):
    audit, store, embedder = world(make_log, [refusal("how do I set up saml", created=NOW - 60, chunks=[PUBLIC_CHUNK])])
    text = report_text(report(audit, store, embedder))
    assert text.startswith("1 answer since ") and "(1 answer, 1 refused)" in text


def test_a_question_refused_because_it_is_in_another_language_says_so_as_its_reason(make_log):
    """A Spanish question is refused because the docs are searched in English, not because a topic is missing."""
    answers = [refusal("¿Cómo configuro el inicio de sesión único con SAML?", created=NOW - 100, chunks=[PUBLIC_CHUNK]),
               refusal("is there a terraform provider", created=NOW - 50, chunks=[PUBLIC_CHUNK],
                       reasons=("the cited section never mentions Terraform",))]
    audit, store, embedder = world(make_log, answers)
    reasons = {g.examples[0].question: g.reasons for g in report(audit, store, embedder).gaps}
    assert reasons["¿Cómo configuro el inicio de sesión único con SAML?"] == (
        ("asked in Spanish: the docs are searched in English", 1),)
    assert reasons["is there a terraform provider"] == (("the cited section never mentions Terraform", 1),)


def test_a_documented_topic_answered_only_with_related_passages_is_apart_from_a_missing_one(make_log):
    """The gap report sent authors to write what exists: a false refusal is not a missing page."""
    answers = [refusal("how do I set up saml single sign-on", created=NOW - 300, chunks=[PUBLIC_CHUNK],
                       state="answered", related=True),
               refusal("set up saml single sign-on how", created=NOW - 250, chunks=[PUBLIC_CHUNK],
                       state="answered", related=True),
               refusal("is there a terraform provider", created=NOW - 200, chunks=[PUBLIC_CHUNK],
                       reasons=("the cited section never mentions Terraform",)),
               refusal("what colour is the logo", created=NOW - 50, chunks=[PUBLIC_CHUNK], state="answered")]
    audit, store, embedder = world(make_log, answers)
    found = {g.label: g for g in report(audit, store, embedder).gaps}
    assert len(found) == 2, found.keys()  # the two SAML questions group; the logo's Answer is not a gap
    covered = [g for g in found.values() if g.covered]
    missing = [g for g in found.values() if not g.covered]
    assert len(covered) == 1 and covered[0].related == 2 and covered[0].count == 2
    assert [s.url for s in covered[0].sections] == [PUBLIC_CHUNK.url]  # the sections found are shown for it
    assert len(missing) == 1 and missing[0].refused == 1 and "terraform" in missing[0].label


def test_related_passages_for_words_no_section_uses_count_as_missing_not_as_covered(make_log):
    """Related passages shown because the visitor's words are in no section found ("teammates") may be a wording
    or a missing topic: the report lists them with what is missing, never as a topic the docs seem to cover."""
    answers = [refusal(q, created=NOW - t, chunks=[PUBLIC_CHUNK], state="answered", related=True,
                       unmentioned=("teammates",), reasons=("none of the sections found mentions “teammates”",))
               for q, t in (("how many teammates can we invite", 300), ("invite more teammates how many", 250))]
    audit, store, embedder = world(make_log, answers)
    [gap] = report(audit, store, embedder).gaps
    assert gap.count == 2 and gap.related == 2 and gap.worded == 2 and not gap.covered
    assert {e.state for e in gap.examples} == {"related"}  # never shown as "answered" beside a gap
    assert gap.reasons == (("none of the sections found mentions “teammates”", 2),)


def test_since_bounds_the_period(make_log):
    answers = [refusal("old question about saml", created=NOW - 10 * DAY), refusal("new question about saml", created=NOW - 60)]
    audit, store, embedder = world(make_log, answers)
    assert [g.label for g in report(audit, store, embedder, since=NOW - DAY).gaps] == ["new question about saml"]
    assert report(audit, store, embedder, since=NOW - 30 * DAY).answers == 2


def test_a_restricted_answer_never_reaches_a_reader_who_cannot_read_what_it_retrieved(make_log):
    secret = refusal("when is the acme cluster patched", created=NOW - 60, chunks=[ACME_CHUNK], groups=["tenant-acme"])
    mixed = refusal("when is the acme cluster patched exactly", created=NOW - 50, chunks=[PUBLIC_CHUNK, ACME_CHUNK],
                    groups=["tenant-acme"])
    public = refusal("when is the cluster patched", created=NOW - 40, chunks=[PUBLIC_CHUNK])
    audit, store, embedder = world(make_log, [secret, mixed, public])
    staff = report(audit, store, embedder, groups=("public", "staff"))
    shown = [i for g in staff.gaps for i in g.answer_ids]
    assert shown == [public.id] and staff.answers == 1
    text = repr(staff)
    assert "acme" not in text.lower() and ACME_CHUNK.url not in text
    both = report(audit, store, embedder, groups=("public", "staff", "tenant-acme"))
    assert sorted(i for g in both.gaps for i in g.answer_ids) == sorted([secret.id, mixed.id, public.id])


def test_a_page_restricted_since_the_answer_takes_the_answer_out_of_the_report(make_log):
    asked = refusal("how do I set up saml", created=NOW - 60, chunks=[PUBLIC_CHUNK])
    restricted = make_chunk("guides/team-and-roles", "single-sign-on", PUBLIC_CHUNK.text, title="Team and roles",
                            heading="Single sign-on", access=("internal",))
    audit, _, embedder = world(make_log, [asked])
    assert report(audit, MemoryIndex(embedder, [restricted]), embedder).answers == 0


def test_questions_labels_reasons_and_feedback_are_redacted(make_log):
    answers = [refusal("my card 4111 1111 1111 1111 is declined, mail jane@example.com", created=NOW - 60,
                       chunks=[PUBLIC_CHUNK], reasons=("the cited section never mentions jane@example.com",)),
               refusal("my card 4111 1111 1111 1112 is declined, mail john@example.com", created=NOW - 30,
                       chunks=[PUBLIC_CHUNK], state="answered")]
    audit, store, embedder = world(make_log, answers)
    audit.add_feedback(answers[1].id, "down", "use key sk-live-abcdefghijklmnop1234 and call +1 415 555 0100",
                       frozenset({"public"}))
    found = report(audit, store, embedder)
    assert len(found.gaps) == 1  # the same question once redacted: one group
    # The report's own timestamps are numbers too (time.time() of 1796411161.4110765 holds "4111"): only they go.
    text = re.sub(r"\b\d{9,}\.\d+\b", "<time>", repr(found))
    for secret in ("4111", "jane@", "john@", "sk-live", "555 0100"):
        assert secret not in text
    gap = found.gaps[0]
    assert gap.label == f"my card {NUMBER} is declined, mail {EMAIL}"
    assert gap.feedback == (f"use key {KEY} and call {NUMBER}",)
    assert gap.reasons == ((f"the cited section never mentions {EMAIL}", 1),)


def test_each_question_is_embedded_once_and_its_vector_kept_in_the_log(make_log):
    answers = [refusal(f"how do I set up saml for team {n}", created=NOW - 60 + n, chunks=[PUBLIC_CHUNK]) for n in range(3)]
    audit, store, embedder = world(make_log, answers)
    first = report(audit, store, embedder)
    calls = embedder.calls
    assert calls >= 1
    second = report(audit, store, embedder)
    assert embedder.calls == calls and second == first  # nothing new was asked: the cached vectors made the same report
    seed(audit, [refusal("how do I set up saml for team 9", created=NOW, chunks=[PUBLIC_CHUNK])])
    report(audit, store, embedder)
    assert embedder.calls == calls + 1
    assert raw(audit, "SELECT COUNT(*) FROM question_vectors") == [(4,)]


def test_a_pruned_answer_takes_its_cached_vector_with_it(make_log):
    audit = make_log(retention=Retention(days=None, answers=1))
    embedder = HashEmbedder()
    seed(audit, [refusal("first saml question", created=NOW - 60), refusal("second saml question", created=NOW - 30)])
    report(audit, MemoryIndex(embedder), embedder)
    audit.prune()
    assert raw(audit, "SELECT COUNT(*) FROM question_vectors") == [(1,)]


def vector_rows(audit):
    return dict(raw(audit, "SELECT answer_id, model FROM question_vectors"))


def indexed_world(make_log, *, site="Ferrydeck Docs", fail=False):
    """A log that stores each gap question's vector as it is written, and the counting embedder it uses."""
    embedder = CountingEmbedder(HashEmbedder(), fail=fail)
    audit = make_log()
    audit.index_gaps(QuestionIndex(embedder, lambda: site))
    return audit, MemoryIndex(embedder.inner, [PUBLIC_CHUNK]), embedder


def test_a_refused_or_unverified_answer_is_written_with_its_vector_and_the_report_then_embeds_nothing(make_log):
    audit, store, embedder = indexed_world(make_log)
    answers = [refusal("How do I set up SAML for Ferrydeck? Mail jane@example.com", created=NOW - 60, chunks=[PUBLIC_CHUNK]),
               refusal("Does Ferrydeck's SAML work with Okta?", created=NOW - 50, chunks=[PUBLIC_CHUNK], state="unverified"),
               refusal("How do I set up SAML single sign-on?", created=NOW - 40, chunks=[PUBLIC_CHUNK], state="answered")]
    seed(audit, answers)
    assert vector_rows(audit) == {answers[0].id: "hash-64", answers[1].id: "hash-64"}  # the answered one is not a gap
    assert embedder.texts == [gap_text(a.question, "Ferrydeck Docs") for a in answers[:2]]  # the report's own text
    assert "jane@" not in embedder.texts[0] and "Ferrydeck" not in embedder.texts[0]
    embedder.texts.clear()
    found = report(audit, store, embedder, site_name="Ferrydeck Docs")
    assert embedder.texts == [] and found.answers == 2 and found.pending == 0


def test_a_thumbs_down_on_an_answered_answer_stores_its_vector_once(make_log):
    audit, store, embedder = indexed_world(make_log)
    answered = refusal("How do I rotate a signing secret?", created=NOW - 60, chunks=[PUBLIC_CHUNK], state="answered")
    seed(audit, [answered])
    assert audit.add_feedback(answered.id, "up", "", frozenset({"public"}))
    assert embedder.texts == [] and vector_rows(audit) == {}
    assert audit.add_feedback(answered.id, "down", "it did not say how", frozenset({"public"}))
    assert embedder.texts == [gap_text(answered.question, "Ferrydeck Docs")] and answered.id in vector_rows(audit)
    assert audit.add_feedback(answered.id, "down", "still not", frozenset({"public"}))
    assert len(embedder.texts) == 1  # its vector is already there
    embedder.texts.clear()
    found = report(audit, store, embedder, site_name="Ferrydeck Docs")
    assert embedder.texts == [] and found.answers == 1 and found.gaps[0].rated_down == 1


def test_a_model_failing_at_write_time_costs_the_report_an_embedding_never_the_answer_or_the_feedback(make_log):
    audit, store, embedder = indexed_world(make_log, fail=True)
    asked = refusal("How do I set up SAML?", created=NOW - 60, chunks=[PUBLIC_CHUNK])
    answered = refusal("How do I rotate a secret?", created=NOW - 50, chunks=[PUBLIC_CHUNK], state="answered")
    seed(audit, [asked, answered])
    assert audit.add_feedback(answered.id, "down", "", frozenset({"public"}))
    assert audit.get(asked.id) is not None and vector_rows(audit) == {}
    embedder.fail = False
    found = report(audit, store, embedder, site_name="Ferrydeck Docs")
    assert found.answers == 2 and sorted(embedder.texts) == sorted(gap_text(a.question, "Ferrydeck Docs")
                                                                   for a in (asked, answered))


def test_a_limit_embeds_the_newest_questions_and_counts_the_other_answers_as_pending(make_log):
    answers = [refusal(f"how do I export the audit log as format {n}", created=NOW - 60 + n, chunks=[PUBLIC_CHUNK])
               for n in range(5)]
    audit, store, embedder = world(make_log, answers)
    first = report(audit, store, embedder, limit=2)
    assert (first.answers, first.pending) == (2, 3)
    assert sorted(i for g in first.gaps for i in g.answer_ids) == sorted(a.id for a in answers[3:])  # the newest
    assert report_json(first)["not_yet_grouped"] == 3 and "3 questions not yet grouped" in report_text(first)
    assert (report(audit, store, embedder, limit=2).pending, report(audit, store, embedder).pending) == (1, 0)
    assert report_json(report(audit, store, embedder))["not_yet_grouped"] == 0


def test_the_site_name_and_scores_are_not_part_of_what_is_grouped():
    assert topic_text("Is there a Ferrydeck mobile app? Ferrydeck's docs say no", "Ferrydeck Docs") == \
        "Is there a mobile app? say no"
    assert reason_text("not an answer: the quote does not address the question closely enough (score 0.31 < 0.45)") == \
        "the quote does not address the question closely enough"
    assert reason_text("not an answer: none of the sections found mentions “Terraform” (69% of what the question "
                       "asks about)") == "none of the sections found mentions “Terraform”"
    assert reason_text("claim 2 does not answer the question: the quote itself names nothing the question asks about") == \
        "the quote itself names nothing the question asks about"


def test_since_reads_a_date_or_a_time_and_names_the_format_otherwise():
    assert parse_since("2025-06-01", NOW, 30) == 1748736000.0
    assert parse_since("", NOW, 30) == NOW - 30 * DAY
    with pytest.raises(ValueError, match="a date like 2025-06-01"):
        parse_since("last week", NOW, 30)


# -- GET /gaps ---------------------------------------------------------------------------------------


def client(tmp_path, answers, **settings):
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [PUBLIC_CHUNK, ACME_CHUNK])
    from answer.pipeline import Answerer

    audit = SQLiteAnswerLog(tmp_path / "answers.sqlite3")
    seed(audit, answers)
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(), audit=audit)
    return TestClient(create_app(Settings(data_dir=tmp_path, **settings), answerer=answerer, store=store))


def test_gaps_is_refused_to_non_staff_exactly_like_the_audit_view(tmp_path):
    closed = client(tmp_path, [refusal("how do I set up saml", created=NOW - 60)])
    for path in ("/gaps", "/answers"):  # no identity header configured: no one is staff, whatever they send
        assert closed.get(path, headers={"X-Groups": "staff"}).status_code == 403
    staffed = client(tmp_path, [], identity_header="X-Groups")
    refused, audit_refused = (staffed.get(p, headers={"X-Groups": "support"}) for p in ("/gaps", "/answers"))
    assert refused.status_code == audit_refused.status_code == 403
    assert "for support staff" in refused.text and "how do I set up saml" not in refused.text


def test_staff_see_groups_with_examples_reasons_sections_and_links_to_the_audit_view(tmp_path):
    answers = [refusal("how do I set up saml single sign-on", created=NOW - 300, chunks=[PUBLIC_CHUNK]),
               refusal("set up saml single sign-on how", created=NOW - 200, chunks=[PUBLIC_CHUNK]),
               refusal("when is the acme cluster patched", created=NOW - 100, chunks=[ACME_CHUNK], groups=["tenant-acme"])]
    staff = client(tmp_path, answers, identity_header="X-Groups")
    page = staff.get("/gaps", headers={"X-Groups": "staff"})
    assert page.status_code == 200
    assert f'href="/answers?ids={answers[1].id},{answers[0].id}"' in page.text
    assert f'href="/answers/{answers[0].id}"' in page.text and f'href="{PUBLIC_CHUNK.url}"' in page.text
    assert "does not address the question closely enough" in page.text
    assert "acme" not in page.text.lower()
    assert 'href="/gaps"' in staff.get("/answers", headers={"X-Groups": "staff"}).text  # linked from the audit view
    listed = staff.get(f"/answers?ids={answers[1].id},{answers[0].id}", headers={"X-Groups": "staff"}).text
    assert f"/answers/{answers[0].id}" in listed and f"/answers/{answers[1].id}" in listed
    assert staff.get(f"/answers?ids={answers[2].id}", headers={"X-Groups": "staff"}).text.count("/answers/" + answers[2].id) == 0
    assert staff.get("/gaps?since=yesterday", headers={"X-Groups": "staff"}).status_code == 400


def test_gaps_embeds_at_most_its_limit_per_visit_and_says_how_many_questions_wait(tmp_path, monkeypatch):
    import web.staff

    monkeypatch.setattr(web.staff, "GAP_EMBED_PER_REQUEST", 2)
    answers = [refusal(f"how do I export the audit log as format {n}", created=NOW - 60 + n, chunks=[PUBLIC_CHUNK])
               for n in range(5)]  # written before the server ran: none has its vector yet
    staff = client(tmp_path, answers, identity_header="X-Groups")
    pages = [staff.get("/gaps", headers={"X-Groups": "staff"}).text for _ in range(3)]
    assert "3 questions not yet grouped" in pages[0] and "python -m answer gaps" in pages[0]
    assert "2 answers" in pages[0] and answers[4].id in pages[0] and answers[0].id not in pages[0]
    assert "1 question not yet grouped" in pages[1]
    assert 'id="gaps-pending"' not in pages[2] and "5 answers" in pages[2]


def test_the_web_app_writes_the_vector_of_a_refused_answer_and_of_a_thumbs_down_with_them(tmp_path):
    answered = refusal("How do I rotate a signing secret?", created=NOW - 60, chunks=[PUBLIC_CHUNK], state="answered")
    app = client(tmp_path, [answered], identity_header="X-Groups")
    asked = app.post("/api/ask", json={"question": "Is there a Terraform provider?"}).json()
    assert asked["state"] in ("refused", "unverified")
    audit = SQLiteAnswerLog(tmp_path / "answers.sqlite3")
    assert set(vector_rows(audit)) == {asked["answer_id"]}
    assert app.post(f"/api/answers/{answered.id}/feedback", json={"rating": "down", "reason": ""}).status_code == 201
    assert set(vector_rows(audit)) == {asked["answer_id"], answered.id}


def test_the_csv_never_hands_a_spreadsheet_a_formula_a_visitor_typed():
    """Cells starting with =, +, -, @, a tab or a carriage return ran as formulas when the CSV was opened (N4)."""
    import csv
    import io

    from answer.reports.gap_export import report_csv
    from answer.reports.gaps import Example, Gap, GapReport

    typed = ["=HYPERLINK(\"http://evil.example\",\"click\")", "+1+2", "-2+3", "@SUM(A1)", "\tx", "\ry", "plain?"]
    gaps = tuple(Gap(label=t, count=1, refused=1, unverified=0, rated_down=0,
                     examples=(Example(f"a{i}", t, 0.0, "refused", 0),), reasons=((t, 1),), feedback=(t,),
                     sections=(), answer_ids=(f"a{i}",)) for i, t in enumerate(typed))
    rows = list(csv.reader(io.StringIO(report_csv(GapReport(since=0.0, answers=len(typed), gaps=gaps)), newline="")))[1:]
    for row, text in zip(rows, typed, strict=True):
        label, example, feedback = row[6], row[7], row[9]
        if text == "plain?":
            assert (label, example, feedback) == (text, text, text)
        else:
            assert label == example == feedback == "'" + text and not row[8].startswith(("=", "+", "-", "@"))


def test_the_page_shows_topics_the_docs_seem_to_cover_apart_with_their_sections(tmp_path):
    answers = [refusal("how do I set up saml single sign-on", created=NOW - 300, chunks=[PUBLIC_CHUNK],
                       state="answered", related=True),
               refusal("is there a terraform provider", created=NOW - 200, chunks=[PUBLIC_CHUNK],
                       reasons=("the cited section never mentions Terraform",))]
    page = client(tmp_path, answers, identity_header="X-Groups").get("/gaps", headers={"X-Groups": "staff"}).text
    covered, missing = page.split('id="covered"', 1)[1].split('id="missing"', 1)
    assert "saml single sign-on" in covered and f'href="{PUBLIC_CHUNK.url}"' in covered and "terraform" not in covered
    assert "terraform" in missing and "saml" not in missing
