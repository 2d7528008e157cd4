"""Reading a draft's claims while the model is still writing it: whole claim objects only, each once."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from answer.llm.incremental import ClaimScanner

CLAIMS = [
    {"sentences": ["c1.2"], "claim": "Use {braces} and \"quotes\" freely: ] } [ {"},
    {"quotes": [{"handle": "c2", "quote": "a \\ backslash and a } brace"}], "claim": "Second."},
]
REPLY = json.dumps({"claims": CLAIMS, "refused": False})


def feed_all(pieces: list[str]) -> list[tuple[int, dict]]:
    scanner = ClaimScanner()
    return [(n, claim) for n, piece in enumerate(pieces) for claim in scanner.feed(piece)]


def test_each_claim_is_returned_once_when_its_closing_brace_arrives():
    seen = feed_all(list(REPLY))
    assert [claim for _, claim in seen] == CLAIMS
    first_end = REPLY.index("}, {") + 1  # the character that closes the first claim
    assert seen[0][0] == first_end - 1


def test_a_half_written_claim_is_never_returned():
    cut = REPLY.index('"Second."')
    assert [c for _, c in feed_all([REPLY[:cut]])] == CLAIMS[:1]


@given(st.lists(st.integers(min_value=1, max_value=len(REPLY)), max_size=12))
def test_any_split_of_the_reply_gives_the_same_claims(cuts):
    points = sorted(set(cuts))
    pieces = [REPLY[a:b] for a, b in zip([0, *points], [*points, len(REPLY)], strict=True)]
    assert [c for _, c in feed_all(pieces)] == CLAIMS


def test_a_fence_or_preamble_before_the_object_and_other_keys_are_ignored():
    reply = 'Sure "here": ```json\n' + json.dumps({"refused": False, "note": [{"x": 1}], "claims": CLAIMS[:1]}) + "\n```"
    assert [c for _, c in feed_all([reply])] == CLAIMS[:1]


def test_an_item_that_is_not_an_object_is_skipped_and_the_next_one_read():
    reply = '{"claims": ["oops", 3, {"claim": "x", "sentences": ["c1.1"]}], "refused": false}'
    assert [c for _, c in feed_all([reply])] == [{"claim": "x", "sentences": ["c1.1"]}]
