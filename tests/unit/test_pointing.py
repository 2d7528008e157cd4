"""Quoting by pointing: the model names sentence ids, the code copies the sentence, the verifier still decides."""

from __future__ import annotations

import json

import pytest

from answer.contract.verify import verify
from answer.errors import DraftFormatError
from answer.llm.pointing import numbered_text, parse_pointed, point_schema
from answer.llm.prompt import build_prompt
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import LIMITS, REFUNDS, make_chunk

ANON = Viewer.anonymous()
HOW_TO = make_chunk("start", "create", (
    "Create a project with the following command:\n\n```bash\nnpm create ferry@latest\n```\n\n"
    "```bash\npip install ferrydeck\n```\n\n"
    "The wizard asks for a name. It then installs the SDK.\n\n```bash\nferry sdk install\n```\n\n"
    "Plan | Requests per second\n--- | ---\nStarter | 50\nScale | 500"), title="Start", heading="Create a project")


def rset(*chunks):  # noqa: ANN201
    return renumber("q", ANON, [(c, 1.0) for c in chunks])


def reply(*claims: tuple[list[str], str], refused: bool = False) -> str:
    return json.dumps({"claims": [{"sentences": ids, "claim": text} for ids, text in claims], "refused": refused})


def test_every_id_quotes_a_verbatim_run_of_its_own_chunk_in_reading_order():
    [hit] = rset(HOW_TO).hits
    shown, refs = numbered_text(hit)
    assert list(refs) == [f"c1.{n}" for n in range(1, len(refs) + 1)]
    positions = [HOW_TO.text.index(p.text) for p in refs.values()]
    assert positions == sorted(positions)
    assert all(p.handle == "c1" and p.text in HOW_TO.text for p in refs.values())
    for ref, pointed in refs.items():  # what the model sees after an id is what the id quotes
        after = shown.split(f"[{ref}]", 1)[1].lstrip("\n ")
        assert after.startswith(pointed.text.split("\n")[0])


def test_a_sentence_announcing_a_command_quotes_the_command_and_a_bare_code_block_has_its_own_id():
    [hit] = rset(HOW_TO).hits
    _, refs = numbered_text(hit)
    texts = [p.text for p in refs.values()]
    assert "Create a project with the following command:\n\n```bash\nnpm create ferry@latest\n```" in texts
    assert "```bash\npip install ferrydeck\n```" in texts  # no sentence announces it: the block alone
    # A sentence ending its paragraph with a period right before a block carries the command too.
    assert "It then installs the SDK.\n\n```bash\nferry sdk install\n```" in texts
    assert not any(t.startswith("```bash\nnpm create") for t in texts)  # announced: quoted with its sentence only
    assert "Starter | 50" in texts and "Plan | Requests per second" not in texts  # rows, never the header


def test_a_later_tab_s_command_is_quoted_with_its_name_and_the_first_with_the_sentence_before_the_tabs():
    chunk = make_chunk("start", "install", "Install the SDK with your package manager.\n\n```bash\nnpm i ferry\n```"
                       "\n\npnpm:\n\n```bash\npnpm add ferry\n```", title="Start", heading="Install")
    texts = [p.text for p in numbered_text(rset(chunk).hits[0])[1].values()]
    assert texts == [chunk.text[: chunk.text.index("\n\npnpm:")],  # the sentence and the first tab's block
                     "pnpm:\n\n```bash\npnpm add ferry\n```"]  # never a bare block


def test_named_ids_become_exact_quotes_that_verify():
    retrieved = rset(REFUNDS, LIMITS)
    prompt = build_prompt("How long are refunds available?", retrieved, quoting="point")
    draft = parse_pointed(reply((["c1.1"], "Refunds are available within 14 days of the charge.")), prompt.refs)
    [claim] = verify(draft, retrieved, ANON).claims
    assert claim.status == "supported"
    assert [c.quote for c in claim.citations] == ["Refunds are available within 14 days of the charge."]
    assert draft.raw.startswith('{"claims"')  # the audit keeps the ids the model named


def test_an_id_never_shown_cannot_verify():
    retrieved = rset(REFUNDS)
    prompt = build_prompt("How long are refunds available?", retrieved, quoting="point")
    unknown_handle = parse_pointed(reply((["c7.1"], "Refunds within 14 days.")), prompt.refs)
    result = verify(unknown_handle, retrieved, ANON)
    assert (result.claims, result.phantoms) == ((), 1)
    unknown_sentence = parse_pointed(reply((["c1.9"], "Refunds within 14 days.")), prompt.refs)
    assert verify(unknown_sentence, retrieved, ANON).claims == ()


def test_bracketed_and_repeated_ids_are_read_once():
    prompt = build_prompt("q", rset(REFUNDS), quoting="point")
    draft = parse_pointed(reply((["[c1.1]", "c1.1", " c1.2 "], "Refunds: 14 days; annual plans pro rata.")), prompt.refs)
    assert [q.text for q in draft.claims[0].quotes] == [REFUNDS.text.split(". ")[0] + ".", "Annual plans are refunded pro rata."]


def test_a_claim_without_a_sentence_list_is_a_format_error_keeping_the_raw_reply():
    prompt = build_prompt("q", rset(REFUNDS), quoting="point")
    bad = json.dumps({"claims": [{"quotes": [{"handle": "c1", "quote": "x"}], "claim": "c"}], "refused": False})
    with pytest.raises(DraftFormatError) as caught:
        parse_pointed(bad, prompt.refs)
    assert caught.value.raw == bad


def test_the_schema_enumerates_exactly_the_ids_shown_and_the_prompt_cites_no_handle_list():
    prompt = build_prompt("How long are refunds available?", rset(REFUNDS, LIMITS), quoting="point")
    ids = prompt.schema["properties"]["claims"]["items"]["properties"]["sentences"]["items"]["enum"]
    assert ids == list(prompt.refs) == ["c1.1", "c1.2", "c2.1", "c2.2"]
    user = prompt.messages[1]["content"]
    assert "[c2.2] Larger events are rejected" in user
    assert "Cite only these handles" not in user
    assert point_schema([])["properties"]["claims"]["items"]["properties"]["sentences"]["items"] == {"type": "string"}


def test_a_retry_names_kept_claims_by_their_ids():
    retrieved = rset(REFUNDS)
    kept = 'claim 1 passed verification; keep it and its quotes unchanged: c1 "Annual plans are refunded pro rata."'
    prompt = build_prompt("q", retrieved, quoting="point", feedback=[kept])
    assert "keep it and its quotes unchanged: c1.2" in prompt.messages[1]["content"]


def test_copy_mode_is_unchanged_by_pointing():
    prompt = build_prompt("How long are refunds available?", rset(REFUNDS), quoting="copy")
    assert prompt.refs == {}
    assert "[c1.1]" not in prompt.messages[1]["content"]
    assert prompt.messages[1]["content"].endswith("Cite only these handles: c1. Reply with the JSON object only.")


def test_a_claim_left_as_the_examples_placeholder_states_its_sentences_in_the_docs_words():
    retrieved = rset(REFUNDS)
    prompt = build_prompt("How long are refunds available?", retrieved, quoting="point")
    draft = parse_pointed(reply((["c1.1"], "...")), prompt.refs)
    assert draft.claims[0].text == "Refunds are available within 14 days of the charge."
    [claim] = verify(draft, retrieved, ANON).shown
    assert claim.status == "supported"
    # A line of the prompt copied as the claim (the 1.5B wrote rule 1) says nothing about the docs either.
    rule = parse_pointed(reply((["c1.1"], "The first claim is the direct answer to the question.")), prompt.refs)
    assert rule.claims[0].text == "Refunds are available within 14 days of the charge."
    own = parse_pointed(reply((["c1.1"], "Refunds can be asked for within 14 days.")), prompt.refs)
    assert own.claims[0].text == "Refunds can be asked for within 14 days."
    unknown = parse_pointed(reply((["c1.9"], "...")), prompt.refs)  # nothing known to state: left empty, never shown
    assert unknown.claims[0].text == "..." and verify(unknown, retrieved, ANON).shown == ()
