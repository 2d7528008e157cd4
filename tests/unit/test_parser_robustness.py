"""A bad file never aborts a run: it is reported with file(:line) and a reason, every other file is processed."""

from __future__ import annotations

import os

import pytest

import ingest.corpus as corpus_module
from ingest.corpus import load_corpus

GOOD = "# Good\n\nThis page is fine.\n"


def reasons(corpus) -> dict[str, str]:
    return {f.source: str(f) for f in corpus.failures}


def test_each_kind_of_bad_file_is_reported_and_the_rest_processed(tmp_path):
    (tmp_path / "good.mdx").write_text(GOOD)
    (tmp_path / "latin1.mdx").write_bytes(b"# Caf\xe9\n\nline two\n")
    (tmp_path / "empty.mdx").write_text("")
    (tmp_path / "unclosed-jsx.mdx").write_text("# A\n\n<Tabs>\n  <TabItem>\n  text\n  </TabItem>\n")
    (tmp_path / "unclosed-fence.mdx").write_text("# A\n\n```js\nconst a = 1;\n")
    (tmp_path / "stray-close.mdx").write_text("# A\n\ntext\n\n</Callout>\n")
    (tmp_path / "big.mdx").write_text("# Big\n\n" + "A long generated line of reference text.\n" * 130_000)  # ~5 MB
    (tmp_path / "loop.mdx").symlink_to(tmp_path / "loop.mdx")  # a symlink to itself
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "again").symlink_to(tmp_path, target_is_directory=True)  # a folder loop
    (tmp_path / "sub" / "page.mdx").write_text(GOOD.replace("Good", "Sub"))

    corpus = load_corpus(tmp_path)
    assert sorted(p.source for p in corpus.pages) == ["empty.mdx", "good.mdx", "sub/page.mdx", "unclosed-fence.mdx"]
    found = reasons(corpus)
    assert found["latin1.mdx"].startswith("latin1.mdx:1: not valid UTF-8")
    assert found["unclosed-jsx.mdx"] == "unclosed-jsx.mdx:3: <Tabs> is never closed"
    assert found["stray-close.mdx"].startswith("stray-close.mdx:5: closing tag </Callout>")
    assert "big.mdx: file is" in found["big.mdx"] and "bytes" in found["big.mdx"]
    assert found["loop.mdx"].startswith("loop.mdx: cannot read file")
    assert len(found) == 5
    assert corpus.warnings == ["unclosed-fence.mdx:3: code fence is never closed, so it runs to the end of the file"]
    assert corpus.page("empty").sections == () and corpus.page("empty").title == "empty"


def test_a_file_that_disappears_mid_run_is_reported(tmp_path, monkeypatch):
    for name in ("a.mdx", "b.mdx", "c.mdx"):
        (tmp_path / name).write_text(GOOD)
    real_parse = corpus_module.parse_page

    def parse_and_delete_next(path, root, site):  # another process deletes b.mdx while a.mdx is parsed
        if path.name == "a.mdx":
            os.remove(root / "b.mdx")
        return real_parse(path, root, site)

    monkeypatch.setattr(corpus_module, "parse_page", parse_and_delete_next)
    corpus = load_corpus(tmp_path)
    assert [p.source for p in corpus.pages] == ["a.mdx", "c.mdx"]
    assert [str(f) for f in corpus.failures] == ["b.mdx: cannot read file: No such file or directory"]


def test_a_parser_bug_costs_one_page_not_the_run(tmp_path, monkeypatch):
    (tmp_path / "a.mdx").write_text(GOOD)
    (tmp_path / "b.mdx").write_text(GOOD)
    real_parse = corpus_module.parse_page

    def broken_on_b(path, root, site):
        if path.name == "b.mdx":
            raise RecursionError("maximum recursion depth exceeded")
        return real_parse(path, root, site)

    monkeypatch.setattr(corpus_module, "parse_page", broken_on_b)
    corpus = load_corpus(tmp_path)
    assert [p.source for p in corpus.pages] == ["a.mdx"]
    assert "b.mdx: could not be parsed (RecursionError" in str(corpus.failures[0])


@pytest.mark.parametrize("text", ["{" * 50_000, "<" * 50_000, "<a b={" * 10_000, "`" * 20_000, ":::" * 5_000,
                                  "<Tabs\n" * 2_000, "---\n" + "a: [\n" * 200])
def test_hostile_input_is_parsed_or_refused_with_a_page_error(tmp_path, text):
    (tmp_path / "x.mdx").write_text(text)
    corpus = load_corpus(tmp_path)
    assert len(corpus.pages) + len(corpus.failures) == 1
    assert all("could not be parsed" not in str(f) for f in corpus.failures)


@pytest.mark.parametrize(("access", "line"), [
    ("[team.a]", 4), ("[staff, team.a]", 4), ("tëam", 4), ("[\"staff\\u00a0\"]", 4), ("[\"\\u0085staff\"]", 4),
    ("[team a]", 4), ("[\"-leading\"]", 4), ("[\"" + "x" * 65 + "\"]", 4), ("\n  - staff\n  - ops/eu", 4),
])
def test_a_group_name_outside_the_alphabet_fails_the_page_at_its_line(access, line):
    from ingest.errors import PageError
    from ingest.parser import parse_text
    from ingest.site import SiteConfig

    text = f"---\ntitle: Secret\nversion: '2'\naccess: {access}\n---\n\n## Runbook\n\nCall the on-call lead.\n"
    with pytest.raises(PageError, match=rf"^internal/x\.mdx:{line}: group name .* is not allowed: use ASCII letters"):
        parse_text(text, "internal/x.mdx", SiteConfig())


def test_group_names_in_the_alphabet_are_kept_exactly():
    from ingest.parser import parse_text
    from ingest.site import SiteConfig

    page = parse_text("---\naccess: [team_a, team-a, Ops2]\n---\n\nText.\n", "x.mdx", SiteConfig())
    assert page.access == ("Ops2", "team-a", "team_a")
