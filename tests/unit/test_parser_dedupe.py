"""Near-duplicate chunks across pages: one canonical chunk is indexed, the copies are recorded against it."""

from __future__ import annotations

from ingest.corpus import load_corpus
from tests.trees import write_tree

PARTIAL = ("Ferrydeck signs every delivery with an HMAC-SHA256 signature over the timestamp and the raw body, "
           "and receivers should reject deliveries whose timestamp is more than five minutes old.")




def page(title: str, section: str, text: str, front: str = "") -> str:
    return f"---\ntitle: {title}\n{front}---\n\n# {title}\n\nIntro of {title} that is unique to this page.\n\n## {section}\n\n{text}\n"


def test_a_shared_partial_is_indexed_once_under_the_first_source(tmp_path):
    root = write_tree(tmp_path, {
        "b.mdx": page("B", "Signatures", PARTIAL),
        "a.mdx": page("A", "Verifying", PARTIAL.replace("five minutes", "five minutes").replace("raw body,", "raw body ,")),
        "c.mdx": page("C", "Security", PARTIAL.upper()),
    })
    corpus = load_corpus(root)
    assert corpus.duplicates == {"doc:b#signatures": "doc:a#verifying", "doc:c#security": "doc:a#verifying"}
    ids = [c.id for c in corpus.chunks()]
    assert "doc:a#verifying" in ids and "doc:b#signatures" not in ids and "doc:c#security" not in ids
    assert len(corpus.all_chunks()) == len(ids) + 2


def test_a_copy_that_changes_a_number_or_a_negation_is_a_different_claim(tmp_path):
    root = write_tree(tmp_path, {
        "a.mdx": page("A", "Verifying", PARTIAL),
        "b.mdx": page("B", "Signatures", PARTIAL.replace("five minutes", "10 minutes")),
        "c.mdx": page("C", "Security", PARTIAL.replace("should reject", "should not reject")),
        "d.mdx": page("D", "Other", "A completely different paragraph about invoices, taxes and billing cycles that "
                                    "shares nothing with the signature text at all."),
    })
    assert load_corpus(root).duplicates == {}


def test_access_and_declared_versions_keep_copies_apart(tmp_path):
    root = write_tree(tmp_path, {
        "a.mdx": page("A", "Verifying", PARTIAL, "access: staff\n"),
        "b.mdx": page("B", "Signatures", PARTIAL),  # public: must not be dropped for a staff-only canonical chunk
        "v1.mdx": page("V1", "Signing", PARTIAL, "version: \"1.0\"\n"),
        "v2.mdx": page("V2", "Signing", PARTIAL, "version: \"2.0\"\n"),
    })
    duplicates = load_corpus(root).duplicates
    assert "doc:b#signatures" not in duplicates
    assert duplicates.get("doc:v2#signing") != "doc:v1#signing"


def test_short_chunks_and_repeats_within_one_page_are_kept(tmp_path):
    root = write_tree(tmp_path, {
        "a.mdx": "# A\n\n## Is it free?\n\nNo.\n\n## One\n\n" + PARTIAL + "\n\n## Two\n\n" + PARTIAL + "\n",
        "b.mdx": "# B\n\n## Is it fast?\n\nNo.\n",
    })
    assert load_corpus(root).duplicates == {}

