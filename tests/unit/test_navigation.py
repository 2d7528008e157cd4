"""Each page's place in the site's navigation, read from the files each generator keeps it in."""

from __future__ import annotations

import json

from ingest.corpus import load_corpus
from ingest.navigation import UNLISTED, read_navigation
from tests.conftest import REPO
from tests.trees import write_tree

MINTLIFY_SCHEMA = "https://mintlify.com/docs.json"


def page(title: str, extra: str = "") -> str:
    return f"---\ntitle: {title}\n{extra}---\n\nSome text about {title.lower()}.\n"


def docs_json(navigation: object) -> str:
    return json.dumps({"$schema": MINTLIFY_SCHEMA, "name": "Acme", "navigation": navigation})


def test_mintlify_tabs_groups_and_nested_groups_in_their_order(tmp_path):
    nav = {"tabs": [{"tab": "Guides", "groups": [
        {"group": "Start", "pages": ["quickstart", {"group": "Install", "pages": ["install/linux"]}]}]},
        {"tab": "API", "groups": [{"group": "Endpoints", "pages": ["api/users", "GET /users"]}]}]}
    root = write_tree(tmp_path, {"docs.json": docs_json(nav), "quickstart.mdx": page("Quickstart"),
                            "install/linux.mdx": page("Linux"), "api/users.mdx": page("Users"),
                            "extra/notes.mdx": page("Notes")})
    corpus = load_corpus(root)
    places = corpus.navigation.places
    assert corpus.navigation.source == "docs.json"
    assert places["quickstart.mdx"].groups == ("Guides", "Start")
    assert places["install/linux.mdx"].groups == ("Guides", "Start", "Install")
    assert places["api/users.mdx"].groups == ("API", "Endpoints")
    assert places["quickstart.mdx"].position < places["install/linux.mdx"].position < places["api/users.mdx"].position
    # a page the navigation does not list is still a page, under its folder
    assert places["extra/notes.mdx"].groups == ("extra",) and places["extra/notes.mdx"].position == UNLISTED


def test_mintlify_reads_the_english_section_and_follows_a_ref_inside_the_folder(tmp_path):
    nav = {"languages": [{"language": "fr", "groups": [{"group": "Démarrer", "pages": ["fr/index"]}]},
                         {"language": "en", "$ref": "./nav/en.json"}]}
    root = write_tree(tmp_path, {"docs.json": docs_json(nav), "nav/en.json": json.dumps(
        {"groups": [{"group": "Get started", "pages": ["index"]}]}),
        "index.mdx": page("Welcome"), "fr/index.mdx": page("Bienvenue")})
    places = load_corpus(root).navigation.places
    assert places["index.mdx"].groups == ("Get started",)
    assert places["fr/index.mdx"].groups == ("fr",)  # not in the English navigation: its folder


def test_a_ref_out_of_the_folder_is_not_followed(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"groups": [{"group": "Leaked", "pages": ["index"]}]}), encoding="utf-8")
    root = write_tree(tmp_path / "site", {"docs.json": docs_json({"$ref": "../outside.json"}), "index.mdx": page("Home")})
    assert load_corpus(root).navigation.place("index.mdx").groups == ()


def test_a_docs_json_that_does_not_parse_is_a_note_and_the_folders_group_the_pages(tmp_path):
    root = write_tree(tmp_path, {"docs.json": '{"$schema": "https://mintlify.com/docs.json", "navigation": ',
                            "guides/a.mdx": page("A")})
    corpus = read_navigation(root, [("guides/a.mdx", "guides/a", {})], "mintlify")
    assert corpus.places["guides/a.mdx"].groups == ("guides",)
    assert corpus.notes and corpus.notes[0].startswith("docs.json:")


def test_docusaurus_categories_label_their_folders_and_sidebar_position_orders_pages(tmp_path):
    root = write_tree(tmp_path, {"site.toml": '[site]\npreset = "docusaurus"\n',
                            "guides/_category_.json": json.dumps({"label": "How-to guides", "position": 2}),
                            "guides/deploy/_category_.json": "{not json",
                            "guides/b.mdx": page("B", "sidebar_position: 1\n"),
                            "guides/deploy/c.mdx": page("C")})
    corpus = load_corpus(root)
    places = corpus.navigation.places
    assert places["guides/b.mdx"].groups == ("How-to guides",) and places["guides/b.mdx"].position == 1
    assert places["guides/deploy/c.mdx"].groups == ("How-to guides", "deploy")
    assert any("_category_.json in deploy" in note for note in corpus.warnings)


def test_starlight_sidebar_order_and_the_pages_folder_left_out_of_groups(tmp_path):
    nav = read_navigation(tmp_path, [("src/content/docs/guides/x.mdx", "guides/x", {"sidebar": {"order": 3}})],
                          "starlight", "src/content/docs")
    assert nav.places["src/content/docs/guides/x.mdx"].groups == ("guides",)
    assert nav.places["src/content/docs/guides/x.mdx"].position == 3


def test_docs_json_groups_are_in_the_chunks_context_and_folders_are_not(tmp_path):
    from retrieval.records import chunk_from_record, chunk_metadata
    nav = {"tabs": [{"tab": "API reference", "groups": [{"group": "Webhooks", "pages": ["api/events"]}]}]}
    root = write_tree(tmp_path, {"docs.json": docs_json(nav), "api/events.mdx": page("Events"),
                            "extra/notes.mdx": page("Notes")})
    corpus = load_corpus(root)
    listed = corpus.page_chunks["api/events.mdx"][0]
    assert listed.groups == ("API reference", "Webhooks")
    assert listed.embedding_text.startswith("API reference > Webhooks > Events\n")
    unlisted = corpus.page_chunks["extra/notes.mdx"][0]
    assert unlisted.groups == () and unlisted.embedding_text.startswith("Notes\n")  # a folder is no author's label
    stored = chunk_from_record(listed.id, listed.text, chunk_metadata(listed))
    assert stored == listed and stored.groups == listed.groups


def test_a_docs_json_edit_resplits_pages_a_reload_would_otherwise_keep(tmp_path):
    nav = {"groups": [{"group": "Start", "pages": ["index"]}]}
    root = write_tree(tmp_path, {"docs.json": docs_json(nav), "index.mdx": page("Home")})
    before = load_corpus(root)
    first = before.page_chunks["index.mdx"][0]
    assert first.groups == ("Start",)
    (root / "docs.json").write_text(docs_json({"groups": [{"group": "Begin here", "pages": ["index"]}]}),
                                    encoding="utf-8")
    after = load_corpus(root, previous=before)
    chunk = after.page_chunks["index.mdx"][0]
    assert chunk.groups == ("Begin here",)
    assert chunk.hash != first.hash  # the new context is embedded again


def test_the_mintlify_fixture_site_groups_its_pages_as_its_docs_json_does():
    places = load_corpus(REPO / "tests" / "fixtures" / "mintlify").navigation.places
    assert places["index.mdx"].groups == places["guides/setup.mdx"].groups == ("Get started",)
    assert places["api/uploads.mdx"].groups == ("API reference",)


def test_llms_txt_lists_a_mintlify_site_s_pages_under_its_navigation_groups_in_order(tmp_path):
    from web.llms_txt import llms_txt, public_pages

    nav = {"groups": [{"group": "Get started", "pages": ["welcome", "install"]},
                      {"group": "Reference", "pages": ["api"]}]}
    root = write_tree(tmp_path, {"docs.json": docs_json(nav), "api.mdx": page("API"), "install.mdx": page("Install"),
                            "welcome.mdx": page("Welcome"), "zeta/unlisted.mdx": page("Unlisted"),
                            "secret.mdx": page("Secret", "access: [staff]\n")})
    corpus = load_corpus(root)
    text = llms_txt(corpus, public_pages(corpus, lambda slug: ("public",)), "https://docs.example")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## Get started", "## Reference", "## zeta"]
    assert text.index("[Welcome]") < text.index("[Install]") < text.index("[API]")
    assert "Secret" not in text
