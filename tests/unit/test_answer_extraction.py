"""Answer extraction and the answer gate, without a model: spans, question analysis, the gate's reasons."""

from __future__ import annotations

import pytest

from answer.contract.draft import Draft, DraftClaim, Quote
from answer.contract.spans import ITEM, ROW, is_table_row, table_header, units
from answer.contract.verify import verify
from answer.gate import AnswerGate, Thresholds, Weights
from answer.gate.features import AnswerExtractor, Scored, Span, spans_of, type_fit
from answer.gate.question import DEFAULT, HOWTO, NAME, OPEN, QUANTITY, REASON, YESNO, analyze
from answer.gate.stage import names, supports_in_order
from answer.gate.vocabulary import Vocabulary
from ingest.text import stem
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import make_chunk

TABLE = "Plan | Requests per second | Burst capacity\nFree | 10 | 20\nGrowth | 200 | 400"


def test_sentences_survive_abbreviations_versions_and_code_spans():
    text = ("Some proxies need cache headers (e.g. `Cache-Control: no-store`) to pass. "
            "Version 2.4 raised the limit. The `t. X` field is signed. `t` is set per attempt.")
    assert [u.text for u in units(text)] == [
        "Some proxies need cache headers (e.g. `Cache-Control: no-store`) to pass.",
        "Version 2.4 raised the limit.", "The `t. X` field is signed.", "`t` is set per attempt."]


def test_a_table_header_is_context_never_a_unit():
    found = units(TABLE)
    assert [(u.kind, u.text) for u in found] == [(ROW, "Free | 10 | 20"), (ROW, "Growth | 200 | 400")]
    assert all(u.header == "Plan | Requests per second | Burst capacity" for u in found)
    assert table_header(TABLE, TABLE.index("Growth")) == found[0].header and table_header(TABLE, 0) == ""
    assert is_table_row(TABLE, "Free | 10 | 20") and not is_table_row(TABLE, "Free | 10")


def test_list_items_and_code_blocks():
    text = "Steps:\n\n- Install the CLI with `brew`.\n- Run `ferry login` in a shell.\n\n```sh\nferry login. Now\n```"
    assert [(u.kind, u.text) for u in units(text)] == [
        (ITEM, "Install the CLI with `brew`."), (ITEM, "Run `ferry login` in a shell.")]


def test_spans_never_cross_an_item_or_a_row_but_join_sentences():
    chunk = make_chunk("a/b", "c", "First sentence is here. Second one follows it. Third ends it.\n\n- Item one is long.\n- Item two is long.")
    hit = renumber("q", Viewer.anonymous(), [(chunk, 1.0)]).hits[0]
    spans = [s.text for s in spans_of(hit, 0)]
    assert "First sentence is here. Second one follows it. Third ends it." in spans
    assert not any("Item one" in s and "Item two" in s for s in spans)


@pytest.mark.parametrize("question, kind", [
    ("How long are idempotency keys kept?", QUANTITY),
    ("By when does a customer have to claim an SLA credit?", QUANTITY),  # a deadline is a stated time
    ("What request timeout do the SDKs use out of the box?", DEFAULT),
    ("How do I forward webhooks to localhost?", HOWTO),
    ("We have an EU VAT number. Will you add VAT to our invoices?", YESNO),
    ("Why do I sometimes get the same webhook twice?", REASON),
    # a condition or a time before what is asked: still a yes/no question
    ("When someone leaves the company, do the API keys they made stop working?", YESNO),
    ("If I cancel halfway through the month, do I get the unused part back?", YESNO),
    ("If an endpoint fails, how many times is it retried?", QUANTITY),
    ("If my server is slow, what happens to the delivery?", OPEN),
])
def test_question_kinds_read_the_sentence_that_asks(question, kind):
    assert analyze(question).kind == kind


@pytest.mark.parametrize(("question", "kind", "named"), [
    ("Which environment variable holds the record key?", NAME, "variable"),
    ("What flag makes cypress run use a specific browser?", NAME, "flag"),
    ("which signature header do receivers need to check?", NAME, "header"),
    ("Which file do I configure the sidebar in?", NAME, "file"),
    ("What command creates a new project?", NAME, "command"),
    # the name of the thing is not what these ask
    ("What do I put in the config file?", OPEN, ""),
    ("What file size can I upload?", OPEN, ""),
    ("Which header component shows the logo?", OPEN, ""),
    ("How do I set an environment variable?", HOWTO, ""),
    ("Is there a flag to skip the install?", YESNO, ""),
])
def test_a_question_asking_which_flag_or_file_asks_for_a_name_in_code(question, kind, named):
    assert (analyze(question).kind, analyze(question).named) == (kind, named)


@pytest.mark.parametrize(("named", "text", "fit"), [
    ("variable", "You can set the record key as the environment variable `CYPRESS_RECORD_KEY`.", 1),
    ("variable", "If you don't want to set an environment variable, pass the key inline instead.", -1),
    ("flag", "Choose one with the `--browser` flag.", 1),
    ("flag", "Video recording is off unless you set `video` to `true`.", -1),
    ("file", "Use the `starlight.sidebar` property in `astro.config.mjs`.", 1),
    ("file", "Put secrets in a `.env` file at the project root.", 1),
    ("file", "Starlight generates a sidebar from your folders.", -1),
    ("header", "Every delivery carries a `Ferrydeck-Signature` header.", 1),
    ("header", "Receivers check the `x-ferry-signature` header.", 1),
    ("header", "Receivers must check the signature.", -1),
    ("command", "Run the following command:\n\n```sh\nnpm run dev\n```", 1),
    ("command", "Start the development server from your project.", -1),
])
def test_a_span_naming_that_sort_of_name_fits_the_question(named, text, fit):
    from answer.gate.shape import shape_fit

    assert shape_fit(NAME, text, named=named) == fit


def test_which_environment_variable_is_answered_by_the_sentence_naming_one():
    """"Which environment variable holds the record key?" was answered "If you don't want to set an environment
    variable, pass the key inline with the `--key` flag instead.", the variable itself one quote below."""
    chunk = make_chunk("cloud/record", "key", "If you don't want to set an environment variable, pass the record key "
                       "inline with the `--key` flag instead. You can set the record key as the environment variable "
                       "`CYPRESS_RECORD_KEY`.", title="Record key")
    rset = renumber("q", Viewer.anonymous(), [(chunk, 1.0)])
    ranked = AnswerExtractor().rank(analyze("Which environment variable holds the record key?"), rset)
    assert ranked[0].span.text.endswith("`CYPRESS_RECORD_KEY`."), [s.span.text for s in ranked]


@pytest.mark.parametrize(("question", "looking"), [
    ("Where do I find my API key?", "find"),
    ("Where can I see failed deliveries?", "see"),
    ("How do I look up a delivery by its event ID?", "look"),
])
def test_the_verb_of_looking_for_something_is_not_what_a_question_is_about(question, looking):
    """"Where do I find my API key?" was refused: "find", rare on docs pages, weighed 74 % of the focus, and no
    section retrieved for the key mentions it."""
    read = analyze(question)
    assert stem(looking) not in read.focus and stem(looking) not in read.terms, read.focus


def test_the_interrogative_and_contractions_are_not_the_focus():
    question = analyze("How many times does Ferrydeck retry a failed delivery? We're stuck.", ignore=frozenset({"ferrydeck"}))
    assert stem("times") not in question.focus and "re" not in question.focus and {stem("retry"), stem("fail")} <= question.focus
    assert analyze("The ferry command exited with status 3.").identifiers == {"3"}
    assert analyze("Does --dry-run work in v1.9?").versions == {"1.9"}


@pytest.mark.parametrize(("question", "versions"), [
    ("What changed from 1.9 to 2.4.", {"1.9", "2.4"}),
    ("Until when will the old v1 API accept events?", {"1"}),
    # a piece of an address or of a longer number names no release of the docs
    ("Can I point an endpoint at a server on our office network, like 192.168.1.20?", set()),
    ("Does the 13.6.0 binary still ship Electron?", set()),
])
def test_a_release_is_named_on_its_own_never_inside_an_address(question, versions):
    assert analyze(question).versions == versions


@pytest.mark.parametrize(("question", "identifiers"), [
    ("Is the --retries option of endpoints create going away?", {"--retries"}),  # a flag with no hyphen inside
    ("One CI build calls cypress run --record twice.", {"--record"}),
    ("Does endpoints create --dry-run check anything?", {"--dry-run"}),
    ("Can I re-send an e-mail?", set()),  # hyphened words are words
    # "e.g." is prose: a span reading "(e.g. `15.16.0`)" was scored as naming what the question names
    ("How do I install the npm package without the binary, e.g. for a Docker image?", set()),
    ("Will a file named _draft-notes.md in src/content/docs become a page?", {"_draft-notes.md", "src/content/docs"}),
])
def test_a_command_line_flag_is_a_name_the_question_gives(question, identifiers):
    assert analyze(question).identifiers == identifiers


def test_an_abbreviation_of_prose_is_not_what_the_question_is_about():
    question = analyze("How do I install the npm package without the binary, e.g. for a Docker image, i.e. offline?")
    assert not any("." in term for term in question.focus), question.focus


def test_irregular_past_forms_meet_their_verb_and_a_light_verb_is_not_the_focus():
    from ingest.text import key_terms

    question = analyze("How many times could a delivery be resent by hand from the dashboard?")
    assert question.focus & key_terms("Retry it manually from the dashboard with Resend.") >= {"resend", "dashboard"}
    assert key_terms("We paid and sent it") == key_terms("we pay and send it")
    assert "go" not in analyze("How quickly does the first delivery attempt go out?").focus


def test_names_are_proper_nouns_and_acronyms_not_sentence_starts():
    assert names("Is there a Terraform provider? Does it use GraphQL or AWS SQS?") == ["Terraform", "GraphQL", "AWS", "SQS"]
    assert names("Can I use it?") == []


def test_a_quantity_question_wants_a_stated_quantity_and_a_question_never_answers():
    question = analyze("How long are keys kept?")
    hit = renumber("q", Viewer.anonymous(), [(make_chunk("k", "keys", "Keys are kept for 24 hours. Keys are kept safely. "
                                                           "How long are keys kept?"), 1.0)]).hits[0]
    fits = {s.text: type_fit(question, s) for s in spans_of(hit, 0)}
    assert fits["Keys are kept for 24 hours."] == 1 and fits["Keys are kept safely."] == -1
    assert "How long are keys kept?" not in fits  # a sentence that asks is never a candidate (says_nothing_alone)
    from answer.gate.shape import shape_fit
    assert shape_fit(question.kind, "How long are keys kept?") == -1  # nor the shape of an answer, quoted by a model


def test_round_the_clock_is_not_an_amount():
    question = analyze("Can support look at a customer's dashboard as them, and for how long?")
    hit = renumber("q", Viewer.anonymous(), [(make_chunk("s", "support", "Enterprise customers can page 24/7 support. "
                                                           "Sessions last 30 minutes, 24/7."), 1.0)]).hits[0]
    fits = {s.text: type_fit(question, s) for s in spans_of(hit, 0)}
    assert fits["Enterprise customers can page 24/7 support."] == -1
    assert fits["Sessions last 30 minutes, 24/7."] == 1


def _judge(*texts: str) -> AnswerGate:
    vocabulary = Vocabulary.from_texts(texts)
    return AnswerGate(AnswerExtractor(vocabulary=lambda: vocabulary), Thresholds(floor=0.5, support_floor=0.4))


def _rset(question: str, *chunks):  # noqa: ANN002
    return renumber(question, Viewer.anonymous(), [(c, 1.0) for c in chunks])


def test_the_gate_refuses_a_thing_the_docs_never_mention_and_says_so():
    sdk = make_chunk("sdk", "sdks", "Official SDKs exist for Python, Node and Go. Each SDK is a provider of retries.",
                     title="SDKs", heading="Official SDKs")
    judge = _judge(sdk.text)
    question = judge.question("Is there a Terraform provider?")
    chosen, reasons = judge.pick(question, _rset(question.text, sdk))
    assert not chosen and any("never mentions Terraform" in r for r in reasons)


def test_the_gate_keeps_the_direct_answer_first_and_drops_beside_the_point_support():
    limits = make_chunk("api/rate-limits", "limits-per-plan", TABLE, title="Rate limits", heading="Limits per plan")
    judge = _judge(limits.text)
    question = judge.question("What is the rate limit on the Growth plan?")
    chosen, _ = judge.pick(question, _rset(question.text, limits))
    assert [s.span.text for s in chosen] == ["Growth | 200 | 400"]  # "Free | 10 | 20" names nothing asked about


def test_the_pick_tries_supports_from_the_direct_answers_own_section_first():
    replay = make_chunk("guides/replay", "backfill", "A new endpoint does not receive events from before it existed.\n\n"
                        "To backfill a new endpoint, create a replay job for past events.", title="Replay", heading="Backfilling")
    listing = make_chunk("endpoints/list", "list", "The dashboard lists every endpoint.\n\n"
                         "Each new endpoint receives retries of past events.", title="Endpoints", heading="Endpoints")
    question_text = "Does a new endpoint receive past events from before it existed?"
    rset = _rset(question_text, replay, listing)

    def picked(continues: float) -> list[str]:
        vocabulary = Vocabulary.from_texts([replay.text, listing.text])
        extractor = AnswerExtractor(vocabulary=lambda: vocabulary, weights=Weights(continues=continues))
        judge = AnswerGate(extractor, Thresholds(floor=0.5, support_floor=0.4, support_within=2.0))
        chosen, _ = judge.pick(judge.question(question_text), rset, max_spans=2)
        return [s.span.text for s in chosen]

    direct = "A new endpoint does not receive events from before it existed."
    assert picked(0.0) == [direct, "Each new endpoint receives retries of past events."]  # scores higher, says less
    assert picked(0.5) == [direct, "To backfill a new endpoint, create a replay job for past events."]


def _scored(handle: str, start: int, score: float) -> Scored:
    span = Span(handle, int(handle[1:]) - 1, start, start + 10, f"{handle} at {start}", "sentence", "", "Page", "", lead=False)
    return Scored(span, score)


def test_supports_of_a_leads_section_go_first_only_when_they_nearly_tie():
    lead, near, other, far = _scored("c1", 0, 1.5), _scored("c1", 20, 1.0), _scored("c2", 0, 1.05), _scored("c1", 40, 0.8)
    continues = Weights().continues
    ordered = supports_in_order([lead, other, near, far], [lead], continues)
    assert ordered == [lead, near, other, far]  # within `continues` of another section's span: the lead's section first
    assert supports_in_order([lead, other, near, far], [lead], 0.0) == [lead, other, near, far]
    # a part's answer counts as a lead too: its section is lifted the same way
    assert supports_in_order([lead, other, near], [lead, _scored("c2", 30, 1.2)], continues) == [lead, other, near]


def test_verified_but_off_topic_claims_are_set_aside_with_reasons():
    chunk = make_chunk("billing/refunds", "refund-policy", "Refunds are available within 14 days of the charge. "
                       "Support answers email within one business day.", title="Refunds", heading="Refund policy")
    judge = _judge(chunk.text)
    rset = _rset("Within how many days are refunds available?", chunk)
    draft = Draft(False, (DraftClaim((Quote("c1", "Support answers email within one business day."),), "Support answers email."),
                          DraftClaim((Quote("c1", "Refunds are available within 14 days of the charge."),),
                                     "Refunds are available within 14 days of the charge.")))
    verification = verify(draft, rset, rset.viewer)
    judged = judge.judge(rset.question, verification.shown, rset)
    assert judged.answered and [c.role for c in judged.claims] == ["direct"]
    assert "14 days" in judged.claims[0].citations[0].quote
    assert judged.set_aside and "claim 1 does not answer the question" in judged.set_aside[0].text
    assert judged.set_aside[0].claim == 1  # the claim it is about is a field, not only words in the message


def test_a_stray_backtick_never_starts_a_quote_and_a_whole_short_row_may_be_quoted():
    chunk = make_chunk("api/sig", "tolerance", "Reject requests older than 300 seconds. `t` is set when each attempt is made.\n\n"
                       "Plan | Rules\nFree | 3")
    rset = _rset("q", chunk)
    draft = Draft(False, (DraftClaim((Quote("c1", "t` is set when each attempt is made."),), "x"),
                          DraftClaim((Quote("c1", "Free | 3"),), "Free | 3"),
                          DraftClaim((Quote("c1", "Free |"),), "Free")))
    checks = verify(draft, rset, rset.viewer)
    quotes = [c.citations[0].quote for c in checks.claims]
    assert quotes == ["`t` is set when each attempt is made.", "Free | 3"]
    assert checks.claims[1].citations[0].table_header == "Plan | Rules"
    assert [c.kind for c in checks.checks] == ["verified", "verified", "short"]


@pytest.mark.parametrize("family", [("delete", "deleted", "deletes", "deletion"), ("expire", "expires", "expiration"),
                                    ("configure", "configuration", "configured"), ("retry", "retries", "retried"),
                                    ("retain", "retained", "retention"), ("send", "sent", "sends"),
                                    ("subscribe", "subscription"), ("sdk", "sdks"), ("api", "apis")])
def test_the_answer_side_stem_joins_a_word_family(family):
    assert len({stem(word) for word in family}) == 1


def test_a_question_in_another_form_of_the_docs_word_is_answered():
    text = "Events are kept for the retention period of your plan: 3 days on Free and 30 days on Growth."
    judge = AnswerGate(AnswerExtractor())
    rset = renumber("q", Viewer.anonymous(), [(make_chunk("api/events", "retention", text, title="Events"), 1.0)])
    chosen, reasons = judge.pick(judge.question("How long are events retained?"), rset)
    assert [s.span.text for s in chosen] == [text], reasons
