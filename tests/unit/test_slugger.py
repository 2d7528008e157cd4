"""Tests for ingest.slugger: a character-exact port of github-slugger 2.

Expected values in tests/fixtures/slugger_cases.tsv and in the sequences below
were produced by the real npm package github-slugger@2.0.0 under Node 20.
``test_matches_node_oracle`` re-checks everything against that package when
``GITHUB_SLUGGER_ORACLE_DIR`` names a directory holding
``node_modules/github-slugger`` (``npm install github-slugger@2`` there);
otherwise it is skipped, except in CI (see tests/slugger_oracle.py).
"""

from __future__ import annotations

import json
import subprocess
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.slugger import _ALPHABETIC_SYMBOLS, SLUGGERS, Slugger, make_slugger, slug
from tests.slugger_oracle import oracle_dir, requires_oracle

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "slugger_cases.tsv"
KEPT_CATEGORIES = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "Pc"}


def load_cases() -> list[tuple[str, str, str]]:
    # split("\n"), not splitlines(): inputs may hold characters that
    # splitlines() treats as line breaks.
    lines = FIXTURE.read_text(encoding="utf-8").split("\n")
    rows = [line for line in lines if line and not line.startswith("#")]
    assert rows[0] == "case\tinput\texpected"
    cases = []
    for row in rows[1:]:
        name, text, expected = row.split("\t")
        cases.append((name, text, expected))
    return cases


CASES = load_cases()


def test_fixture_table_is_substantial_and_well_formed() -> None:
    names = [name for name, _, _ in CASES]
    assert len(CASES) >= 60
    assert len(set(names)) == len(names)


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_slug_matches_github_slugger(text: str, expected: str) -> None:
    assert slug(text) == expected


# --- duplicates: Slugger.slug ---------------------------------------------

SEQUENCES = [
    (["Intro", "Intro", "Intro-1", "Intro"], ["intro", "intro-1", "intro-1-1", "intro-2"]),
    (["echo", "echo", "echo 1", "echo-1", "echo"], ["echo", "echo-1", "echo-1-1", "echo-1-2", "echo-2"]),
    (["foxtrot-1", "foxtrot", "foxtrot"], ["foxtrot-1", "foxtrot", "foxtrot-2"]),
    (["a", "a-1", "a", "a", "a-1", "a-2", "a"], ["a", "a-1", "a-2", "a-3", "a-1-1", "a-2-1", "a-4"]),
    (["Foo", "foo", "FOO", "Foo!"], ["foo", "foo-1", "foo-2", "foo-3"]),
    (["\U0001F389", "!!!", "\U0001F389 ", "\U0001F389"], ["", "-1", "-", "-2"]),
    (
        ["__proto__", "__proto__", "constructor", "toString", "hasOwnProperty", "hasOwnProperty"],
        ["__proto__", "__proto__-1", "constructor", "tostring", "hasownproperty", "hasownproperty-1"],
    ),
]


@pytest.mark.parametrize(("texts", "expected"), SEQUENCES)
def test_duplicate_sequences_match_github_slugger(texts: list[str], expected: list[str]) -> None:
    slugger = Slugger()
    assert [slugger.slug(text) for text in texts] == expected


def test_reset_forgets_previous_slugs() -> None:
    slugger = Slugger()
    assert [slugger.slug("Intro"), slugger.slug("Intro")] == ["intro", "intro-1"]
    slugger.reset()
    assert [slugger.slug("Intro"), slugger.slug("Intro")] == ["intro", "intro-1"]


# --- maintain_case ---------------------------------------------------------


def test_maintain_case_keeps_case_but_still_strips() -> None:
    assert slug("Hello World", maintain_case=True) == "Hello-World"
    assert slug("İstanbul: Café & Bar!", maintain_case=True) == "İstanbul-Café--Bar"
    assert slug("ΟΔΟΣ", maintain_case=True) == "ΟΔΟΣ"


def test_maintain_case_slugger_counts_case_sensitively() -> None:
    slugger = Slugger(maintain_case=True)
    texts = ["Foo", "foo", "FOO", "Foo", "foo"]
    assert [slugger.slug(t) for t in texts] == ["Foo", "foo", "FOO", "Foo-1", "foo-1"]
    assert slugger.maintain_case is True


def test_non_string_gives_empty_slug_like_js() -> None:
    assert slug(None) == ""  # type: ignore[arg-type]


# --- reserve ---------------------------------------------------------------


def test_reserve_is_not_counted_as_an_occurrence() -> None:
    # rehype-slug never feeds explicit ids to github-slugger, so a later
    # heading with the same text gets the plain slug, as on the real site.
    reserved = Slugger()
    plain = Slugger()
    reserved.reserve("intro")
    reserved.reserve("setup")
    texts = ["Intro", "Setup", "Intro"]
    assert [reserved.slug(t) for t in texts] == [plain.slug(t) for t in texts]
    assert [reserved.slug("Other")] == ["other"]


def test_reserve_after_slugs_changes_nothing() -> None:
    slugger = Slugger()
    slugger.slug("Intro")
    slugger.reserve("intro-1")
    assert slugger.slug("Intro") == "intro-1"


# --- registry ----------------------------------------------------------------


def test_sluggers_registry() -> None:
    assert set(SLUGGERS) == {"github", "github-case", "mintlify"}
    first, second = SLUGGERS["github"](), SLUGGERS["github"]()
    assert isinstance(first, Slugger) and first is not second
    first.slug("Intro")
    assert second.slug("Intro") == "intro"  # fresh, independent state
    assert SLUGGERS["github-case"]().slug("Intro") == "Intro"
    mintlify = SLUGGERS["mintlify"]()
    assert [mintlify.slug("Intro"), mintlify.slug("Intro")] == ["intro", "intro-2"]
    assert SLUGGERS["mintlify"]().slug("Intro") == "intro"  # fresh, independent state
    with pytest.raises(TypeError):
        SLUGGERS["other"] = Slugger  # type: ignore[index]


def test_make_slugger() -> None:
    assert make_slugger("github").slug("Hello World") == "hello-world"
    assert make_slugger("github-case").slug("Hello World") == "Hello-World"


def test_make_slugger_unknown_name_lists_known_rules() -> None:
    with pytest.raises(ValueError, match="kebab") as excinfo:
        make_slugger("kebab")
    message = str(excinfo.value)
    assert "github" in message and "github-case" in message


# --- properties ------------------------------------------------------------

# Hypothesis' default text plus characters that exercise the tricky paths
# (final sigma, dotted I, ZWJ/variation selectors, alphabetic symbols).
HEADINGS = st.text(
    st.one_of(
        st.characters(),
        st.sampled_from(list(" -_.:ΣσΑİIi\u0307é😀\u200d\ufe0f\u00a0Ⓐ🅰𝐀ǅ")),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(HEADINGS)
def test_slug_properties(text: str) -> None:
    # Verified against github-slugger 2 on every code point and on random
    # strings: idempotent, no spaces, and lower-case *as far as lower-casing
    # goes* -- "no upper-case letters" is false (𝐀 U+1D400 and ϒ U+03D2 are
    # Lu without a lower-case mapping and survive in the real package too).
    result = slug(text)
    assert " " not in result
    assert result.lower() == result
    assert slug(result) == result
    assert all(ch == "-" or unicodedata.category(ch) in KEPT_CATEGORIES or unicodedata.category(ch) == "Cs" or _alphabetic_symbol(ch) for ch in result)  # lone surrogates survive in JS too


def _alphabetic_symbol(ch: str) -> bool:
    return any(start <= ord(ch) <= end for start, end in _ALPHABETIC_SYMBOLS)


@settings(max_examples=200, deadline=None)
@given(HEADINGS)
def test_maintain_case_properties(text: str) -> None:
    result = slug(text, maintain_case=True)
    assert " " not in result
    assert slug(result, maintain_case=True) == result
    # Not asserted: slug(text) == slug(result).  Lower-casing before vs after
    # stripping can differ (final sigma: "ΑΣ😀Β" -> "αςβ" but "ΑΣΒ" -> "ασβ").


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Intro", "intro", "Intro-1", "Intro 1", "intro-2", "", "🎉", "-1"]) | HEADINGS))
def test_slugger_ids_are_unique_on_a_page(texts: list[str]) -> None:
    slugger = Slugger()
    ids = [slugger.slug(t) for t in texts]
    assert len(set(ids)) == len(ids)
    if texts:
        assert ids[0] == slug(texts[0])


# --- optional: the real package as oracle ----------------------------------

ORACLE_SCRIPT = r"""
import { slug } from 'github-slugger'
import fs from 'node:fs'
const inputs = JSON.parse(fs.readFileSync(0, 'utf8'))
const singles = []
for (let cp = 0; cp <= 0x10FFFF; cp++) singles.push(slug(String.fromCodePoint(cp)))
process.stdout.write(JSON.stringify({ cases: inputs.map((s) => slug(s)), singles }))
"""


@requires_oracle
def test_matches_node_oracle(tmp_path: Path) -> None:
    oracle = oracle_dir()
    script = oracle / "_slugger_oracle.mjs"
    script.write_text(ORACLE_SCRIPT, encoding="utf-8")
    try:
        inputs = [text for _, text, _ in CASES]
        run = subprocess.run(
            ["node", str(script)],
            input=json.dumps(inputs),
            capture_output=True,
            text=True,
            check=True,
            cwd=oracle,
        )
    finally:
        script.unlink()
    oracle = json.loads(run.stdout)
    assert oracle["cases"] == [expected for _, _, expected in CASES]
    differing = [
        cp
        for cp, js in enumerate(oracle["singles"])
        if not 0xD800 <= cp <= 0xDFFF and slug(chr(cp)) != js
    ]
    # Only code points Python's Unicode database does not know yet may differ
    # (the JS engine may lower-case them onto old letters); see module docs.
    assert all(unicodedata.category(chr(cp)) == "Cn" for cp in differing), differing
