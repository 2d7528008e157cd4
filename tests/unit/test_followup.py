"""Follow-ups rewritten into standalone questions: only elliptical ones borrow the earlier subject."""

from __future__ import annotations

import json

import pytest

from answer.followup import (
    CarrySubject,
    LLMCondenser,
    Rewrite,
    Turn,
    is_elliptical,
    reads_as_question,
    rewrite,
    subject,
)

TIMEOUT = "What is the default request timeout of the SDKs?"
REGION = "Can I move my workspace to another region?"


@pytest.mark.parametrize(("previous", "question", "expected"), [
    (REGION, "How do I do that?", "How do I move my workspace to another region?"),
    (TIMEOUT, "How do I change it?", "How do I change the default request timeout of the SDKs?"),
    (TIMEOUT, "Is it configurable?", "Is the default request timeout of the SDKs configurable?"),
    (TIMEOUT, "Why?", "Why (the default request timeout of the SDKs)?"),
    ("How long are refunds available?", "And for annual plans?", "How long are refunds available for annual plans?"),
    ("How do I rotate an API key?", "Does that revoke the old one?", "Does that revoke the old one (rotate an API key)?"),
])
def test_an_elliptical_follow_up_carries_the_previous_subject(previous, question, expected):
    assert is_elliptical(question)
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == expected and result.rewritten and result.asked == question


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("Can I use MDX components in my pages?", "What about in the API playground?",
     "Can I use MDX components in the API playground?"),  # a phrase headed by a noun is no name: not "API … components"
    ("How many seats does the Growth plan include for new teams?", "And for Enterprise?",
     "How many seats does the Enterprise plan include for new teams?"),  # a name swaps the name
    ("How do I install the CLI with npm?", "With yarn?", "How do I install the CLI with yarn?"),  # no "And" needed
    ("How long are logs kept on the Growth plan?", "On the Enterprise plan?",
     "How long are logs kept on the Enterprise plan?"),
    ("How do I hide a page from the navigation?", "Can I also hide it from search?",
     "Can I also hide a page from search?"),  # the pronoun is what the repeated verb took
    ("How do I rotate an API key?", "Can I rotate it from the CLI?", "Can I rotate an API key from the CLI?"),
    ("How do I move a page to a folder?", "Can I move it back?", "Can I move a page back?"),  # up to "to"
])
def test_a_fragment_or_a_pronoun_after_the_same_verb_is_read_against_the_earlier_question(previous, question,
                                                                                           expected):
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == expected and result.shown


@pytest.mark.parametrize(("previous", "question", "expected"), [
    # the visitor named before the verb makes it an action, whatever asks: the pronoun is the thing acted on
    ("Where do I find the signing secret of a webhook?", "How do I rotate it?", "How do I rotate the signing secret?"),
    ("Where can I see failed deliveries?", "How do I retry them?", "How do I retry failed deliveries?"),
    ("How do I install the ferry CLI?", "How do I update it?", "How do I update the ferry CLI?"),
    ("What do I need to verify a webhook signature?", "Can I do it in Python?",
     "Can I verify a webhook signature in Python?"),
])
def test_a_pronoun_after_another_verb_stands_for_what_the_earlier_action_was_done_to(previous, question, expected):
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == expected and result.shown


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("How do I set up SSO?", "How do I test it?", "How do I test it (set up SSO)?"),  # never "test up SSO"
    ("How do I back up my database?", "How do I restore it?", "How do I restore it (back up my database)?"),
    ("How do I get started with the API?", "How do I authenticate it?",
     "How do I authenticate it (get started with the API)?"),
    ("How do I opt out of tracking?", "Can I undo it?", "Can I undo it (opt out of tracking)?"),
])
def test_a_verb_finished_by_a_particle_lends_no_object_to_a_pronoun(previous, question, expected):
    assert rewrite(question, [Turn(previous, previous)]).question == expected


@pytest.mark.parametrize(("question", "topic", "action"), [
    ("Where do I find the signing secret of a webhook?", "find the signing secret of a webhook", True),
    ("What do we need to verify a signature?", "verify a signature", True),
    ("When does the signing secret expire?", "the signing secret expire", False),  # the secret acts, not the visitor
    ("When does it expire?", "expire", False),
    ("Is there a limit on endpoints?", "a limit on endpoints", False),
])
def test_an_earlier_question_is_an_action_when_the_visitor_is_the_one_doing_it(question, topic, action):
    assert subject(question) == (topic, action)


@pytest.mark.parametrize(("previous", "question", "wrong"), [
    ("What is the timeout for the API?", "Is it the default?", "Is the timeout for the default?"),  # "the" anchors nothing
    ("How do I add a link to a page?", "What happens to it?", "What happens to a page?"),  # "to" is no verb
])
def test_a_word_that_is_no_anchor_does_not_split_the_earlier_question(previous, question, wrong):
    assert rewrite(question, [Turn(previous, previous)]).question != wrong


def test_a_question_that_starts_with_a_preposition_is_not_a_fragment():
    previous = "How do I set the base path?"
    for question in ("In which file do I set it?", "For static builds built on a Monday morning?"):
        assert not rewrite(question, [Turn(previous, previous)]).question.startswith("How do I set the base path")


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("Does the search index include code blocks?", "Does it include images too?",
     "Does the search index include images too?"),  # not "… include code blocks include images too?"
    ("Does the CLI support Windows?", "Does it support Linux?", "Does the CLI support Linux?"),
    ("Does the search bar index code blocks?", "Does it also index images?", "Does the search bar also index images?"),
    ("Is the analytics dashboard available on the free plan?", "Is it on Pro?",
     "Is the analytics dashboard available on Pro?"),
    ("Can the API key be rotated?", "How often should it be?", "How often should the API key be rotated?"),  # ellipsis
    ("What does the FD-4292 error mean?", "What does that mean?", "What does the FD-4292 error mean?"),  # was "… mean mean?"
])
def test_a_pronoun_stands_for_the_subject_alone_when_the_follow_up_repeats_the_verb_after_it(previous, question,
                                                                                             expected):
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == expected and result.shown


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("How do I open the devtools for React components?", "And for my Vue components?",
     "How do I open the devtools for Vue components?"),  # the object swapped, not appended beside React
    ("How do I deploy my site to Vercel?", "And on Netlify?", "How do I deploy my site to Netlify?"),  # the platform
    ("What is the default port in dev mode?", "What about preview mode?", "What is the default port in preview mode?"),
    ("How many retries does the Growth plan get?", "What about Starter?", "How many retries does the Starter plan get?"),
    ("How long are events kept?", "What about deliveries?", "How long are events kept for deliveries?"),  # nothing to swap
    ("How do I enable analytics with PostHog?", "What about Google Analytics?",  # a name, not the word "analytics"
     "How do I enable analytics with Google Analytics?"),  # was "How do I Google Analytics with PostHog?"
    ("How many retries does the Starter plan get?", "What about Growth Plan?",  # a name in title case: its phrase
     "How many retries does the Growth Plan get?"),
    ("How do I open the devtools for React components?", "And for Vue Components?",
     "How do I open the devtools for Vue Components?"),
])
def test_a_follow_up_that_replaces_one_part_is_searched_as_the_previous_question_with_it_replaced(previous, question,
                                                                                                   expected):
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == expected and result.rewritten


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("How do I install the CLI with npm?", "And with pnpm?", "How do I install the CLI with pnpm?"),
    ("How do I add an icon to a card?", "And to a tab?", "How do I add an icon to a tab?"),
    ("How do I deploy my site to Vercel?", "And on Netlify?", "How do I deploy my site to Netlify?"),
])
def test_and_with_a_preposition_replaces_what_that_preposition_governed(previous, question, expected):
    assert rewrite(question, [Turn(previous, previous)]).question == expected  # not "… with npm with pnpm?"


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("How do I install the ferry CLI?", "And with Homebrew?", "How do I install the ferry CLI with Homebrew?"),
    ("How do I install the CLI?", "What about with Homebrew?", "How do I install the CLI with Homebrew?"),
])
def test_a_name_after_a_preposition_of_its_own_is_added_when_no_preposition_governed_an_earlier_name(
        previous, question, expected):
    """The CLI is what is installed, Homebrew how: it was searched as "How do I install the ferry Homebrew?"."""
    assert rewrite(question, [Turn(previous, previous)]).question == expected


@pytest.mark.parametrize(("previous", "question", "first", "second"), [
    ("How do I install the ferry CLI?", "And with Homebrew?", "How do I install the ferry CLI with Homebrew?",
     "How do I install the ferry Homebrew?"),
    ("Does Ferry support Postgres?", "And with MySQL?", "Does Ferry support Postgres with MySQL?",
     "Does Ferry support MySQL?"),
    ("How do I install Ferry locally?", "And with Docker?", "How do I install Ferry locally with Docker?",
     "How do I install Docker locally?"),  # an adverb after the name is no noun it modifies
    # a name another preposition governs, or that modifies a noun: swapped first, as before; the docs may decide
    ("How do I install the Ferry CLI on Windows?", "And with Homebrew?", "How do I install the Ferry CLI on Homebrew?",
     "How do I install the Ferry CLI on Windows with Homebrew?"),
    ("How do I set up SSO for the Enterprise plan?", "And with Okta?", "How do I set up SSO for the Okta plan?",
     "How do I set up SSO for the Enterprise plan with Okta?"),
    ("How do I install the CLI?", "Does it work with Homebrew too?", "Does it work with Homebrew too (install the CLI)?",
     "How do I install the Homebrew?"),
    ("How do I deploy to Vercel?", "Does it work with Netlify as well?", "How do I deploy to Netlify?",
     "Does it work with Netlify as well (deploy to Vercel)?"),  # "to" governed Vercel: swapped first
])
def test_a_name_no_grammar_places_is_read_both_ways_and_the_docs_decide(previous, question, first, second):
    """Homebrew is how the CLI is installed, MySQL what Ferry may support instead of Postgres: the same words."""
    history = [Turn(previous, previous)]
    assert CarrySubject().readings(question, history) == (first, second)
    assert rewrite(question, history, prefer=lambda readings: readings[1]).question == second
    assert rewrite(question, history).question == first  # no one to ask: the first


@pytest.mark.parametrize(("previous", "question", "only"), [
    ("How do I deploy my site to Vercel?", "And to Netlify?", "How do I deploy my site to Netlify?"),
    ("Can I use server islands on Vercel?", "Is that also true on Netlify?", "Can I use server islands on Netlify?"),
])
def test_a_name_the_same_preposition_governed_is_swapped_with_no_second_reading(previous, question, only):
    assert CarrySubject().readings(question, [Turn(previous, previous)]) == (only,)


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("When does the signing secret expire?", "Can I rotate it?", "Can I rotate the signing secret?"),
    ("When does the signing secret expire?", "How long does it last?", "How long does the signing secret last?"),
    ("When does the Ferry CLI access token expire?", "Can I rotate it?", "Can I rotate the Ferry CLI access token?"),
    ("Why does my deploy fail?", "How do I debug it?", "How do I debug my deploy?"),
    ("How does the retry schedule work?", "Can I change it?", "Can I change the retry schedule?"),
])
def test_a_pronoun_for_the_subject_of_a_question_asked_with_do_leaves_out_the_verb_that_ended_it(
        previous, question, expected):
    """It was searched, and shown, as "Can I rotate the signing secret expire?"."""
    assert rewrite(question, [Turn(previous, previous)]).question == expected


@pytest.mark.parametrize(("previous", "question", "kept"), [
    ("How does the API handle pagination?", "Is it cursor based?", "pagination"),
    ("Where does the CLI store data?", "Can I change it?", "data"),
    ("Where does the CLI store credentials?", "Can I change it?", "credentials"),
    ("Why does the login redirect loop?", "How do I stop it?", "loop"),
    ("How does the search index get built?", "Can I speed it up?", "built"),
])
def test_the_last_word_of_a_question_asked_with_do_stays_unless_it_is_a_verb_known_to_close_one(
        previous, question, kept):
    """An object looks like a closing verb to a rule without parts of speech: taking it off lost the subject."""
    assert kept in rewrite(question, [Turn(previous, previous)]).question


def test_a_lone_term_taken_as_known_is_the_earlier_subject_s():
    previous = "Which events can send a webhook?"
    assert is_elliptical("What's the default?")  # the default of what the thread is about
    assert rewrite("What's the default?", [Turn(previous, previous)]).question == (
        "What's the default (events can send a webhook)?")
    for standalone in ("What is a workspace?", "What is MDX?", "What's the default of retry_limit?"):
        assert not is_elliptical(standalone) and not rewrite(standalone, [Turn(previous, previous)]).rewritten


@pytest.mark.parametrize(("previous", "question", "expected"), [
    ("Where do I find the signing secret of a webhook?", "What should I do if that secret leaks?",
     "What should I do if the signing secret leaks?"),
    ("Our API sits behind HTTP basic auth. How do I call it from the SDK?", "Can I use the same auth header with curl?",
     "Can I use the HTTP basic auth header with curl?"),
])
def test_a_noun_pointed_back_at_takes_the_fuller_phrase_the_previous_question_gave_it(previous, question, expected):
    assert not rewrite(question, []).rewritten  # a subject of its own: only the thread says which secret
    assert is_elliptical(question, previous)
    assert rewrite(question, [Turn(previous, previous)]).question == expected


def test_a_message_that_goes_on_from_the_last_keeps_its_words_and_carries_the_earlier_subject():
    previous = "How do I invite a teammate to my workspace?"
    for question in ("ok and which role can only view billing?", "Also, can I remove a teammate later?",
                     "And a guest account?"):
        assert is_elliptical(question)
        assert rewrite(question, [Turn(previous, previous)]).question == (
            f"{question.rstrip('?')} (invite a teammate to my workspace)?")
    for standalone in ("Can I put the API key in a config file instead of the environment?",  # "instead", "it" and
                       "I resent a request with the same key. Why did it fail?"):  # "the same" go on nothing
        assert not rewrite(standalone, [Turn(previous, previous)]).rewritten


@pytest.mark.parametrize(("previous", "question"), [
    ("How do I pause the clock in a test?", "How do I restore it later in that same test?"),  # "test" says no more
    (TIMEOUT, "Make sure that the SDK retries idempotent requests?"),  # "that" joins a clause, it points at nothing
    ("Where do I find the signing secret of a webhook?", "What happens if that delivery attempt times out?"),  # new
])
def test_a_pointer_the_previous_question_says_nothing_more_about_is_left_as_typed(previous, question):
    assert rewrite(question, [Turn(previous, previous)]).question == question


@pytest.mark.parametrize("question", ["Which TLS versions does the API accept?", "How do I verify webhook signatures?",
                                      "Make sure that the SDK retries idempotent requests?"])
def test_a_follow_up_that_names_its_own_subject_is_searched_as_typed(question):
    result = rewrite(question, [Turn(TIMEOUT, TIMEOUT)])
    assert result.question == question and not result.rewritten


def test_without_history_nothing_is_rewritten_and_chains_use_the_last_standalone_question():
    assert not rewrite("How do I do that?", []).rewritten
    history = [Turn(TIMEOUT, TIMEOUT), Turn("How do I change it?", "How do I change the default request timeout of the SDKs?")]
    assert rewrite("Is it the same for retries?", history).question == (  # the latest search's subject, an action here
        "Is it the same for retries (change the default request timeout of the SDKs)?")


class Model:
    """A model that records what it was asked and replies with canned text (or fails)."""

    def __init__(self, reply: str | Exception) -> None:
        self.reply, self.messages = reply, []

    def complete(self, messages, *, schema, name):  # noqa: ANN001, ANN201
        self.messages.append(messages)
        assert name == "condense" and schema["required"] == ["question"]
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def test_an_llm_condenses_the_thread_and_falls_back_to_the_offline_rule_on_failure():
    model = Model(json.dumps({"question": "How do I move a workspace to the eu-west region?"}))
    assert rewrite("How do I do that?", [Turn(REGION, REGION)], LLMCondenser(model)).question == (
        "How do I move a workspace to the eu-west region?")
    assert REGION in model.messages[0][1]["content"] and "How do I do that?" in model.messages[0][1]["content"]
    for broken in (RuntimeError("model down"), "not json", json.dumps({"question": ""})):
        assert rewrite("How do I do that?", [Turn(REGION, REGION)], LLMCondenser(Model(broken))).question == (
            CarrySubject().condense("How do I do that?", [Turn(REGION, REGION)]))
    assert Model("unused").messages == [] and not rewrite("Hi?", [], LLMCondenser(Model("x"))).rewritten


# Rewrites the offline rule made of real threads (content/ questions, Starlight follow-ups): searched, never shown.
@pytest.mark.parametrize(("previous", "question", "broken"), [
    ("Can limits be raised?", "How do I do that?", "How do I do limits be raised?"),
    ("How long do I have to ask for my money back on a monthly subscription?", "Can I change it?",
     "Can I change long do I have to ask for my money back on a monthly subscription?"),
    ("What does the FD-4292 error mean?", "How do I do that?", "How do I do the FD-4292 error mean?"),
    ("What API host should a workspace in Frankfurt call?", "Is it configurable?",
     "Is API host should a workspace in Frankfurt call configurable?"),
    ("How many API requests per second is a Starter workspace allowed?", "Can I change it?",
     "Can I change many API requests per second is a Starter workspace allowed?"),
    ("On which day does my monthly event allowance start over?", "Is it configurable?",
     "Is On which day does my monthly event allowance start over configurable?"),
    ("We're a registered charity, is there cheaper pricing for us?", "Does it apply to teams?",
     "Does We're a registered charity, is there cheaper pricing for us apply to teams?"),
    ("I paid for a whole year up front. Can I still get money back a few weeks later?", "Why?",
     "Why (paid for a whole year up front. Can I still get money back a few weeks later)?"),
    ("How often do I need to log in again with the ferry CLI?", "Why?",
     "Why (often do I need to log in again with the ferry CLI)?"),
])
def test_a_rewrite_that_does_not_read_as_a_question_is_searched_but_not_shown(previous, question, broken):
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == broken and result.rewritten  # still searched: it carries the earlier subject
    assert not reads_as_question(broken) and not result.shown


@pytest.mark.parametrize("readable", [
    "How do I move my workspace to another region?",
    "How do I change the default request timeout of the SDKs?",
    "Is the default request timeout of the SDKs configurable?",
    "Why (the default request timeout of the SDKs)?",
    "Does that revoke the old one (rotate an API key)?",
    "Is it the same for retries (change the default request timeout of the SDKs)?",
    "How long are refunds available for annual plans?",
    "How do I open the devtools for Vue components?",
    "How many retries does the Starter plan get?",
    "How do I turn it off for one page (enable 'Edit page' links)?",
    "What's the default port in preview mode?",
    "How do I know if the key is expired?",
    "How do I make sure retries will be sent?",
    "Which events can be replayed after 30 days?",
])
def test_a_question_that_reads_as_one_is_shown(readable):
    assert reads_as_question(readable)
    assert Rewrite("How do I do that?", readable).shown


def test_an_earlier_question_opening_with_a_contracted_what_s_lends_its_subject_without_it():
    """"What's the longest lifetime …?" lends "the longest lifetime …", not "What's the longest lifetime …"."""
    previous = "What's the longest lifetime I can give an API key?"
    result = rewrite("Can I change it?", [Turn(previous, previous)])
    assert result.question == "Can I change the longest lifetime I can give an API key?" and result.rewritten


def test_a_question_typed_as_is_is_never_shown_as_searched_for_even_when_it_reads_badly():
    assert not Rewrite("how do i do do this", "how do i do do this").shown  # not rewritten: nothing to show
    assert not reads_as_question("Tell me about webhooks.") and not reads_as_question("webhooks")


@pytest.mark.parametrize(("previous", "question", "standalone"), [
    ("What's the default variant of an Aside?", "What about for badges?", "What's the default variant of an Aside for badges?"),
    ("How do I start the local dev server with npm?", "What about with yarn?", "How do I start the local dev server with yarn?"),
    ("Can I use server islands on Vercel?", "Is that also true on Netlify?", "Can I use server islands on Netlify?"),
    ("Does the Starter plan include SSO?", "Does that apply to the Growth plan too?", "Does the Growth plan include SSO?"),
    ("How do I deploy to Vercel?", "Does it work with Netlify as well?", "How do I deploy to Netlify?"),
    ("How do I add a sidebar to my docs?", "What about in MDX pages?", "How do I add a sidebar to my docs in MDX pages?"),
])
def test_an_elliptical_follow_up_asks_the_earlier_question_of_the_part_it_names(previous, question, standalone):
    """The earlier question with its part replaced, never both parts side by side ("… on Vercel … on Netlify")."""
    result = rewrite(question, [Turn(previous, previous)])
    assert result.question == standalone and result.shown


def test_a_follow_up_that_names_its_own_subject_is_read_two_ways_and_prefer_decides_which_is_searched():
    asked: list[tuple[str, ...]] = []

    def prefer(readings):  # noqa: ANN001, ANN202
        asked.append(tuple(readings))
        return readings[-1]

    question = "Which TLS versions does the API accept?"
    history = [Turn(TIMEOUT, TIMEOUT)]
    result = rewrite(question, history, prefer=prefer)
    beside = "Which TLS versions does the API accept (the default request timeout of the SDKs)?"
    assert asked == [(question, beside)] and result.question == beside
    assert result.rewritten and rewrite(question, history, prefer=lambda r: r[0]).question == question


def test_a_subject_carried_beside_an_earlier_turn_is_not_carried_again_into_the_next():
    """Three turns: the second searched with the first's subject beside it lends only its own subject to the third."""
    second = "Which TLS versions does the API accept (the default request timeout of the SDKs)?"
    history = [Turn(TIMEOUT, TIMEOUT), Turn("Which TLS versions does the API accept?", second)]
    readings = CarrySubject().readings("Which ciphers are allowed?", history)
    assert readings == ("Which ciphers are allowed?", "Which ciphers are allowed (TLS versions does the API accept)?")
    assert rewrite("Is it configurable?", history).question == "Is TLS versions does the API accept configurable?"
    assert CarrySubject().readings("Which ciphers are allowed?", [Turn("?", "?")]) == ("Which ciphers are allowed?",)


def test_an_elliptical_follow_up_or_a_first_question_has_one_reading_and_prefer_is_not_asked():
    def prefer(readings):  # noqa: ANN001, ANN202
        raise AssertionError(f"nothing to choose between: {readings}")

    history = [Turn(REGION, REGION)]
    assert rewrite("How do I do that?", history, prefer=prefer).question == (
        CarrySubject().condense("How do I do that?", history))
    assert not rewrite("Which TLS versions does the API accept?", [], prefer=prefer).rewritten


def test_an_llm_condenser_decides_alone_even_when_prefer_is_given():
    model = Model(json.dumps({"question": "Which TLS versions does the API accept?"}))
    result = rewrite("Which TLS versions does the API accept?", [Turn(REGION, REGION)], LLMCondenser(model),
                     prefer=lambda readings: readings[-1])
    assert result.question == "Which TLS versions does the API accept?" and len(model.messages) == 1
