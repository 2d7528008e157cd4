"""The one text module: the word rules the index, the checker and dedupe share."""

from __future__ import annotations

import uuid

from answer.contract.support import DeterministicChecker
from ingest.dedupe import find_duplicates
from ingest.text import NEGATION_WORDS, NEGATIONS, has_negation, plain_words, shingles, stem
from retrieval.provision import DEFAULT_MODEL_NAME, is_default_model, recorded_model_id
from tests.fakes import make_chunk


def test_every_negation_the_checker_knows_also_splits_into_a_word_dedupe_compares() -> None:
    for negation in NEGATIONS:
        assert has_negation(negation)
        assert set(plain_words(negation)) & NEGATION_WORDS, negation


def test_shingles_cover_short_texts_whole() -> None:
    assert shingles(["a", "b"]) == frozenset({("a", "b")})
    assert shingles(["a", "b", "c", "d"], 3) == frozenset({("a", "b", "c"), ("b", "c", "d")})
    assert shingles(plain_words("One two three four five six"), 5) == frozenset(
        {("one", "two", "three", "four", "five"), ("two", "three", "four", "five", "six")})


def test_a_negation_the_checker_rejects_also_keeps_two_near_copies_apart() -> None:
    base = "Refunds are issued to the original card within fourteen days of the request, for every plan we sell today"
    negated = base.replace("are issued", "are neither issued")
    assert DeterministicChecker().check(negated, [base]).status == "unsupported"
    assert find_duplicates([make_chunk("a", "a", base), make_chunk("b", "a", negated)]) == {}
    assert find_duplicates([make_chunk("a", "a", base), make_chunk("b", "a", base + ".")]) == {"doc:b#a": "doc:a#a"}


def test_one_answer_to_is_this_the_default_model() -> None:
    for name in ("", DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}"):
        assert is_default_model(name)
    for name in ("BAAI/bge-small-en-v1.5", f"/models/{DEFAULT_MODEL_NAME}", "all-MiniLM-L12-v2"):
        assert not is_default_model(name)


def test_a_folder_holding_the_default_model_is_recorded_as_the_default() -> None:
    assert recorded_model_id(f"/srv/models/{DEFAULT_MODEL_NAME}", f"/srv/models/{DEFAULT_MODEL_NAME}") == DEFAULT_MODEL_NAME
    assert recorded_model_id("", f"/data/models/{DEFAULT_MODEL_NAME}") == DEFAULT_MODEL_NAME
    assert recorded_model_id("BAAI/bge-small-en-v1.5", "BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"


def test_stemming_from_many_threads_at_once_gives_each_word_its_own_stem():
    # Snowball's stemmer object holds the word being stemmed: shared across threads, concurrent answers raised
    # IndexError or returned another word's stem. Fresh words each run, so the cache cannot hide the race.
    from concurrent.futures import ThreadPoolExecutor

    roots = ["configur", "retent", "deliver", "subscript", "generat", "authent", "expir", "migrat"]
    endings = ["ation", "ations", "ing", "ed", "es", "ment", "ively", "ational"]
    salt = uuid.uuid4().hex[:6].translate(str.maketrans("0123456789", "ghijklmnop"))
    words = [f"{salt}{k}{r}{e}{n}" for k in "abcdefghijklmnopqrst" for r in roots for e in endings
             for n in ("", "s", "al", "ity")]
    with ThreadPoolExecutor(8) as pool:
        threaded = list(pool.map(stem, words))
    assert threaded == [stem.__wrapped__(w) for w in words]


def test_numbers_written_as_words_read_as_digits_where_they_count_something() -> None:
    from ingest.text import numerals

    assert numerals("retried three times, Twenty-five seconds, forty two days") == "retried 3 times, 25 seconds, 42 days"
    assert numerals("kept for one year; only one active key; incremented by one.") == (
        "kept for 1 year; only 1 active key; incremented by 1.")
    assert numerals("one hundred deliveries, five thousand calls, 2 million events") == (
        "100 deliveries, 5000 calls, 2000000 events")
    # one number is one run of words on one line, in a form prose writes; any other run stays words
    assert numerals("Limits:\n- Seats: twenty\n- Three projects") == "Limits:\n- Seats: 20\n- 3 projects"
    assert numerals("two hundred fifty requests; one hundred and fifty; five hundred thousand") == (
        "two hundred fifty requests; one hundred and fifty; five hundred thousand")
    assert numerals("retried twice; retried once. once per day; a seven-day trial") == (
        "retried 2 times; retried 1 time. 1 time per day; a 7-day trial")
    # a pronoun, a conjunction, part of a hyphened word, code, a path or a URL says no amount
    for text in ("one of the plans", "no one", "the one you need", "create a new one for each service.",
                 "when one is set", "one or more endpoints", "events one at a time", "a one-time code",
                 "two-factor login", "someone", "ones", "once you deploy", "Once a delivery fails",
                 "run `ferry init --preset three`", "press `` ` `` or `--preset three`", "see https://example.com/guides/three",
                 "a seven-member team", "No. One SSO connection"):
        assert numerals(text) == text
