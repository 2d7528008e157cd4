"""A re-ingest parses only what changed, and its corpus is the one a full parse would give.

`load_corpus(root, previous=corpus)` takes over a page whose bytes are
unchanged (with its chunks) and re-searches only the groups of chunks a
change touched for near-duplicates. Every test compares with a fresh load of
the same folder: reuse must never be visible in what is indexed or cited.
"""

from __future__ import annotations

import random
from pathlib import Path

from ingest.corpus import Corpus, load_corpus
from ingest.dedupe import DuplicateMemo, find_duplicates
from tests.fakes import make_chunk
from tests.trees import write_tree

COPY = ("Ferrydeck signs every delivery with an HMAC-SHA256 signature over the timestamp and the raw body, "
        "and receivers should reject deliveries whose timestamp is more than five minutes old.")




def page(title: str, text: str, front: str = "") -> str:
    return f"---\ntitle: {title}\n{front}---\n\n# {title}\n\nIntro of {title} alone.\n\n## Details\n\n{text}\n"


def site(tmp_path: Path) -> Path:
    return write_tree(tmp_path, {
        "a.mdx": page("A", COPY),
        "b.mdx": page("B", COPY),  # a near-duplicate of a's section
        "c.mdx": page("C", "Retries back off for 30 seconds, then 2 minutes, then 10 minutes."),
        "d.mdx": page("D", "import Note from './_note.mdx';\n\n<Note />"),
        "_note.mdx": "The shared note says deliveries are kept for 7 days.\n",
    })


def same_as_fresh(corpus: Corpus) -> None:
    fresh = load_corpus(corpus.root)
    assert corpus.pages == fresh.pages
    assert corpus.all_chunks() == fresh.all_chunks()
    assert corpus.duplicates == fresh.duplicates
    assert corpus.chunks() == fresh.chunks()
    assert [str(f) for f in corpus.failures] == [str(f) for f in fresh.failures]
    assert corpus.warnings == fresh.warnings


def test_an_edit_reparses_its_page_only_and_changes_what_a_full_parse_changes(tmp_path):
    first = load_corpus(site(tmp_path))
    assert first.duplicates == {"doc:b#details": "doc:a#details"}
    (tmp_path / "c.mdx").write_text(page("C", "Retries back off for 45 seconds."), encoding="utf-8")
    second = load_corpus(tmp_path, previous=first)
    same_as_fresh(second)
    assert second.page("a") is first.page("a") and second.page("d") is first.page("d")
    assert second.page("c") is not first.page("c")
    assert "45 seconds" in " ".join(c.text for c in second.chunks())
    assert second.duplicates == first.duplicates


def test_an_edit_that_breaks_or_makes_a_duplicate_is_seen_as_a_full_parse_sees_it(tmp_path):
    first = load_corpus(site(tmp_path))
    (tmp_path / "a.mdx").write_text(page("A", COPY.replace("five minutes", "ten minutes")), encoding="utf-8")
    second = load_corpus(tmp_path, previous=first)
    same_as_fresh(second)
    assert second.duplicates == {}  # the copy states another number now: both are indexed
    (tmp_path / "a.mdx").write_text(page("A", COPY), encoding="utf-8")
    third = load_corpus(tmp_path, previous=second)
    same_as_fresh(third)
    assert third.duplicates == {"doc:b#details": "doc:a#details"}


def test_restricting_an_unchanged_copy_is_a_change_dedupe_sees(tmp_path):
    first = load_corpus(site(tmp_path))
    (tmp_path / "a.mdx").write_text(page("A", COPY, front="access: [staff]\n"), encoding="utf-8")
    second = load_corpus(tmp_path, previous=first)
    same_as_fresh(second)
    assert second.duplicates == {}  # a public reader of b could not read a: b stays indexed


def test_an_edited_partial_reparses_the_pages_that_render_it(tmp_path):
    first = load_corpus(site(tmp_path))
    (tmp_path / "_note.mdx").write_text("The shared note says deliveries are kept for 9 days.\n", encoding="utf-8")
    second = load_corpus(tmp_path, previous=first)
    same_as_fresh(second)
    assert "9 days" in " ".join(c.text for c in second.page_chunks["d.mdx"])


def test_a_new_partial_or_a_changed_site_config_reparses_everything(tmp_path):
    first = load_corpus(site(tmp_path))
    write_tree(tmp_path, {"_other.mdx": "Unused for now.\n"})
    second = load_corpus(tmp_path, previous=first)
    same_as_fresh(second)
    assert second.page("a") is not first.page("a")
    write_tree(tmp_path, {"site.toml": '[site]\nbase_url = "/docs/"\n'})
    third = load_corpus(tmp_path, previous=second)
    same_as_fresh(third)
    assert third.page("a").url.startswith("/docs/") and third.page("a") is not second.page("a")


def test_a_deleted_page_a_new_page_and_a_page_that_stops_parsing(tmp_path):
    first = load_corpus(site(tmp_path))
    (tmp_path / "c.mdx").unlink()
    write_tree(tmp_path, {"e.mdx": page("E", COPY), "b.mdx": "---\ntitle: [unclosed\n---\n\n# B\n"})
    second = load_corpus(tmp_path, previous=first)
    same_as_fresh(second)
    assert second.page("c") is None and second.page("e") is not None
    assert [f.source for f in second.failures] == ["b.mdx"]
    assert second.duplicates == {"doc:e#details": "doc:a#details"}


def test_a_corpus_of_another_folder_lends_nothing(tmp_path):
    one, other = site(tmp_path / "one"), site(tmp_path / "other")
    first = load_corpus(one)
    second = load_corpus(other, previous=first)
    same_as_fresh(second)
    assert second.page("a") is not first.page("a")


def test_the_duplicate_memo_gives_what_a_fresh_search_gives_over_random_edits():
    rng = random.Random(7)
    stems = [f"Deliveries to region {n} are retried with backoff and each retry is logged in the audit trail "
             f"of the workspace that owns the endpoint" for n in range(4)]

    def chunks() -> list:
        made = []
        for k in range(24):
            text = rng.choice(stems) + rng.choice(["", ".", " today", " for every plan"])
            if rng.random() < 0.3:
                text = text.replace("are retried", "are not retried")
            access = ("staff",) if rng.random() < 0.2 else ("public",)
            made.append(make_chunk(f"p{k % 9}", f"s{k}", text, access=access))
        return made

    memo = DuplicateMemo()
    current = chunks()
    for _ in range(30):
        assert find_duplicates(current, memo=memo) == find_duplicates(current)
        changed = rng.sample(range(len(current)), 3)
        fresh = chunks()
        current = [fresh[i] if i in changed else c for i, c in enumerate(current)]
    assert any(find_duplicates(current).values())  # the edits made duplicates to find
