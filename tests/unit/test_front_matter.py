"""Front matter rules: anything that leaves a page's access in doubt fails the page at the line to fix."""

from __future__ import annotations

import pytest

from ingest.corpus import load_corpus
from ingest.errors import PageError
from ingest.front_matter import looks_like_access
from ingest.parser import parse_text
from ingest.site import SiteConfig

BODY = "\n## Runbook\n\nCall the on-call lead.\n"


def fails(front: str) -> PageError:
    with pytest.raises(PageError) as caught:
        parse_text(f"---\n{front}---\n{BODY}", "internal/x.mdx", SiteConfig())
    return caught.value


@pytest.mark.parametrize(("front", "line", "key"), [
    ("title: Secret\naccess: [team-x]\naccess: [public]\n", 4, "access"),
    ("access: [team-x]\ntitle: A\ntitle: B\n", 4, "title"),
    ("sidebar:\n  label: A\n  label: B\naccess: [team-x]\n", 4, "label"),
    ("{access: [team-x], access: [public]}\n", 2, "access"),
    ("base: &b {access: [team-x]}\n<<: *b\naccess: [public]\n", 4, "access"),
])
def test_a_repeated_key_fails_the_page_at_its_second_line(front, line, key):
    error = fails(front)
    assert str(error).startswith(f"internal/x.mdx:{line}: front matter key {key!r} is written twice"), error
    assert "write it once" in error.reason and error.withheld


@pytest.mark.parametrize("key", ["Access", "ACCESS", "acess", "acces", "accesss", "accses", "axcess",
                                 "acc_ess", "Acess", "acesss", "acceso"])
def test_a_key_within_two_edits_of_access_is_an_attempted_restriction(key):
    error = fails(f"title: Secret\n{key}: [team-x]\n")
    assert str(error).startswith(f"internal/x.mdx:3: front matter key {key.strip()!r} looks like a misspelled 'access'")
    assert "write exactly 'access'" in error.reason and "rename the key" in error.reason and error.withheld


@pytest.mark.parametrize("key", ["address", "accessibility", "accessible", "assets", "actions", "acl", "description",
                                 "access_groups", "class", "aside"])
def test_keys_merely_near_access_are_not_restrictions(key):
    assert not looks_like_access(key)
    page = parse_text(f"---\ntitle: Billing\n{key}: x\n---\n{BODY}", "x.mdx", SiteConfig())
    assert page.access == ("public",)


@pytest.mark.parametrize("value", ["42", "[]", "null", "", "{team-x: true}", "[1]", "['']", "[team-x, [ops]]", "true"])
def test_an_access_value_that_is_not_group_names_fails_the_page_at_its_line(value):
    error = fails(f"title: Secret\nversion: '2'\naccess: {value}\n")
    assert str(error).startswith("internal/x.mdx:4: front matter 'access' must be a group name or a list of them")
    assert error.withheld


@pytest.mark.parametrize(("front", "line"), [
    ("title: Secret\naccess: [team-x\n", 3),
    ("title: [Secret\naccess: [team-x]\n", 2),
    ("access:\n  - team-x\n - ops\n", 4),
    ("access: [team-x]\n\ttitle: tab\n", 3),
    ('title: "Secret\naccess: [team-x]\n', 2),
    ("title: Secret\n  access: [team-x]\n", 3),
])
def test_yaml_that_does_not_parse_fails_the_page_at_its_line(front, line):
    error = fails(front)
    assert str(error).startswith(f"internal/x.mdx:{line}: invalid YAML front matter"), error
    assert error.withheld


def test_front_matter_closed_by_dots_is_never_read_as_none():
    """Site generators close front matter with '---' only: a '...' end marker leaves it open, so the page is withheld."""
    with pytest.raises(PageError) as caught:
        parse_text(f"---\ntitle: Secret\naccess: [team-x]\n...\n{BODY}", "x.mdx", SiteConfig())
    assert caught.value.line == 1 and "never closed" in caught.value.reason and caught.value.withheld


def test_a_failure_after_the_front_matter_still_says_who_may_read_the_page():
    with pytest.raises(PageError) as caught:
        parse_text(f"---\naccess: [team-x, ops]\n---\n{BODY}\n<Tabs>\n", "x.mdx", SiteConfig())
    assert "<Tabs> is never closed" in caught.value.reason
    assert caught.value.access == ("ops", "team-x") and not caught.value.withheld


def test_the_corpus_withholds_only_pages_whose_access_is_unknown(tmp_path):
    (tmp_path / "good.mdx").write_text(f"# Good\n{BODY}")
    (tmp_path / "repeated.mdx").write_text(f"---\naccess: [team-x]\naccess: [public]\n---\n{BODY}")
    (tmp_path / "body.mdx").write_text(f"---\naccess: [team-x]\n---\n{BODY}\n<Tabs>\n")
    corpus = load_corpus(tmp_path)
    assert [p.source for p in corpus.pages] == ["good.mdx"]
    assert {f.source: f.withheld for f in corpus.failures} == {"repeated.mdx": True, "body.mdx": False}
