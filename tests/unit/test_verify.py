"""The verifier is the proof behind every chip: each failure mode gets a test."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from answer.contract.draft import Draft, DraftClaim, Quote, parse_draft
from answer.contract.support import UNSUPPORTED, DeterministicChecker
from answer.contract.verify import MIN_QUOTE_CHARS, verify
from ingest.normalize import find_quote, normalize_quote
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import LIMITS, REFUNDS, make_chunk

SECRET = make_chunk("internal/overrides", "override-limits",
                    "Support can override refunds up to 90 days after the charge.", access=("staff",))
ANON = Viewer.anonymous()


def rset(*chunks, viewer=ANON):
    return renumber("q", viewer, [(c, 1.0) for c in chunks])


def draft(*claims, refused=False):
    return parse_draft(json.dumps({"refused": refused, "claims": [
        {"quotes": [{"handle": h, "quote": q} for h, q in quotes], "claim": text} for quotes, text in claims]}))


def test_verbatim_quote_becomes_a_citation_with_exact_span_and_deep_link():
    result = verify(draft(([("c1", "Refunds are available within 14 days of the charge.")],
                           "Refunds are available within 14 days of the charge.")), rset(REFUNDS), ANON)
    [claim] = result.claims
    [citation] = claim.citations
    assert claim.status == "supported"
    assert REFUNDS.text[citation.start:citation.end] == citation.quote
    assert citation.url.startswith("/docs/billing/refunds#refund-windows:~:text=")
    assert citation.chunk_id == "doc:billing/refunds#refund-windows"
    assert (citation.doc_version, citation.hash) == (REFUNDS.doc_version, REFUNDS.hash)
    assert result.clean


def test_phantom_handle_is_dropped_and_recorded():
    result = verify(draft(([("c9", "Refunds are available within 14 days")], "Refunds within 14 days.")), rset(REFUNDS), ANON)
    assert result.claims == ()
    assert result.phantoms == 1
    assert any("c9 does not exist" in p.text for p in result.problems)


def test_paraphrased_quote_is_rejected():
    result = verify(draft(([("c1", "You can get a refund within 14 days of being charged.")], "Refunds within 14 days.")),
                    rset(REFUNDS), ANON)
    assert result.claims == ()
    assert any("quote not in c1" in p.text for p in result.problems)


def test_quote_from_another_retrieved_chunk_is_rejected_with_a_hint():
    result = verify(draft(([("c1", "The maximum payload size is 256 KB.")], "The maximum payload size is 256 KB.")),
                    rset(REFUNDS, LIMITS), ANON)
    assert result.claims == ()
    assert any("it is in c2" in p.text for p in result.problems)


def test_short_quotes_are_rejected():
    result = verify(draft(([("c1", "14 days")], "Refunds take 14 days.")), rset(REFUNDS), ANON)
    assert result.claims == ()
    assert any("shorter than" in p.text for p in result.problems)


def test_wrong_number_is_unsupported_and_not_shown():
    result = verify(draft(([("c1", "Refunds are available within 14 days of the charge.")],
                           "Refunds are available within 90 days of the charge.")), rset(REFUNDS), ANON)
    [claim] = result.claims
    assert claim.status == "unsupported"
    assert result.shown == ()


def test_negation_flip_is_unsupported():
    result = verify(draft(([("c1", "Refunds are available within 14 days of the charge.")],
                           "Refunds are not available within 14 days of the charge.")), rset(REFUNDS), ANON)
    assert result.claims[0].status == "unsupported"


def test_claim_adding_terms_is_partial_not_rounded_up():
    result = verify(draft(([("c1", "Refunds are available within 14 days of the charge.")],
                           "Refunds are available within 14 days of the charge, via the billing dashboard portal.")),
                    rset(REFUNDS), ANON)
    assert result.claims[0].status == "partial"
    assert result.shown == result.claims


def test_support_needing_two_chunks_is_flagged_stitched():
    result = verify(draft(([("c1", "Refunds are available within 14 days of the charge."),
                            ("c2", "The maximum payload size is 256 KB.")],
                           "Refunds are available within 14 days and the maximum payload size is 256 KB.")),
                    rset(REFUNDS, LIMITS), ANON)
    [claim] = result.claims
    assert claim.status == "supported" and claim.stitched


def test_restricted_chunk_can_never_be_cited_even_if_retrieved():
    # Defence in depth: even if retrieval leaked a staff chunk, the verifier refuses it.
    result = verify(draft(([("c1", "Support can override refunds up to 90 days after the charge.")],
                           "Support can override refunds up to 90 days.")), rset(SECRET), ANON)
    assert result.claims == ()
    assert any("not readable" in p.text for p in result.problems)
    staff = Viewer.of(["staff"])
    assert verify(draft(([("c1", "Support can override refunds up to 90 days after the charge.")],
                         "Support can override refunds up to 90 days after the charge.")), rset(SECRET, viewer=staff), staff).claims


@pytest.mark.parametrize("quote", [
    "refunds are AVAILABLE within 14 days",            # case
    "Refunds  are available\nwithin 14 days",          # whitespace
    "the maximum payload size is 256 KB. Larger events are rejected with error FD-4131",  # backticks
    "“The maximum payload size is 256 KB.”",           # typographic quotes around
])
def test_normalization_forgives_only_presentation(quote):
    assert find_quote(quote, REFUNDS.text) or find_quote(quote, LIMITS.text)


def test_quote_span_maps_back_to_the_original_text():
    start, end = find_quote("error FD-4131", LIMITS.text)
    assert LIMITS.text[start:end] == "error `FD-4131"


def test_malformed_json_is_a_format_error():
    from answer.errors import DraftFormatError

    for reply in ("", "I think the answer is 14 days.", '{"claims": [{"claim": 3}]}', "{not json"):
        with pytest.raises(DraftFormatError):
            parse_draft(reply)


# --- property: whatever a generator proposes, every citation that survives is sound -------------------------

WORDS = ["refunds", "are", "available", "within", "14", "days", "not", "the", "payload", "is", "256", "KB",
         "`FD-4131`", "**never**", "“quoted”", "retry—backoff", "[link](http://x)", "forever", "\n", "  ", "é", "ﬁle"]
ACCESS = [("public",), ("staff",), ("public", "staff"), ("partners",)]


@st.composite
def scenario(draw):
    count = draw(st.integers(1, 5))
    chunks = [
        make_chunk(f"p/{n}", f"a{n}", " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=3, max_size=30))),
                   access=draw(st.sampled_from(ACCESS)))
        for n in range(count)
    ]
    viewer = Viewer.of(draw(st.lists(st.sampled_from(["staff", "partners"]), max_size=2)))
    retrieved = renumber("q", viewer, [(c, 1.0) for c in chunks])  # leaky on purpose: restricted chunks included
    handles = [*retrieved.handles, "c0", "c99", "C1", " c1", chunks[0].id, ""]

    def quote() -> str:
        source = draw(st.sampled_from(chunks)).text
        if draw(st.booleans()):
            start = draw(st.integers(0, len(source)))
            return source[start : draw(st.integers(start, len(source)))]
        return draw(st.one_of(st.text(max_size=40), st.sampled_from(WORDS)))

    claims = []
    for _ in range(draw(st.integers(0, 4))):
        quotes = tuple(Quote(draw(st.sampled_from(handles)), quote()) for _ in range(draw(st.integers(1, 3))))
        text = draw(st.one_of(st.just(quotes[0].text), st.text(max_size=60), st.sampled_from(WORDS)))
        claims.append(DraftClaim(quotes, text))
    return Draft(refused=draw(st.booleans()), claims=tuple(claims)), retrieved, viewer


@settings(max_examples=200, deadline=None)
@given(scenario())
def test_every_surviving_citation_resolves_matches_and_is_readable(case):
    draft_, retrieved, viewer = case
    result = verify(draft_, retrieved, viewer)
    for claim in result.claims:
        assert claim.citations
        for citation in claim.citations:
            hit = retrieved.get(citation.handle)
            assert hit is not None and hit.chunk.id == citation.chunk_id
            assert hit.chunk.text[citation.start : citation.end] == citation.quote
            assert viewer.may_read(hit.chunk.access)
            assert (citation.hash, citation.doc_version) == (hit.chunk.hash, hit.chunk.doc_version)
            assert len(normalize_quote(citation.quote)) >= MIN_QUOTE_CHARS
    for claim in result.shown:
        assert claim.status != UNSUPPORTED
        assert DeterministicChecker().check(claim.text, [c.quote for c in claim.citations]).status != UNSUPPORTED
    assert len(result.claims) + len(result.dropped_claims) == len(draft_.claims)


def test_text_fragment_matches_rendered_text_not_markdown():
    from answer.contract.verify import text_fragment

    # Rendered pages show `FD-4131` as code without backticks; '-' has a meaning in the directive.
    assert text_fragment("rejected with error `FD-4131`") == ":~:text=rejected%20with%20error%20FD%2D4131"
    long = text_fragment("Plan | Requests per second | Burst capacity Free | 10 | 20 Starter | 50")
    assert "|" not in long and "%7C" not in long
    assert long.count(",") == 1  # start,end form for long quotes


def test_a_handle_cut_from_the_prompt_by_the_budget_counts_as_a_phantom():
    from dataclasses import replace as with_

    both = rset(REFUNDS, LIMITS)
    quote = "The maximum payload size is 256 KB."
    seen_all = verify(draft(([("c2", quote)], quote)), both, ANON)
    assert seen_all.claims  # c2 was in the prompt
    only_c1 = verify(with_(draft(([("c2", quote)], quote)), shown=("c1",)), both, ANON)
    assert only_c1.claims == () and only_c1.phantoms == 1
    assert any("c2 does not exist; cite only c1" in p.text for p in only_c1.problems)


@pytest.mark.parametrize("empty", ["...", "", " - ", "…"])
def test_a_claim_that_states_nothing_is_never_shown_even_with_a_verbatim_quote(empty):
    # A small model copied the prompt's example claim "..." beside a right sentence; vacuously "supported" before.
    result = verify(draft(([("c1", "Refunds are available within 14 days of the charge.")], empty)), rset(REFUNDS), ANON)
    [claim] = result.claims
    assert claim.status == UNSUPPORTED and result.shown == ()
    assert any("states nothing" in p.text for p in result.problems)
