"""Site presets: the URL and heading-id rules of rehype-slug, Docusaurus and Starlight sites."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.corpus import load_corpus
from ingest.errors import SiteConfigError
from ingest.parser import parse_text
from ingest.presets import PRESETS, js_trim
from ingest.site import SiteConfig, load_site_config

DOCUSAURUS = SiteConfig(preset="docusaurus", base_url="https://docs.example.com", maintain_case=True)

PAGE = """---
title: FAQ
---

### <Icon name="question-circle" /> Where do I start?

## Application Under Test <E2EOnlyBadge />

## <Icon name="x" /> Creating "Tiny" Tests <Badge />

### Timeouts {#Notes-Timeouts}

### Timeouts

## 15.21.0
"""


def anchors(page_text: str, site: SiteConfig) -> list[str | None]:
    return [h.anchor for h in parse_text(page_text, "faq.mdx", site).headings]


def test_docusaurus_trims_heading_text_around_components_and_keeps_case() -> None:
    assert anchors(PAGE, DOCUSAURUS) == ["Where-do-I-start", "Application-Under-Test", "Creating-Tiny-Tests",
                                         "Notes-Timeouts", "Timeouts", "15210"]


def test_rehype_slug_keeps_the_untrimmed_quirk() -> None:
    assert anchors(PAGE, SiteConfig()) == ["-where-do-i-start", "application-under-test-", "-creating-tiny-tests-",
                                           "Notes-Timeouts", "timeouts", "15210"]


def test_docusaurus_without_maintain_case_lower_cases() -> None:
    site = SiteConfig(preset="docusaurus")
    assert anchors(PAGE, site)[:2] == ["where-do-i-start", "application-under-test"]


def test_js_trim_is_javascripts_not_pythons() -> None:
    assert js_trim("\ufeff a \u2028") == "a"  # JS trims U+FEFF and line separators
    assert js_trim("\x1ca\x85") == "\x1ca\x85"  # Python's strip() would remove these; JS keeps them


@pytest.mark.parametrize(("source", "meta", "expected"), [
    ("api/utilities/lodash.mdx", {"slug": "_"}, "api/utilities/_"),  # relative slug: next to the file
    ("api/commands/url.mdx", {"slug": "/api/commands/url"}, "api/commands/url"),
    ("guides/intro.mdx", {"id": "start"}, "guides/start"),
    ("guides/README.md", {}, "guides"),
    ("guides/Guides.mdx", {}, "guides"),
    ("guides/index.mdx", {}, "guides"),
    ("01-basics/02-install.mdx", {}, "basics/install"),
    ("index.mdx", {}, "index"),
])
def test_docusaurus_urls(source: str, meta: dict, expected: str) -> None:
    assert PRESETS["docusaurus"].page_slug(source, meta) == expected


@pytest.mark.parametrize(("source", "meta", "expected"), [
    ("guides/Getting Started.mdx", {}, "guides/getting-started"),
    ("reference/Index.md", {}, "reference"),
    ("de/guides/i18n.mdx", {}, "de/guides/i18n"),
    ("x.mdx", {"slug": "custom/path"}, "custom/path"),
])
def test_starlight_urls(source: str, meta: dict, expected: str) -> None:
    assert PRESETS["starlight"].page_slug(source, meta) == expected


@pytest.mark.parametrize(("source", "meta", "expected"), [
    ("api/lodash.mdx", {"slug": "_"}, "_"),  # rehype-slug sites: a front-matter slug is from the root
    ("guides/README.md", {}, "guides/README"),
    ("01-basics/x.mdx", {}, "01-basics/x"),
    ("a/index.mdx", {}, "a"),
])
def test_rehype_slug_urls_are_unchanged(source: str, meta: dict, expected: str) -> None:
    assert PRESETS["rehype-slug"].page_slug(source, meta) == expected


def test_site_toml_preset_keys(tmp_path: Path) -> None:
    (tmp_path / "site.toml").write_text('[site]\npreset = "docusaurus"\nmaintain_case = true\nbuilt_dir = "build"\n')
    site = load_site_config(tmp_path)
    assert site.rules.name == "docusaurus" and site.slugger_name == "github-case"
    assert site.built_dir == str((tmp_path / "build").resolve())


@pytest.mark.parametrize("body", ['preset = "hugo"', 'maintain_case = "yes"', "built_dir = 3"])
def test_site_toml_rejects_bad_preset_values(tmp_path: Path, body: str) -> None:
    (tmp_path / "site.toml").write_text(f"[site]\n{body}\n")
    with pytest.raises(SiteConfigError):
        load_site_config(tmp_path)


def test_starlight_pages_live_under_src_content_docs(tmp_path: Path) -> None:
    docs = tmp_path / "src" / "content" / "docs" / "guides"
    docs.mkdir(parents=True)
    (tmp_path / "site.toml").write_text('[site]\npreset = "starlight"\nbase_url = "/"\n')
    (docs / "Getting Started.mdx").write_text("---\ntitle: Start\n---\n\n:::note[Heads up]\nRead me.\n:::\n\n"
                                              "## Set up <Badge text='new' />\n")
    (tmp_path / "README.md").write_text("# Not a page\n")
    corpus = load_corpus(tmp_path)
    assert [p.source for p in corpus.pages] == ["guides/Getting Started.mdx"]
    assert not corpus.notes  # the layout the preset expects is there: nothing to say
    page = corpus.pages[0]
    assert page.url == "/guides/getting-started"
    assert [h.anchor for h in page.headings] == ["set-up-"]  # Astro does not trim either


def test_starlight_links_to_untranslated_pages_land_on_the_fallback(tmp_path: Path) -> None:
    docs = tmp_path / "src" / "content" / "docs"
    pages = {"guides/a.mdx": "## One\n", "guides/b.mdx": "## Two\n", "guides/c.mdx": "## Three\n",
             "guides/only-english.mdx": "## Four\n",
             "de/guides/a.mdx": "## Eins\n\n[x](/de/guides/only-english/#four) [y](/de/guides/only-english/#vier)\n",
             "de/guides/b.mdx": "## Zwei\n", "de/guides/c.mdx": "## Drei\n",
             "api/guides/x.mdx": "[z](/api/guides/a/)\n"}  # `api` mirrors no root page: not a locale
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(f"---\ntitle: {name}\n---\n\n{text}")
    (tmp_path / "site.toml").write_text('[site]\npreset = "starlight"\nbase_url = "/"\ntrailing_slash = true\n')
    broken = [(b.source, b.target) for b in load_corpus(tmp_path).broken_links]
    assert broken == [("api/guides/x.mdx", "/api/guides/a/"), ("de/guides/a.mdx", "/de/guides/only-english/#vier")]


def test_a_preset_pointed_at_a_folder_without_its_layout_says_so_once(tmp_path: Path) -> None:
    """Without `src/content/docs` the folder itself is read; that used to happen without a word."""
    import subprocess
    import sys

    (tmp_path / "site.toml").write_text('[site]\npreset = "starlight"\nbase_url = "/"\n')
    for name in ("a.mdx", "b.mdx"):
        (tmp_path / name).write_text(f"---\ntitle: {name}\n---\n\n## Heading\n\nText.\n")
    corpus = load_corpus(tmp_path)
    assert [p.source for p in corpus.pages] == ["a.mdx", "b.mdx"]  # still indexed, from the folder root
    [note] = [w for w in corpus.warnings if "src/content/docs" in w]
    assert "preset 'starlight' expects its pages under src/content/docs/" in note and str(tmp_path) in note

    run = subprocess.run([sys.executable, "-m", "ingest", "outline", str(tmp_path)], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("src/content/docs") == 1, run.stderr  # one line, not one per page
