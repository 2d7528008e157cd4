"""Mapping provider-native citations to drafts, and choosing the generator from settings.

The wire path (litellm against scripted provider servers) is tested in
tests/integration/test_provider_citations.py; these cases pin the mapping
rules themselves, where a slip would re-attribute or leak a citation.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from answer.contract.support import DeterministicChecker
from answer.contract.verify import verify
from answer.errors import DraftFormatError
from answer.generate import ExtractiveGenerator
from answer.llm.client import LiteLLMGenerator
from answer.llm.provider_citations import (
    ANTHROPIC,
    GEMINI,
    CitedWriting,
    Document,
    ProviderCitationGenerator,
    anthropic_draft,
    citation_provider,
    documents,
    gemini_draft,
    request_messages,
)
from answer.services import build_generator, build_writer
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import LIMITS, REFUND_TEXT, REFUNDS, make_chunk
from tests.scripted_providers import cite, grounded, support
from web.settings import Settings

SECRET = make_chunk("internal/overrides", "override-limits", "Support can override refunds up to 90 days.",
                    title="Overrides", heading="Override limits", access=("staff",))
DOCS = (Document("c1", "Refunds › Refund windows", REFUND_TEXT), Document("c2", "Limits › Payload size", LIMITS.text))
QUOTE = "Refunds are available within 14 days of the charge."


@pytest.mark.parametrize("model, provider", [
    ("anthropic/claude-sonnet-4-5", ANTHROPIC), ("claude-3-5-haiku-latest", ANTHROPIC), ("gemini/gemini-2.5-flash", GEMINI),
    ("openai/gpt-4o-mini", None), ("ollama/llama3.1", None), ("bedrock/anthropic.claude-v2", None),
])
def test_only_providers_with_native_citations_are_recognised(model, provider):
    assert citation_provider(model) == provider


def _settings(**env: str) -> Settings:
    return Settings.from_env({"LLM_ROLE": "draft"} | env, dotenv=False)  # the model drafts: its citations matter


@pytest.mark.parametrize("env, kind", [
    ({"LLM_MODEL": "anthropic/claude-sonnet-4-5"}, ProviderCitationGenerator),
    ({"LLM_MODEL": "gemini/gemini-2.5-flash"}, ProviderCitationGenerator),
    ({"LLM_MODEL": "openai/gpt-4o-mini"}, LiteLLMGenerator),
    ({"LLM_MODEL": "anthropic/claude-sonnet-4-5", "LLM_CITATIONS": "json"}, LiteLLMGenerator),
    ({"LLM_MODEL": "gemini/gemini-2.5-flash", "LLM_CITATIONS": "Provider"}, ProviderCitationGenerator),
])
def test_llm_citations_defaults_to_the_providers_own_feature_where_it_exists(env, kind):
    generator = build_generator(_settings(**env, LLM_API_BASE="http://127.0.0.1:9", LLM_TIMEOUT="7"))
    assert type(generator) is kind
    client = generator.client if isinstance(generator, ProviderCitationGenerator) else generator
    assert (client.api_base, client.timeout) == ("http://127.0.0.1:9", 7.0)  # the same client settings either way


def test_with_llm_role_write_the_offline_stage_drafts_and_the_model_only_writes():
    settings = Settings.from_env({"LLM_MODEL": "anthropic/claude-sonnet-4-5", "LLM_API_BASE": "http://127.0.0.1:9",
                                  "LLM_TIMEOUT": "7"}, dotenv=False)
    assert settings.llm_role == "write"  # the default with a model
    assert type(build_generator(settings)) is ExtractiveGenerator
    writer = build_writer(settings, DeterministicChecker())
    assert writer is not None and isinstance(writer.model, CitedWriting)  # the provider numbers the sentences
    assert (writer.model.client.api_base, writer.model.client.timeout) == ("http://127.0.0.1:9", 7.0)
    plain = build_writer(replace(settings, llm_citations="json"), DeterministicChecker())
    assert plain is not None and isinstance(plain.model, LiteLLMGenerator)
    assert build_writer(_settings(LLM_MODEL="openai/gpt-4o-mini"), DeterministicChecker()) is None  # draft mode
    with pytest.raises(ValueError, match="LLM_ROLE must be 'write'.*'draft'.*got 'both'"):
        Settings.from_env({"LLM_ROLE": "both"}, dotenv=False)


def test_llm_citations_provider_with_a_model_without_the_feature_is_a_clear_error():
    with pytest.raises(ValueError, match="needs an Anthropic or Gemini model.*openai/gpt-4o-mini.*LLM_CITATIONS=json"):
        build_generator(_settings(LLM_MODEL="openai/gpt-4o-mini", LLM_CITATIONS="provider"))
    with pytest.raises(ValueError, match="LLM_CITATIONS must be 'provider' or 'json'.*'native'"):
        _settings(LLM_CITATIONS="native")


def test_documents_are_the_readable_hits_in_handle_order_with_page_title_and_heading_path():
    rset = renumber("q", Viewer.anonymous(), [(REFUNDS, 1.0), (SECRET, 0.9), (LIMITS, 0.8)])  # a leaked staff chunk
    assert documents(rset) == (Document("c1", "Refunds › Refund windows", REFUND_TEXT), Document("c3", "Limits › Payload size", LIMITS.text))
    for provider in (ANTHROPIC, GEMINI):
        assert "override" not in str(request_messages(provider, "q", documents(rset)))


@pytest.mark.parametrize("index", [-1, 2, 99])
def test_an_anthropic_index_outside_what_was_sent_never_wraps_onto_a_sent_document(index):
    draft = anthropic_draft("x", [[cite(index, QUOTE) | {"supported_text": QUOTE}]], DOCS)
    [quote] = draft.claims[0].quotes
    assert quote.handle == f"document {index}"
    rset = renumber("q", Viewer.anonymous(), [(REFUNDS, 1.0), (LIMITS, 0.9)])
    checked = verify(draft, rset, rset.viewer)
    assert checked.claims == () and checked.phantoms == 1


def test_anthropic_range_is_checked_against_the_chunk_and_recorded():
    matching = cite(0, QUOTE, 0, len(QUOTE))
    elsewhere = cite(0, QUOTE, 53, 87)
    draft = anthropic_draft("x", [[matching | {"supported_text": QUOTE}, elsewhere | {"supported_text": QUOTE}]], DOCS)
    ranges = [q.provider["range"] for q in draft.claims[0].quotes]
    assert ranges[0] == "matches"
    assert ranges[1].startswith("mismatch: the chunk holds 'nnual plans are refunded pro rata.'")
    assert draft.claims[0].quotes[0].provider["raw"] == matching  # as received, without litellm's supported_text


@pytest.mark.parametrize("citation", [
    {"cited_text": QUOTE, "document_index": True},  # a bool is not an index
    {"cited_text": QUOTE, "document_index": "0"},
    {"cited_text": None, "document_index": 0},
])
def test_a_malformed_anthropic_citation_is_a_format_error_keeping_the_raw_reply(citation):
    with pytest.raises(DraftFormatError) as caught:
        anthropic_draft("x", [[citation | {"supported_text": QUOTE}]], DOCS)
    assert QUOTE in caught.value.raw or "null" in caught.value.raw


def test_gemini_maps_by_uri_then_by_a_title_naming_exactly_one_document():
    text = "Refunds last 14 days. Payloads are capped."
    twins = DOCS + (Document("c3", DOCS[0].title, "Refunds are available within 14 days of the charge, twice."),)
    metadata = {"groundingChunks": [grounded("c2", LIMITS.text), {"retrievedContext": {"title": "Limits › Payload size", "text": "a"}},
                                    {"retrievedContext": {"title": DOCS[0].title, "text": QUOTE}}],
                "groundingSupports": [support("Payloads are capped.", 0, 1, 2, text=text)]}
    draft = gemini_draft(text, [metadata], twins)
    assert [q.handle for q in draft.claims[0].quotes] == ["c2", "c2", "document 'Refunds › Refund windows'"]  # ambiguous title


def test_gemini_segment_offsets_count_utf8_bytes():
    text = "Rückerstattungen: Refunds last 14 days."
    segment = support("Refunds last 14 days.", 0, text=text)["segment"]
    del segment["text"]
    draft = gemini_draft(text, {"groundingChunks": [grounded("c1", QUOTE)],
                                "groundingSupports": [{"segment": segment, "groundingChunkIndices": [0]}]}, DOCS)
    assert draft.claims[0].text == "Refunds last 14 days."


@pytest.mark.parametrize("text, refused, claims", [("NOT IN THE DOCS", True, 0), ("Not in the docs.", True, 0), ("Refunds last forever.", False, 1)])
def test_a_reply_without_citations_is_a_refusal_or_an_unevidenced_claim(text, refused, claims):
    for draft in (anthropic_draft(text, None, DOCS), gemini_draft(text, None, DOCS)):
        assert (draft.refused, len(draft.claims)) == (refused, claims)
        assert all(c.quotes == () for c in draft.claims)


def test_cited_stretches_take_their_quote_numbers_before_their_stop_and_uncited_text_stays():
    from answer.llm.provider_citations import NOT_SENT, _marked

    text = "Install it with Homebrew.```bash\nbrew install ferry\n```Logs are kept 30 days."
    marked = _marked(text, [("Install it with Homebrew.", [2]), ("Logs are kept 30 days.", [1, NOT_SENT]),
                            ("A stretch the reply does not hold.", [3])])
    assert marked.startswith("Install it with Homebrew [2]. ```bash\nbrew install ferry\n```")  # the block kept
    assert "Logs are kept 30 days [1] [0]." in marked  # an index never sent is a number no quote has
    assert marked.endswith("\nA stretch the reply does not hold. [3]")  # what was cited is never lost
