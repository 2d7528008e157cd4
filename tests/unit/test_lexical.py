"""BM25 lexical search: tokenization, ranking, ACL before scoring, freshness against the store."""

from __future__ import annotations

import pytest

from ingest.text import identifiers, light_stem, tokenize
from retrieval.lexical import LexicalIndex
from retrieval.snapshot import IndexSnapshot
from tests.fakes import HashEmbedder, make_chunk
from tests.memory_index import MemoryIndex

PUBLIC = frozenset({"public"})
STAFF = frozenset({"public", "staff"})


def store_with(*chunks):
    return MemoryIndex(HashEmbedder(), chunks)


@pytest.mark.parametrize("identifier", ["--dry-run", "fd-4291", "max_retries", "ordering_key", "ferry.yaml"])
def test_identifiers_survive_as_single_tokens(identifier):
    tokens = tokenize(f"What does {identifier.upper() if identifier.startswith('fd') else identifier} do?")
    assert identifier in tokens


def test_identifier_parts_are_indexed_too_so_plain_words_meet_them():
    assert {"dry", "run"} <= set(tokenize("ferry deploy --dry-run"))
    assert "max_retries" in identifiers("set max_retries to 5") and "set" not in identifiers("set max_retries to 5")


def test_stopwords_and_question_words_are_dropped():
    tokens = tokenize("How do I get the signing secret of my endpoint?")
    assert not {"how", "do", "i", "the", "of", "my", "get"} & set(tokens)
    assert {"sign", "secret", "endpoint"} <= set(tokens)


def test_light_stem_folds_plurals_and_verb_forms_but_not_short_words():
    assert light_stem("retries") == light_stem("retry")
    assert light_stem("endpoints") == light_stem("endpoint")
    assert light_stem("signing") == light_stem("sign")
    assert light_stem("access") == "access" and light_stem("status") == "status" and light_stem("gas") == "gas"


def test_rare_term_ranks_its_chunk_first_and_unmatched_chunks_are_not_returned():
    chunks = [
        make_chunk("a", "one", "Refunds are available within 14 days of the charge."),
        make_chunk("b", "two", "Deliveries are retried with exponential backoff."),
        make_chunk("c", "three", "Invoices are issued on the billing anchor date."),
    ]
    hits = LexicalIndex.build(chunks).search("when are refunds available?", 10)
    assert [c.id for c, _ in hits] == ["doc:a#one"]
    assert LexicalIndex.build(chunks).search("zebra", 10) == []


def test_title_and_heading_path_are_searchable():
    chunk = make_chunk("guides/ordered", "overview", "Events share a key.", title="Ordered delivery", heading="Overview")
    other = make_chunk("x", "y", "Unrelated text about invoices.")
    hits = LexicalIndex.build([other, chunk]).search("ordered delivery", 5)
    assert hits[0][0].id == chunk.id


def test_restricted_chunk_is_never_scored_for_a_viewer_who_may_not_read_it():
    secret = make_chunk("internal/refunds", "limits", "Support agent override limit is 500 dollars.", access=("staff",))
    public = make_chunk("billing/refunds", "policy", "Refund policy for monthly plans.")
    searcher = IndexSnapshot(store_with(secret, public))
    for k in (1, 5, 50):
        assert secret.id not in [c.id for c, _ in searcher.search(secret.text, k, PUBLIC)]
    assert searcher.search(secret.text, 5, STAFF)[0][0].id == secret.id
    # The anonymous index holds only what anonymous may read (term statistics included).
    assert [c.id for c in searcher.index_for(PUBLIC).chunks] == [public.id]


def test_index_rebuilds_when_the_store_grows():
    store = store_with(make_chunk("a", "one", "Refunds within 14 days."))
    searcher = IndexSnapshot(store)
    assert searcher.search("webhook signature", 5, PUBLIC) == []
    store.add([make_chunk("b", "two", "Every webhook carries a signature header.")])
    assert searcher.settle(timeout=10.0)  # the next snapshot is prepared in the background and swapped in
    assert [c.id for c, _ in searcher.search("webhook signature", 5, PUBLIC)] == ["doc:b#two"]


def test_an_edit_that_keeps_the_count_is_picked_up_by_its_generation():
    store = store_with(make_chunk("a", "one", "Refunds within 14 days."))
    searcher = IndexSnapshot(store)
    assert searcher.search("signature", 5, PUBLIC) == []
    store.items = [(make_chunk("a", "one", "Every webhook carries a signature."), store.items[0][1])]
    assert searcher.settle(timeout=10.0)
    assert [c.id for c, _ in searcher.search("signature", 5, PUBLIC)] == ["doc:a#one"]


def test_refresh_forgets_the_snapshot():
    store = store_with(make_chunk("a", "one", "Refunds within 14 days."))
    searcher = IndexSnapshot(store)
    searcher.search("refunds", 5, PUBLIC)
    store.replace_items([(make_chunk("a", "one", "Signatures use HMAC."), store.items[0][1])], announce=False)
    assert searcher.search("hmac", 5, PUBLIC) == []  # written, but the generation has not moved: the snapshot serves
    searcher.refresh()
    assert [c.id for c, _ in searcher.search("hmac", 5, PUBLIC)] == ["doc:a#one"]


def test_empty_store_and_empty_terms_give_no_hits():
    searcher = IndexSnapshot(store_with())
    assert searcher.search("anything at all", 10, PUBLIC) == []
    full = IndexSnapshot(store_with(make_chunk("a", "one", "Refunds within 14 days.")))
    assert full.search("how do I", 10, PUBLIC) == []


def test_a_search_needs_reader_groups():
    with pytest.raises(ValueError, match="reader group"):
        IndexSnapshot(store_with()).search("refunds", 5, frozenset())


def test_the_term_cache_tokenizes_a_chunk_again_only_when_what_bm25_reads_changed(monkeypatch):
    from dataclasses import replace

    import retrieval.lexical as lexical
    from retrieval.lexical import TermCache

    calls: list[str] = []
    real = lexical.tokenize
    monkeypatch.setattr(lexical, "tokenize", lambda text: calls.append(text) or real(text))
    chunk = make_chunk("guides/retries", "schedule", "Failed deliveries are retried 15 times.", heading="Retry schedule")
    terms = TermCache()
    first = terms.of(chunk)
    assert terms.of(chunk) == first and len(calls) == 1  # unchanged: no second tokenize
    assert terms.of(replace(chunk, access=("staff",))) == first and len(calls) == 1  # access is not what BM25 reads
    edited = replace(chunk, text="Failed deliveries are retried 20 times.")
    assert "20" in terms.of(edited) and len(calls) == 2
    assert "zebra" in terms.of(replace(edited, heading_path=("Zebra",))) and len(calls) == 3
    assert LexicalIndex.build([edited], terms=terms).search("retried 20", 1)[0][0] == edited
