"""Real-site features end to end: a partial's text answered and cited at the page a visitor opens, and
`make ingest` telling the author what `outline` would (real model, real Chroma, the real CLI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from answer.generate import ExtractiveGenerator
from answer.pipeline import Answerer
from answer.services import build_judge
from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.services import open_retriever
from retrieval.store import ChromaStore
from retrieval.viewer import Viewer
from tests.conftest import REPO
from web.settings import Settings

pytestmark = pytest.mark.integration

PARTIAL = """Exported audit archives are kept for forty-two days, after which they are deleted for good.

## Archive format

Each archive is a gzip-compressed JSON Lines file with one event per line.
"""

PAGES = {
    "site.toml": '[site]\nname = "Ferry"\nbase_url = "/docs"\npreset = "docusaurus"\n',
    "_partials/_retention.mdx": PARTIAL,
    "guides/export.mdx": ("---\ntitle: Exporting events\n---\n\nimport Retention from '../_partials/_retention.mdx'\n\n"
                          "# Exporting events\n\nExports run nightly and include every delivery attempt.\n\n"
                          "## <Icon name=\"clock\" /> Retention\n\n<Retention />\n"),
    "internal/audit.mdx": ("---\ntitle: Audit internals\naccess: staff\n---\n\n"
                           "import Retention from '../_partials/_retention.mdx'\n\n## Staff retention notes\n\n<Retention />\n"),
    "guides/webhooks.mdx": "---\ntitle: Webhooks\n---\n\n## Signing\n\nEvery webhook carries an HMAC signature header.\n",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("partial-site")
    for name, text in PAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def answerer(site, tmp_path_factory, real_embedder):
    store = ChromaStore(path=str(tmp_path_factory.mktemp("chroma")))
    corpus = load_corpus(site)
    sync_index(corpus, store, real_embedder)
    retriever = open_retriever(Settings(content_dir=site, data_dir=tmp_path_factory.mktemp("data")), store=store,
                               embedder=real_embedder)
    judge = build_judge(corpus.site, retriever, real_embedder)
    return Answerer(retriever, ExtractiveGenerator(real_embedder, judge=judge), judge=judge)


def test_a_fact_only_a_partial_states_is_cited_at_the_importing_page(answerer, site):
    answer = answerer.ask("How long are exported audit archives kept?", Viewer.anonymous())
    assert answer.state == "answered", answer.problems
    citation = answer.claims[0].citations[0]
    assert "forty-two days" in citation.quote
    assert citation.page_url == "/docs/guides/export#retention"  # trimmed: not "#-retention"
    hit = next(h for h in answer.retrieval.hits if h.chunk.id == citation.chunk_id)
    assert hit.chunk.doc_id == "doc:guides/export" and hit.chunk.source == "_partials/_retention.mdx"
    partial = (site / "_partials/_retention.mdx").read_text(encoding="utf-8")
    assert citation.quote in partial[hit.chunk.span.start:hit.chunk.span.end]  # the span is in the partial's own file
    # The staff page renders the same partial: an anonymous reader never gets its copy.
    assert all(h.chunk.doc_id != "doc:internal/audit" for h in answer.retrieval.hits)


@pytest.mark.parametrize("groups, readable", [
    (frozenset({"public"}), {"doc:guides/export", "doc:guides/webhooks"}),
    (frozenset({"public", "staff"}), {"doc:guides/export", "doc:guides/webhooks", "doc:internal/audit"}),
])
def test_each_reader_gets_the_partial_from_a_page_they_may_open(answerer, groups, readable):
    answer = answerer.ask("Is the archive file gzip-compressed JSON Lines?", Viewer(groups))
    assert answer.state == "answered", answer.problems
    cited = {c.chunk_id.split("#")[0] for claim in answer.claims for c in claim.citations}
    assert cited and cited <= readable
    assert {h.chunk.doc_id for h in answer.retrieval.hits} <= readable
    assert any("gzip" in h.chunk.text for h in answer.retrieval.hits)


def test_make_ingest_prints_outline_warnings_with_file_and_line(tmp_path, model_dir):
    site = tmp_path / "site"
    (site / "guides").mkdir(parents=True)
    (site / "site.toml").write_text('[site]\nbase_url = "/docs"\n')
    (site / "guides" / "plans.mdx").write_text(
        "---\ntitle: Plans\n---\n\n## Prices\n\nSee [limits](/docs/guides/limits).\n\n"
        "export const plans = {\n  starter: 10,\n\n## Hidden\n\nThis text is swallowed by the export.\n")
    (site / "guides" / "code.mdx").write_text("---\ntitle: Code\n---\n\n## Example\n\n```js\nconst a = 1\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "models").symlink_to(model_dir.parent, target_is_directory=True)
    env = {**os.environ, "DATA_DIR": str(data), "CHROMA_URL": "", "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "retrieval", "index", str(site)], env=env, cwd=data,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "warning: guides/plans.mdx:9: `export const plans = {` opens a bracket that never closes" in result.stderr
    assert "warning: guides/plans.mdx:7: broken link '/docs/guides/limits'" in result.stderr
    assert "warning: guides/code.mdx:7: code fence is never closed" in result.stderr
    assert "3 warning(s)" in result.stderr
    assert "pages: 2 added" in result.stdout


def test_a_page_that_fails_to_parse_keeps_the_chunks_its_partials_gave_it(site, tmp_path, real_embedder):
    """Nothing lost: a failed page keeps every chunk it had, those written in a partial it renders included."""
    root = tmp_path / "site"
    for name, text in PAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    store = ChromaStore(path=str(tmp_path / "chroma"))
    sync_index(load_corpus(root), store, real_embedder)

    def export_chunks() -> dict[str, str]:
        return {c.id: c.source for c in store.chunks(groups=["public"]) if c.doc_id == "doc:guides/export"}

    before = export_chunks()
    assert "_partials/_retention.mdx" in before.values()
    page = root / "guides/export.mdx"
    good = page.read_text(encoding="utf-8")
    page.write_text(good + "\n<Tabs>\n", encoding="utf-8")  # the body fails; the front matter still reads public
    report = sync_index(load_corpus(root), store, real_embedder)
    assert report.pages_failed == 1 and report.pages_withheld == 0
    assert export_chunks() == before

    page.write_text("---\n- not a mapping\n---\n\n# Exporting events\n", encoding="utf-8")  # who may read it? unknown
    report = sync_index(load_corpus(root), store, real_embedder)
    assert report.pages_withheld == 1
    assert export_chunks() == {}  # withheld: the chunks its partial gave it go too
    assert not [c for c in store.chunks() if c.doc_id == "doc:guides/export"]
