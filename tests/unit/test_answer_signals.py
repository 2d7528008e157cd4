"""Signals of a sentence's own form that carry across sites: what it introduces, what it leans on, where it points.

Each test is one defect seen on a site the answerer was never tuned on, shown
on a small chunk: the command a sentence announces, the sentence an
"On other plans, …" answers, a "See …" pointer, version history beside the
current fact, and two sources stating different values.
"""

from __future__ import annotations

import pytest

from answer.contract.draft import Draft, DraftClaim, Quote
from answer.contract.spans import MAX_INTRODUCED_CHARS, introduced_block, units
from answer.contract.verify import text_fragment, verify
from answer.gate import AnswerGate, Thresholds
from answer.gate.conflicts import amounts, disagree
from answer.gate.features import AnswerExtractor, coverage, spans_of
from answer.gate.question import analyze
from ingest.context_sentences import asks_history, is_history, is_navigation
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import make_chunk

HOWTO = ("Create a new project with the following command:\n\n```bash\nnpm create ferry@latest\n```\n\n"
         "The wizard asks for a workspace name.")


def hit_of(text: str, slug: str = "a/b", anchor: str = "c", **extra):  # noqa: ANN001, ANN003, ANN201
    return renumber("q", Viewer.anonymous(), [(make_chunk(slug, anchor, text, **extra), 1.0)]).hits[0]


def test_a_sentence_ending_in_a_colon_is_quoted_with_the_command_it_introduces():
    found = units(HOWTO)
    assert introduced_block(HOWTO, found[0]) is not None and introduced_block(HOWTO, found[1]) is None
    spans = [s for s in spans_of(hit_of(HOWTO), 0) if s.text.startswith("Create")]
    assert [s.text for s in spans] == [HOWTO[: HOWTO.index("```\n\n") + 3]]  # never the dangling sentence alone
    assert spans[0].introduces == "code" and "npm create ferry@latest" in spans[0].text


def test_a_command_quote_verifies_and_its_link_skips_the_fence_line():
    hit = hit_of(HOWTO)
    quote = [s for s in spans_of(hit, 0) if s.introduces][0].text
    rset = renumber("How do I create a project?", Viewer.anonymous(), [(hit.chunk, 1.0)])
    result = verify(Draft(False, (DraftClaim((Quote("c1", quote),), quote),)), rset, Viewer.anonymous())
    shown = [c.quote for claim in result.shown for c in claim.citations]
    assert shown == [quote] and shown[0].endswith("npm create ferry@latest\n```")  # the block whole, fences included
    assert "bash" not in text_fragment(quote) and "latest" in text_fragment(quote)


def test_an_over_long_block_is_left_on_the_page():
    text = "Add this configuration:\n\n```js\n" + "x = 1;\n" * 200 + "```"
    assert introduced_block(text, units(text)[0]) is None


def test_a_sentence_that_leans_back_is_quoted_with_the_one_before():
    text = ("Enterprise customers can negotiate higher limits on a dedicated cluster. "
            "On other plans, hard limits cannot be raised individually.")
    spans = [s.text for s in spans_of(hit_of(text), 0)]
    assert "On other plans, hard limits cannot be raised individually." not in spans
    assert text in spans


@pytest.mark.parametrize("sentence", ["See Pagination.", "For more details, read the deployment guide.",
                                      "Learn more about adapters in the reference.", "Refer to the CLI reference.",
                                      "For a task-oriented walkthrough with SDK examples, see Signing and verifying.",
                                      "For Python, see the SDK page."])
def test_navigation_is_never_a_candidate(sentence):
    assert is_navigation(sentence)
    text = f"Pages are cached for 60 seconds. {sentence}"
    assert all(sentence not in s.text for s in spans_of(hit_of(text), 0))


@pytest.mark.parametrize("sentence", ["For retries, Ferrydeck waits 5 minutes between attempts.",
                                      "For Python, see-through logos are supported.",
                                      "For large files, read the data in chunks of 1 MB.",
                                      "For the EU region, read replicas are hosted in Frankfurt.",
                                      "For each endpoint, visit counts are reset daily."])
def test_a_statement_opening_with_for_is_no_pointer(sentence):
    assert not is_navigation(sentence)


@pytest.mark.parametrize("item", ["How to enable SSO for your organization",
                                  "What the Jira integration does and when to use it", "**Why replay is safe**"])
def test_an_outline_line_that_only_names_a_topic_is_never_a_candidate(item):
    """A "What you'll learn" list names the page's topics; quoting one as a claim states nothing."""
    assert is_navigation(item)
    text = f"Pages are cached for 60 seconds.\n\n- {item}\n- Caching is per region."
    spans = [s.text for s in spans_of(hit_of(text), 0)]
    assert all(item not in s for s in spans) and "Caching is per region." in spans, spans


def test_a_question_or_an_announcement_whose_block_is_elsewhere_is_never_a_candidate():
    """An FAQ's own question claims nothing; "…in this order:" ending a part shows a colon and nothing after it."""
    text = ("Test results are counted in three tiers. How can I see which tier a run used? "
            "Cloud counts test results across three tiers, consumed in this order:")
    quoted = [s.text for s in spans_of(hit_of(text), 0)]
    assert "Test results are counted in three tiers." in quoted
    assert not any(q.rstrip().endswith(("?", ":")) for q in quoted), quoted
    held = text + "\n\n1. Included results.\n2. Bundled results."  # the list it announces is here: quoted with it
    assert any(q.endswith("2. Bundled results.") and "consumed in this order:" in q for q in
               (s.text for s in spans_of(hit_of(held), 0)))


def test_an_announcement_whose_block_is_not_quoted_with_it_is_never_a_candidate():
    """A block too long to quote stays on the page, and a picture is not in chunk text: "The configuration above
    generates the following sidebar:" was shown as support with nothing after its colon."""
    config = "\n".join(f"  option_{i}: value_{i}" for i in range(40))
    assert len(config) > MAX_INTRODUCED_CHARS
    text = (f"Groups are expanded by default. Add the following to your config file:\n\n```yaml\n{config}\n```\n\n"
            "The configuration above generates the following sidebar:\n\nSet `collapsed` to hide a group.")
    quoted = [s.text for s in spans_of(hit_of(text), 0)]
    assert "Groups are expanded by default." in quoted and "Set `collapsed` to hide a group." in quoted
    assert not any(q.rstrip().endswith(":") for q in quoted), quoted


def test_a_table_row_whose_description_sends_the_reader_elsewhere_is_never_a_candidate():
    """Asked as a visitor would: "How do I paginate through deliveries?" was answered, with the badge, by the row
    "`limit`, `cursor` |  | See Pagination." of a parameters table."""
    text = ("Parameter | Type | Description\n--- | --- | ---\n`status` | string | `failed`, `pending` or `succeeded`.\n"
            "`limit`, `cursor` |  | See Pagination.\n`since` | time | Response time; see Timeouts.\n"
            "`region` | string | Where your data is stored, `eu` or `us`\n`timeout` | int | See Timeouts. Defaults to 30.\n"
            "`plan` | Starter | See Upgrading.")
    rows = [s.text for s in spans_of(hit_of(text), 0)]
    assert not any("See Pagination" in r for r in rows)
    for said in ("`status`", "`since`", "`region`", "`timeout`", "`plan`"):  # each says something of its own
        assert any(r.startswith(said) for r in rows), said


@pytest.mark.parametrize("sentence", ["When you run tests, Cypress records them.", "What happens next depends on the plan.",
                                      "How long a key lives is set per workspace."])
def test_a_statement_that_starts_with_a_question_word_is_still_a_candidate(sentence):
    assert not is_navigation(sentence)


def test_history_is_context_unless_the_question_asks_about_changes():
    assert is_history("In v2.x, the dev server ran on port 3000.", "Configuration")
    assert is_history("The server now runs on port 4321.", "Changelog 3.0")  # a changelog's sentences
    assert not is_history("Cypress supports Node.js 20 and 22.", "Migration guide")  # states how things are now
    assert not is_history("The dev server runs on port 4321.", "Configuration")
    assert not is_history("By default a delivery gets up to 16 attempts.", "Retries")  # an amount, not a version
    assert not is_history("A retry waits in 2.5 seconds.", "Retries")
    assert asks_history("Which fields do I rename when moving from v1 to v2?")
    assert asks_history("What port did the dev server use in v2?") and not asks_history("What port does the dev server use?")
    rset = renumber("q", Viewer.anonymous(), [
        (make_chunk("guide/config", "port", "In v2.x, the dev server ran on port 3000.", title="Dev server"), 1.0),
        (make_chunk("guide/config", "port-now", "The dev server runs on port 4321.", title="Dev server"), 0.9)])
    judge = AnswerGate(AnswerExtractor())
    top = judge.extractor.rank(judge.question("Which port does the dev server run on?"), rset)[0]
    assert top.span.text == "The dev server runs on port 4321." and "history" not in top.features


def test_amounts_are_compared_in_one_base():
    assert [(a.family, a.value, a.bound) for a in amounts("up to 2 minutes, then 30 s")] == [("time", 120, True),
                                                                                           ("time", 30, False)]


@pytest.mark.parametrize("a, b, expected", [
    ("The default request timeout of the SDKs is 5 seconds.", "The SDKs use a default request timeout of 30 seconds.", True),
    ("Ferrydeck retries a failed delivery up to 8 times.", "Ferrydeck retries a failed delivery up to 12 times.", True),
    ("The SDK timeout is 30 s.", "The SDK timeout is 30 seconds.", False),  # the same value in other words
    ("The Starter plan allows 10 requests per second.", "The Growth plan allows 200 requests per second.", False),
    ("Monthly plans are refunded within 14 days.", "Annual plans are refunded within 30 days.", False),
    ("Payloads may be up to 256 KB.", "The default batch size is 100 KB.", False),  # a limit is not a default
])
def test_two_quotes_disagree_only_on_different_values_for_the_same_thing(a, b, expected):
    assert disagree(a, b) is expected


def test_a_planted_contradiction_is_shown_beside_the_answer_and_flagged():
    real = make_chunk("sdk/config", "timeouts", "The default request timeout of the SDKs is 30 seconds.", title="SDK configuration")
    planted = make_chunk("blog/tips", "timeouts", "The default request timeout of the SDKs is 5 seconds.", title="Tips")
    rset = renumber("What is the default request timeout of the SDKs?", Viewer.anonymous(), [(real, 1.0), (planted, 0.9)])
    judge = AnswerGate(AnswerExtractor())
    chosen, _ = judge.pick(judge.question(rset.question), rset)
    assert {s.span.text for s in chosen} == {real.text, planted.text}
    draft = Draft(False, tuple(DraftClaim((Quote(s.span.handle, s.span.text),), s.span.text) for s in chosen))
    verified = verify(draft, rset, Viewer.anonymous())
    judgement = judge.judge(rset.question, verified.shown, rset)
    assert judgement.disagree and len(judgement.claims) == 2


def test_a_section_headed_by_the_default_states_it_in_its_lead():
    lead = make_chunk("guides/prefetch", "default-strategy", "Links are prefetched when they are hovered.",
                      title="Prefetch", heading="Default strategy")
    other = make_chunk("guides/prefetch", "strategies", "The viewport strategy prefetches links as they scroll into view.",
                       title="Prefetch", heading="Strategies")
    rset = renumber("q", Viewer.anonymous(), [(other, 1.0), (lead, 0.9)])
    judge = AnswerGate(AnswerExtractor())
    scored = {s.span.text: s for s in judge.extractor.rank(judge.question("What is the default prefetch strategy?"), rset)}
    assert scored[lead.text].features.get("type", 0) > 0 and "type" not in scored[other.text].features


def test_sources_that_disagree_are_shown_side_by_side_without_a_verified_badge():
    from starlette.testclient import TestClient

    from answer.generate import ExtractiveGenerator
    from answer.pipeline import Answerer
    from retrieval.search import DenseRetriever
    from tests.fakes import HashEmbedder
    from tests.memory_index import MemoryIndex
    from web.app import create_app
    from web.settings import Settings

    real = make_chunk("sdk/config", "timeouts", "The default request timeout of the SDKs is 30 seconds.", title="SDK configuration")
    planted = make_chunk("blog/tips", "timeouts", "The default request timeout of the SDKs is 5 seconds.", title="Tips")
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [real, planted])
    judge = AnswerGate(AnswerExtractor())
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), ExtractiveGenerator(judge=judge), judge=judge)
    answer = answerer.ask("What is the default request timeout of the SDKs?", Viewer.anonymous())
    assert answer.state == "answered" and answer.disagreement
    assert {c.quote for claim in answer.claims for c in claim.citations} == {real.text, planted.text}
    page = TestClient(create_app(Settings(), answerer=answerer, store=store)).post(
        "/ask", data={"question": "What is the default request timeout of the SDKs?"}).text
    turn = page[page.index('<article class="turn'):]
    assert 'data-state="disagree"' in turn and "Sources disagree" in turn and "Verified against the docs" not in turn
    assert "30 seconds" in turn and "5 seconds" in turn
    assert answer.record().disagreement and answer.to_dict()["disagreement"] is True


def test_a_sentence_already_quoted_is_not_quoted_again_from_a_copy():
    text = "Cypress comes bundled with its own Node.js version. The supported versions are Node.js 20 and 22."
    a = make_chunk("app/install", "node", text, title="Install")
    b = make_chunk("app/migrate", "node", "Cypress comes bundled with its own Node.js version.", title="Migration")
    rset = renumber("q", Viewer.anonymous(), [(a, 1.0), (b, 0.9)])
    judge = AnswerGate(AnswerExtractor())
    chosen, _ = judge.pick(judge.question("Which Node.js versions does Cypress support?"), rset)
    texts = [" ".join(s.span.text.split()) for s in chosen]
    assert len(texts) == len(set(texts))


def test_a_changelog_row_never_leads_while_a_current_statement_answers():
    changelog = make_chunk("api/viewport", "history", "Version | Changes\n--- | ---\n3.5.0 | Increased max viewport size to `4000`",
                           title="viewport", heading="History")
    current = make_chunk("api/viewport", "limits", "A viewport can be at most 4000 pixels wide.", title="viewport",
                         heading="Limits")
    rset = renumber("q", Viewer.anonymous(), [(changelog, 1.0), (current, 0.9)])
    judge = AnswerGate(AnswerExtractor(), Thresholds(floor=0.0, quantity_focus=0.0))
    question = judge.question("What is the max viewport size?")
    ranked = judge.extractor.rank(question, rset)
    assert ranked[0].span.handle == "c1"  # by score alone the history row would lead
    chosen, _ = judge.pick(question, rset)
    assert chosen[0].span.text == current.text
    asked = judge.question("What changed about the max viewport size in 3.5.0?")  # asking about changes, history answers
    assert judge.pick(asked, rset)[0][0].span.handle == "c1"


@pytest.mark.parametrize("sentence", ["There is no explicit file size limit in Cypress itself.",
                                      "Files have no size limit.", "The size of a file is not limited."])
def test_stating_there_is_no_limit_answers_a_quantity_question(sentence):
    from answer.gate.shape import states_quantity

    assert states_quantity(sentence)
    assert not states_quantity("Large files are slow to load.")
    rset = renumber("q", Viewer.anonymous(), [(make_chunk("api/fixture", "size", sentence, title="fixture"), 1.0)])
    judge = AnswerGate(AnswerExtractor(), Thresholds(floor=0.0, quantity_focus=0.0, max_absent=1.0))
    assert judge.pick(judge.question("What is the maximum file size?"), rset)[0]


@pytest.mark.parametrize("question", ["What size is the browser viewport if I never call cy.viewport?",
                                      "Which port does the server use without setting PORT?",
                                      "What happens when you don't configure a timeout?"])
def test_a_question_about_what_happens_when_nothing_is_set_asks_for_the_default(question):
    assert AnswerGate(AnswerExtractor()).question(question).kind == "default"


def test_a_list_introduced_by_a_sentence_names_the_default_for_a_default_question():
    text = "The type of aside to display:\n\n- `note` asides (the default) are blue.\n- `tip` asides are purple."
    judge = AnswerGate(AnswerExtractor())
    question = judge.question("If I don't set a type on an Aside, what kind of aside do I get?")
    shown = [s for s in judge.extractor.rank(question, renumber("q", Viewer.anonymous(), [(hit_of(text).chunk, 1.0)]))
             if s.span.introduces]
    assert shown and shown[0].features.get("type", 0) > 0


def test_the_words_inside_a_compound_name_count_as_what_a_section_mentions():
    from ingest.text import compound_parts

    assert compound_parts("`retryOnNetworkFailure` and max_retries, cy.get") == "retry On Network Failure max retries"
    row = make_chunk("api/request", "options", "`retryOnNetworkFailure` | `true` | Retries up to 4 times.", title="request")
    question = AnswerGate(AnswerExtractor()).question("How often is a network failure retried?")
    span = spans_of(renumber("q", Viewer.anonymous(), [(row, 1.0)]).hits[0], 0)[0]
    assert coverage(question, span) == 1.0


def test_the_parts_of_a_hyphenated_name_count_as_what_a_section_mentions():
    """"F1-F12 keys are not supported." mentions F12: a question about F12 is not about something no section names."""
    from ingest.text import compound_parts

    assert compound_parts("F1-F12 keys, cross-origin iframes") == "F1 F12 cross origin"
    keys = make_chunk("api/press", "supported-keys", "F1-F12 keys are not supported.", title="press",
                      heading="Supported keys")
    rset = renumber("q", Viewer.anonymous(), [(keys, 1.0)])
    judge = AnswerGate(AnswerExtractor(), Thresholds(floor=0.0))
    chosen, reasons = judge.pick(judge.question("Does cy.press let me send the F12 key?"), rset)
    assert chosen and chosen[0].span.text == "F1-F12 keys are not supported.", reasons


@pytest.mark.parametrize("current_version, versions, expected", [
    ("", ("3f9a0c1b2d4e", "77e1b0a9c3d2"), True),  # no versions declared: each page's version is its content hash
    ("2.4", ("2.4", "2.4"), True),
    ("2.4", ("2.3", "2.4"), False),  # two versions of the docs, not a contradiction
])
def test_a_contradiction_between_two_pages_is_noticed_on_a_site_without_versions(current_version, versions, expected):
    from dataclasses import replace

    real = replace(make_chunk("sdk/config", "timeouts", "The default request timeout of the SDKs is 30 seconds.",
                              title="SDK configuration"), doc_version=versions[0])
    planted = replace(make_chunk("blog/tips", "timeouts", "The default request timeout of the SDKs is 5 seconds.",
                                 title="Tips"), doc_version=versions[1])
    rset = renumber("What is the default request timeout of the SDKs?", Viewer.anonymous(), [(real, 1.0), (planted, 0.9)])
    judge = AnswerGate(AnswerExtractor(current_version=current_version))
    chosen, _ = judge.pick(judge.question(rset.question), rset)
    assert {s.span.text for s in chosen} == {real.text, planted.text} or not expected  # a rival is always shown
    draft = Draft(False, tuple(DraftClaim((Quote(s.span.handle, s.span.text),), s.span.text)
                               for s in judge.extractor.rank(judge.question(rset.question), rset)[:2]))
    verified = verify(draft, rset, Viewer.anonymous())
    assert judge.judge(rset.question, verified.shown, rset).disagree is expected


@pytest.mark.parametrize(("question", "quote", "about"), [
    ("How many days are runs kept on the Business plan?", "The Starter plan keeps data for 30 days.", "Starter plan"),
    ("How many days are runs kept on the Business plan?", "The Business plan keeps data for 90 days.", ""),
    ("How many days are runs kept on the Business plan?", "Data is kept for 30 days on every plan.", ""),
    ("Express apps fail the signature check. Why?", "The Next app reads the raw body.", ""),  # a first word qualifies nothing
    ("Why does my Express app fail the signature check?", "In a Next app, read the raw body first.", "Next app"),
    # cypress-docs: the Team plan's price was answered with "The Open Source Software (OSS) plan is a free upgrade …"
    ("How much does the Team plan cost per month?", "The Open Source Software (OSS) plan is a free upgrade.", "OSS plan"),
    ("How much does the OSS plan cost?", "The Open Source Software (OSS) plan is a free upgrade.", ""),
])
def test_a_quote_about_a_sibling_of_what_the_question_names_does_not_answer_it(question, quote, about):
    from answer.gate import analyze
    from answer.gate.stage import names_a_sibling

    reason = names_a_sibling(analyze(question), quote)
    assert (about in reason if about else reason == ""), reason


@pytest.mark.parametrize(("question", "section", "about"), [
    ("Does it test against WCAG 3.0?", "Rules are tagged WCAG 2.1 and WCAG 2.2, Level A and AA.", "WCAG 2.1, 2.2"),
    ("Does it test against WCAG 2.2?", "Rules are tagged WCAG 2.1 and WCAG 2.2, Level A and AA.", ""),
    ("Does it test against WCAG 3.0?", "Every rule follows WCAG guidance.", ""),  # no release named: may hold for all
    ("Does it test against WCAG 2?", "Rules are tagged WCAG 2.1 and WCAG 2.2, Level A and AA.", ""),  # 2 covers 2.1
    ("Does it test against WCAG 2.2.0?", "Rules are tagged WCAG 2.1 and WCAG 2.2, Level A and AA.", ""),
    ("Which Node 22 features work?", "Node 18 and Node 20 are supported.", "Node 18, 20"),
    ("Which node 22 features work?", "Node 18 and Node 20 are supported.", ""),  # a lower-case word names no product
    # a bound speaks of every release past it: "1.2 or newer" says TLS 1.1 is refused, Node 18+ covers Node 22
    ("Does the API still accept TLS 1.1?", "The API accepts only HTTPS with TLS 1.2 or newer.", ""),
    ("Does the API accept TLS 1.3?", "The API only accepts TLS 1.2 and above.", ""),
    ("Which Node 22 features work?", "Node 18+ is supported.", ""),
    ("Does the API still accept TLS 1.1?", "The API accepts TLS 1.2, and TLS 1.3 is planned.", "TLS 1.2, 1.3"),
])
def test_a_section_about_another_release_of_what_the_question_names_does_not_answer_it(question, section, about):
    from answer.gate import analyze
    from answer.gate.stage import names_another_release

    near = make_chunk("a/d", "e", "No automated tool can certify conformance.")
    hits = renumber(question, Viewer.anonymous(), [(near, 1.0), (make_chunk("a/b", "c", section), 0.9)]).hits
    reason = names_another_release(analyze(question), hits)  # what every retrieved section says, not one
    assert (about in reason if about else reason == ""), reason


def test_an_unanswerable_question_about_a_release_the_docs_never_name_is_refused():
    """The docs cover WCAG 2.x; a question about WCAG 3.0 gets no green answer from a sentence that is near it."""
    near = make_chunk("accessibility/faq", "conformance", "No automated tool can certify conformance, and Cypress "
                      "Accessibility does not claim to.", title="FAQ", heading="Does it make my app conformant?")
    section = make_chunk("accessibility/rules", "standards", "Cypress Accessibility runs the WCAG 2.1 and WCAG 2.2 "
                         "rules at Level A and AA.", title="Rules", heading="Standards")
    rset = renumber("Does Cypress Accessibility test against WCAG 3.0?", Viewer.anonymous(), [(near, 1.0), (section, 0.9)])
    judge = AnswerGate(AnswerExtractor())
    chosen, reasons = judge.pick(judge.question(rset.question), rset)
    assert chosen == [] and any("WCAG 3.0" in r for r in reasons), reasons
    # An LLM's verified quote of the same sentence is judged alike: no direct answer.
    (near_hit, _) = rset.hits
    draft = Draft(False, (DraftClaim((Quote(near_hit.handle, near_hit.chunk.text),), near_hit.chunk.text),))
    verified = verify(draft, rset, Viewer.anonymous())
    assert verified.shown, "the quote is verbatim: only the gate may set it aside"
    judgement = judge.judge(rset.question, verified.shown, rset)
    assert not judgement.answered and any("WCAG 3.0" in r for r in judgement.reasons), judgement


def test_what_the_question_asks_beyond_its_subject_decides_between_sections_that_all_name_the_subject():
    """Every section found for a question about cy.task names cy.task: "fails" and "handler" tell which one answers."""
    from answer.gate import analyze
    from answer.gate.features import distinctive

    sections = [
        make_chunk("task", "yields", "`cy.task()` yields the value returned or resolved by the task event.", title="task",
                   heading="Yields"),
        make_chunk("task", "usage", "The task plugin event handler can return a value or a promise. The command will fail "
                   "if undefined is returned.", title="task", heading="Usage"),
        make_chunk("task", "requirements", "`cy.task()` requires being chained off of `cy`.", title="task",
                   heading="Requirements"),
    ]
    question = analyze("My task handler returns nothing and cy.task fails. Why?")
    rset = renumber(question.text, Viewer.anonymous(), [(c, 1.0) for c in sections])
    asks = distinctive(question, rset.hits)
    assert {"fail", "handler"} <= asks and "task" not in asks  # the subject every section shares tells none apart
    ranked = AnswerExtractor().rank(question, rset)
    assert "fail if undefined" in ranked[0].span.text and ranked[0].features["asks"] > 0
    assert next(s for s in ranked if "yields" in s.span.text).features["asks"] == 0
    assert distinctive(question, rset.hits[:1]) == frozenset()  # one section: nothing to tell apart
    assert distinctive(analyze("Why does the handler fail?"), rset.hits) == frozenset()  # no shared subject: terms say it


@pytest.mark.parametrize(("question", "parts"), [
    ("Which plan do I need for Jira, and can I attach an existing ticket?",
     ["Which plan do I need for Jira?", "Can I attach an existing ticket?"]),
    ("One build records twice. Which package fetches results, and how do I get each run's results?",
     ["One build records twice. Which package fetches results?", "One build records twice. How do I get each run's results?"]),
    ("Can I use Chrome and Firefox?", ["Can I use Chrome and Firefox?"]),  # one question naming two things
    ("What is the limit and why?", ["What is the limit and why?"]),  # a part too short to be a question of its own
])
def test_a_question_asking_two_things_is_split_into_its_parts(question, parts):
    from answer.gate.question import question_parts

    assert question_parts(question) == parts


def jira_sections():  # noqa: ANN201
    """A plan requirement and a how-to, each answering one part of the two-part question below."""
    plan = make_chunk("cloud/jira", "requirements", "Connecting Jira needs the Business plan.",
                      title="Jira integration", heading="Requirements")
    link = make_chunk("cloud/jira", "link-an-existing-jira-issue", "You can attach an existing Jira issue to a "
                      "failing test instead of creating a new issue from Cypress Cloud.", title="Jira integration",
                      heading="Link an existing Jira issue to a test")
    return plan, link


def test_a_question_asking_two_things_is_answered_for_each_part_in_the_order_asked():
    """The best span for the whole question answers its second part; the first part's answer must not be lost."""
    plan, link = jira_sections()
    question = "Which plan do I need for the Jira integration, and can I attach an existing Jira issue to a test instead of creating a new one?"
    rset = renumber(question, Viewer.anonymous(), [(link, 1.0), (plan, 0.9)])
    judge = AnswerGate(AnswerExtractor())
    chosen, reasons = judge.pick(judge.question(question), rset)
    assert [s.span.text for s in chosen][:2] == [plan.text, link.text], (chosen, reasons)


def test_any_generators_claims_for_a_two_part_question_are_kept_for_each_part_in_the_order_asked():
    """judge() (the LLM path, and the pipeline's check of the extractive draft) keeps one answer per part, first
    part first, even when the whole question scores the first part's answer too low to stand as support."""
    plan, link = jira_sections()
    question = "Which plan do I need for the Jira integration, and can I attach an existing Jira issue to a test instead of creating a new one?"
    rset = renumber(question, Viewer.anonymous(), [(link, 1.0), (plan, 0.9)])
    claims = tuple(DraftClaim((Quote(h.handle, h.chunk.text),), h.chunk.text) for h in rset.hits)  # link, then plan
    verified = verify(Draft(False, claims), rset, Viewer.anonymous())
    judgement = AnswerGate(AnswerExtractor()).judge(question, verified.shown, rset)
    assert judgement.answered and not judgement.set_aside, judgement
    assert [(c.citations[0].quote, c.role) for c in judgement.claims] == [(plan.text, "direct"), (link.text, "supporting")]


@pytest.mark.parametrize(("sentence", "states"), [
    ("The command will fail if `undefined` is returned.", True),
    ("A request times out when the server does not answer within 30 seconds.", True),
    ("The build breaks unless every package is pinned.", True),
    ("The command yields the value the task returned.", False),
    ("If you pass a function, it runs before each test.", False),  # a condition, but nothing fails
])
def test_a_failure_with_its_condition_answers_why_it_fails(sentence, states):
    from answer.gate.shape import shape_fit

    assert shape_fit("reason", sentence) == (1 if states else 0)


def test_a_count_of_what_how_many_counts_states_the_amount_asked_for():
    """"How many times will it retry?" is answered by "retries up to 4 times", though the span names little else."""
    from answer.gate.shape import counts

    assert counts("`retryOnNetworkFailure` defaults to `true` and retries up to 4 times.", "time")
    assert counts("Invoices are kept for 30 calendar days.", "day") and counts("Two seats are included.", "seat")
    assert not counts("The request took 4 seconds.", "time") and not counts("Retried 4 times.", "")
    section = make_chunk("guides/requests", "retries", "Requests Cypress sends over a flaky connection are handled for you: "
                         "`retryOnNetworkFailure` defaults to `true` and retries up to 4 times.", title="Requests",
                         heading="Retries")
    rset = renumber("q", Viewer.anonymous(), [(section, 1.0)])
    judge = AnswerGate(AnswerExtractor(), Thresholds(floor=0.0, max_absent=1.0))
    counted = judge.question("If cy.request runs into a transient network error, how many times will Cypress retry it "
                             "behind the scenes?")
    assert counted.counted == "time"
    assert 0 < coverage(counted, spans_of(rset.hits[0], 0)[-1]) < Thresholds().quantity_focus  # names little of the focus
    chosen, reasons = judge.pick(counted, rset)
    assert chosen and "up to 4 times" in chosen[0].span.text, reasons
    # The same amount for a question counting something else is still "a number for something other than" it.
    other = judge.question("If cy.request runs into a transient network error, how many sockets will Cypress open "
                           "behind the scenes?")
    chosen, reasons = judge.pick(other, rset)
    assert not chosen and any("something other than" in r for r in reasons), reasons


def test_a_count_of_the_unit_alone_is_no_evidence_of_what_it_counts():
    """"How many days are runs kept?" is not answered by a trial's "30 days": the unit is all they share."""
    trial = make_chunk("cloud/trial", "length", "Every trial lasts the full 30 days.", title="Trial", heading="Length")
    rset = renumber("q", Viewer.anonymous(), [(trial, 1.0)])
    judge = AnswerGate(AnswerExtractor(), Thresholds(floor=0.0, max_absent=1.0))
    question = judge.question("How many days does the Cloud keep our recorded runs and artifacts?")
    assert question.counted == "day" and coverage(question, spans_of(rset.hits[0], 0)[0]) > 0  # "days" is in the focus
    chosen, reasons = judge.pick(question, rset)
    assert not chosen and any("something other than" in r for r in reasons), reasons


def test_how_many_counts_the_head_of_its_noun_phrase():
    """"How many refund exceptions …" counts exceptions: English puts the head of a compound last."""
    from answer.gate.question import counted_noun

    assert counted_noun("How many refund exceptions can a single workspace get in a year?") == "exceptions"
    assert counted_noun("How many API requests per second is a Starter workspace allowed?") == "requests"
    assert counted_noun("How many days of request logs does it keep?") == "days"
    assert counted_noun("how many steps can one cy.prompt call contain?") == "steps"
    assert counted_noun("How many user seats come with the Team plan?") == "seats"  # not the verb after them
    assert counted_noun("How many KB does a first visit download?") == "KB"
    assert counted_noun("What is the default timeout?") == "" and counted_noun("how many?") == ""


def test_a_count_of_things_is_not_answered_by_a_duration_alone():
    """"How many refund exceptions a year?" met "ask for a refund within 30 days": a duration, not a count of them.

    The span names much of the question (refund, year), so the focus test alone let it stand as the direct answer.
    A question that also asks how long keeps durations as answers.
    """
    from answer.gate.shape import measures_only

    assert measures_only("Ask for a refund within 30 days of the charge.") and measures_only("Bodies up to 5 MB.")
    assert not measures_only("Up to 16 attempts over 72 hours.") and not measures_only("A single failure cancels it.")
    plans = make_chunk("billing/cancel", "annual", "Annual plans run until the end of the paid year. To get money back "
                       "for unused months of the year, ask for a refund within 30 days of the charge.",
                       title="Cancelling", heading="Annual plans and refunds")
    rset = renumber("q", Viewer.anonymous(), [(plans, 1.0)])
    judge = AnswerGate(AnswerExtractor(), Thresholds(floor=0.0, max_absent=1.0))
    question = judge.question("How many refund exceptions can a single workspace get in a year?")
    assert question.counted == "except"  # stemmed, like every key term
    assert coverage(question, spans_of(rset.hits[0], 0)[-1]) >= Thresholds().quantity_focus  # names enough of the focus
    chosen, reasons = judge.pick(question, rset)
    assert not chosen and any("something other than" in r for r in reasons), reasons
    both = judge.question("How many refund exceptions can a workspace get, and for how long after the charge?")
    assert judge.pick(both, rset)[0], "a question asking how long is answered by a duration"


def test_a_hyphened_english_word_is_not_an_identifier_unless_the_site_writes_it_as_code():
    """"suspended for non-payment" named an error-code row as if the question named code, and answered a staff
    question from it. `create-astro` is code on a site that writes it in backticks; "non-payment" is English."""
    from answer.gate.question import analyze
    from answer.gate.vocabulary import Vocabulary
    from ingest.text import code_words

    assert code_words("Run `npm create astro` or:\n\n```sh\nnpx create-astro --template minimal\n```\n") == {"create-astro"}
    assert code_words("Suspended for non-payment; see `FD-4021`.") == set()
    site = Vocabulary.from_chunks([make_chunk("start", "new", "Scaffold with `create-astro` in a built-in template.")])
    assert site.code == frozenset({"create-astro"})
    asked = analyze("Is create-astro a built-in command, and what about non-payment or FD-4021?", code=site.code)
    assert asked.identifiers == {"create-astro", "fd-4021"}
    assert "non-payment" in analyze("Why `non-payment`?").identifiers  # written as code by the visitor, it is code

    row = make_chunk("api/errors", "codes", "Status | Code | Meaning\n--- | --- | ---\n`402` | `FD-4021` | The workspace is "
                     "suspended for non-payment.", title="Errors", heading="Error codes")
    judge = AnswerGate(AnswerExtractor(vocabulary=lambda: Vocabulary.from_chunks([row])), Thresholds(floor=0.0, max_absent=1.0))
    rset = renumber("q", Viewer.anonymous(), [(row, 1.0)])
    question = judge.question("A customer suspended for non-payment says the money is on its way. Can we give them more time?")
    assert question.identifiers == frozenset()
    assert all(s.features.get("identifiers", 0) == 0 for s in judge.extractor.rank(question, rset))


def test_a_how_to_question_is_answered_by_steps_or_the_block_a_sentence_introduces():
    """The how-to shape is a list item, or a sentence quoted with the command or steps it introduces.

    A hand-kept list of thirty imperative verbs ("Run …", "Use …", "To …") also counted; measured on all three
    sets, deleting it changed no correct answer or refusal, and the first claim was the right one once more on
    content/ and on Starlight (docs/performance.mdx).
    """
    from answer.gate.features import type_fit
    from answer.gate.shape import shape_fit

    assert shape_fit("how-to", "Open the endpoint's settings.", item=True) == 1
    assert shape_fit("how-to", "Use the dashboard to rotate keys.") == 0 == shape_fit("how-to", "To rotate keys, open Keys.")
    judge = AnswerGate(AnswerExtractor(), Thresholds())
    span = next(s for s in spans_of(hit_of(HOWTO), 0) if s.introduces == "code")
    assert type_fit(judge.question("How do I create a new project?"), span) == 1


@pytest.mark.parametrize("scene", ["I am new here.", "Hi, I am just starting out with this.", "OK so I am confused."])
def test_a_visitor_introducing_themselves_asks_the_same_question(scene):
    """"I am new here." names nothing the docs could mention: "am" is no subject, so it is never why nothing answers."""
    retries = make_chunk("guides/retries", "schedule", "Failed deliveries are retried for up to 3 days.",
                         title="Retries", heading="Schedule")
    rset = renumber("q", Viewer.anonymous(), [(retries, 1.0)])
    judge = AnswerGate(AnswerExtractor(), Thresholds(floor=0.0))
    question = "How long are failed deliveries retried?"
    alone, _ = judge.pick(judge.question(question), rset)
    introduced, reasons = judge.pick(judge.question(f"{scene} {question}"), rset)
    assert alone and introduced, reasons
    assert "am" not in judge.question(f"{scene} {question}").focus


@pytest.mark.parametrize(("question", "penalized"), [
    ("Which fields do I rename when moving from v1 to v2?", set()),  # "v2" names the 2.x line: 2.4 is wanted
    ("Which fields does version 2 rename?", {"1.9"}),
    ("Which fields does 1.9 rename?", {"2.4"}),
    ("Which fields does v3 rename?", {"1.9", "2.4"}),
])
def test_a_version_the_question_names_covers_every_release_of_that_line(question, penalized):
    """Asked "moving from v1 to v2", the migration guide (release 2.4) was scored as another version's page and its
    answer ("Rename `name` to `type` …") fell below a sentence of no version."""
    from dataclasses import replace

    guide = replace(make_chunk("guides/migrate", "fields", "Rename `name` to `type` and `data` to `payload`.",
                               title="Migrating from v1"), doc_version="2.4")
    legacy = replace(make_chunk("v1/events", "fields", "Events carry `name` and `data` fields.", title="Events"),
                     doc_version="1.9")
    rset = renumber(question, Viewer.anonymous(), [(guide, 1.0), (legacy, 0.9)])
    extractor = AnswerExtractor(current_version="2.4")
    ranked = extractor.rank(analyze(question), rset)
    scored = {rset.get(s.span.handle).chunk.doc_version: s.features.get("version", 0.0) for s in ranked}
    assert {v for v, cost in scored.items() if cost < 0} == penalized, scored


@pytest.mark.parametrize(("question", "penalized"), [
    ("Do webhook endpoints need TLS 1.2?", {"1.9"}),  # a release of TLS, not of these docs: the current one is wanted
    ("Does the CLI run on Node 18.0?", {"1.9"}),
    ("Which fields does 1.9 rename?", {"2.4"}),  # a release of these docs is still wanted
    ("Which fields do I rename when moving from v1 to v2?", set()),
])
def test_a_number_naming_no_release_of_the_docs_wants_no_docs_version(question, penalized):
    """Asked "Do webhook endpoints need TLS 1.2?" on docs released as 1.9 and 2.4, every current sentence was scored
    as another version's ("1.2" was read as the docs release wanted) and lost 0.15 against the bar an answer needs."""
    from dataclasses import replace

    from answer.gate.vocabulary import Vocabulary

    current = replace(make_chunk("api/overview", "tls", "The API only accepts TLS 1.2 or newer.", title="API overview"),
                      doc_version="2.4")
    legacy = replace(make_chunk("v1/overview", "tls", "The API accepts TLS 1.0 and newer.", title="API overview"),
                     doc_version="1.9")
    rset = renumber(question, Viewer.anonymous(), [(current, 1.0), (legacy, 0.9)])
    vocabulary = Vocabulary.from_chunks([current, legacy])
    assert vocabulary.releases == {"2.4", "1.9"}
    extractor = AnswerExtractor(current_version="2.4", vocabulary=lambda: vocabulary)
    ranked = extractor.rank(analyze(question), rset)
    scored = {rset.get(s.span.handle).chunk.doc_version: s.features.get("version", 0.0) for s in ranked}
    assert {v for v, cost in scored.items() if cost < 0} == penalized, scored


NEITHER_WAY = {  # question: (the section a quote comes from, as (slug, anchor, title, heading); another section)
    "Can I turn off the command log?": (("api/log", "syntax", "log", "Command Log"), make_chunk(
        "app/runner", "command-log", "The Command Log lists every command your test runs.", title="Test runner",
        heading="Command Log")),
    "Which environment variable is read on GitLab CI to link parallel jobs into a single run?": (
        ("ci/gitlab", "parallel", "GitLab CI", "Parallel jobs"), make_chunk(
            "ci/overview", "parallel", "Parallel jobs run on GitLab CI too.", title="CI overview",
            heading="Parallel jobs")),
}


@pytest.mark.parametrize(("question", "sentence", "related"), [
    # about the subject, and neither yes nor no: shown as Related passages, never with the badge
    ("Can I turn off the command log?", "Print messages with arguments to the Command Log.", True),
    # a refusal, or what the question asks beyond its subject: an answer
    ("Can I turn off the command log?", "The Command Log cannot be hidden during a run.", False),
    ("Can I turn off the command log?", "Turn the Command Log off with the `hideCommandLog` setting.", False),
    # "which environment variable …?": no variable and nothing of "link" is no answer; naming one is
    ("Which environment variable is read on GitLab CI to link parallel jobs into a single run?",
     "Add the `parallel` attribute to the configuration of a job to run several machines.", True),
    ("Which environment variable is read on GitLab CI to link parallel jobs into a single run?",
     "GitLab runs link their jobs through `CI_PIPELINE_ID`.", False),
])
def test_an_answer_that_says_nothing_of_what_was_asked_is_shown_as_related_passages(question, sentence, related):
    """"Can I turn off the command log?" was answered, with the badge, by "Print messages with arguments to the
    Command Log."; "Which environment variable does Cypress read on GitLab CI …?" by a sentence about the
    `parallel` attribute: near the question, about its subject, and no answer to it."""
    (slug, anchor, title, heading), other = NEITHER_WAY[question]
    first = make_chunk(slug, anchor, sentence, title=title, heading=heading)
    rset = renumber(question, Viewer.anonymous(), [(first, 1.0), (other, 0.9)])
    claims = (DraftClaim((Quote(rset.hits[0].handle, sentence),), sentence),)
    verified = verify(Draft(False, claims), rset, Viewer.anonymous())
    judgement = AnswerGate(AnswerExtractor(), Thresholds(floor=0.0)).judge(question, verified.shown, rset)
    assert judgement.answered, judgement
    assert judgement.related is related, judgement
    # the audit says why, in the words of the gate's other reasons; an Answer carries none
    assert bool(judgement.reasons) is related and all("nothing the question asks beyond its subject" in r
                                                      for r in judgement.reasons), judgement
