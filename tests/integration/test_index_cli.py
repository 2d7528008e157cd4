"""`python -m retrieval index` as authors run it: exit codes, JSON summary, lock, CHROMA_URL, server down, withheld pages."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest.corpus import load_corpus
from retrieval.indexer import sync_index
from retrieval.lock import index_lock
from retrieval.services import open_retriever
from retrieval.settings import RetrievalSettings
from retrieval.store import ChromaStore
from retrieval.viewer import Viewer
from tests import withheld
from tests.chroma_server import SITE_PAGES, chroma_binary, chroma_server, edit, free_port, write_site
from tests.conftest import REPO, require

pytestmark = pytest.mark.integration

SUMMARY_KEYS = {
    "pages_added", "pages_changed", "pages_unchanged", "pages_removed", "pages_failed",
    "chunks_embedded", "chunks_reused", "chunks_deleted", "seconds",
}


@pytest.fixture
def data_dir(tmp_path, model_dir) -> Path:
    """A DATA_DIR of its own that shares the provisioned model folder."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "models").symlink_to(model_dir.parent, target_is_directory=True)
    return data


@pytest.fixture
def site(tmp_path) -> Path:
    return write_site(tmp_path / "site")


def run_cli(*args: str, data_dir: Path, chroma_url: str = "", wait: bool = True, **popen) -> subprocess.CompletedProcess | subprocess.Popen:
    env = {**os.environ, "DATA_DIR": str(data_dir), "CHROMA_URL": chroma_url, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "retrieval", "index", *args]
    if not wait:
        return subprocess.Popen(command, env=env, cwd=data_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, env=env, cwd=data_dir, capture_output=True, text=True, timeout=600, **popen)


def prebuilt(site: Path, data_dir: Path, embedder) -> ChromaStore:  # noqa: ANN001
    """The embedded index a CLI run finds, built in-process with the same (real) model."""
    store = ChromaStore(path=str(data_dir / "chroma"))
    sync_index(load_corpus(site), store, embedder)
    return store


def test_json_summary_failures_and_exit_codes(site, data_dir):
    built = run_cli(str(site), "--json", data_dir=data_dir)
    assert built.returncode == 0, built.stderr
    summary = json.loads(built.stdout)
    assert set(summary) >= SUMMARY_KEYS
    assert summary["pages_added"] == 4 and summary["chunks_embedded"] == len(load_corpus(site).chunks())
    assert "embedding:" not in built.stderr  # no progress bar when stderr is not a terminal

    edit(site / "billing/refunds.mdx", "## Requesting a refund\n", "## Requesting a refund\n\n<Tabs>\n")
    broken = run_cli(str(site), "--json", data_dir=data_dir)
    assert broken.returncode == 1
    summary = json.loads(broken.stdout)
    assert summary["pages_failed"] == 1 and summary["chunks_deleted"] == 0 and summary["chunks_embedded"] == 0
    assert summary["pages_withheld"] == 0 and "error: billing/refunds.mdx:13: <Tabs> is never closed" in broken.stderr

    edit(site / "billing/refunds.mdx", "## Requesting a refund\n\n<Tabs>\n", "## Requesting a refund\n")
    fixed = run_cli(str(site), data_dir=data_dir)
    assert fixed.returncode == 0, fixed.stderr
    assert "0 embedded" in fixed.stdout and "4 unchanged" in fixed.stdout


def test_second_ingest_exits_with_a_clear_message_or_waits(site, data_dir, real_embedder):
    prebuilt(site, data_dir, real_embedder)
    with index_lock(data_dir):
        busy = run_cli(str(site), data_dir=data_dir)
        assert busy.returncode == 2
        assert "another ingest is running" in busy.stderr and "Traceback" not in busy.stderr
        waiting = run_cli(str(site), "--wait", "--json", data_dir=data_dir, wait=False)
        time.sleep(3)
        assert waiting.poll() is None  # still waiting for the lock this test holds
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    assert json.loads(out)["chunks_embedded"] == 0


def test_chroma_url_selects_the_server(site, data_dir, tmp_path):
    require(chroma_binary() is not None, "the `chroma` CLI is needed for server-mode tests")
    with chroma_server(tmp_path / "server") as url:
        built = run_cli(str(site), "--json", data_dir=data_dir, chroma_url=url)
        assert built.returncode == 0, built.stderr
        server_store = ChromaStore(url=url)
        assert server_store.count() == json.loads(built.stdout)["chunks_total"] > 0
        assert server_store.manifest().embedder == "all-MiniLM-L6-v2"
    assert not (data_dir / "chroma").exists()


def test_server_down_is_a_clear_error_without_a_traceback(site, data_dir):
    down = run_cli(str(site), data_dir=data_dir, chroma_url=f"http://127.0.0.1:{free_port()}")
    assert down.returncode == 2
    assert down.stderr.startswith("error: ") and "Traceback" not in down.stderr
    assert "127.0.0.1" in down.stderr


@pytest.mark.parametrize("mode", ["embedded", "server"])
def test_pages_whose_access_cannot_be_read_are_withheld_until_fixed(tmp_path, data_dir, real_embedder, mode):
    """Issue 26, items 2 and 3: each bad form fails its page closed, old chunks included; the rest publishes."""
    site = write_site(tmp_path / "site", SITE_PAGES | withheld.pages())
    with contextlib.ExitStack() as stack:
        url = ""
        if mode == "server":
            require(chroma_binary() is not None, "the `chroma` CLI is needed for server-mode tests")
            url = stack.enter_context(chroma_server(tmp_path / "server"))
        store = ChromaStore(url=url) if url else ChromaStore(path=str(data_dir / "chroma"))

        def answerable() -> dict[str, bool]:
            retriever = open_retriever(RetrievalSettings(content_dir=site, data_dir=data_dir), store=store, embedder=real_embedder)
            found = {}
            for page in withheld.PAGES:
                hits = retriever.search(page.question, Viewer.anonymous()).hits
                found[page.source] = any(hit.chunk.doc_id == f"doc:{page.slug}" for hit in hits)
            return found

        built = run_cli(str(site), data_dir=data_dir, chroma_url=url)
        assert built.returncode == 0, built.stderr
        assert all(answerable().values())

        withheld.break_all(site)
        edit(site / "guides/retries.mdx", "up to 8 times", "up to 12 times")
        broken = run_cli(str(site), data_dir=data_dir, chroma_url=url)
        assert broken.returncode == 1, broken.stdout + broken.stderr
        for page in withheld.PAGES:
            assert f"WITHHELD {page.source}:{page.line}: " in broken.stdout, broken.stdout
        assert "pages: 0 added, 1 changed, 3 unchanged, 0 removed, 5 failed" in broken.stdout
        assert not any(answerable().values())
        assert not [c for c in store.chunks() if c.source in {p.source for p in withheld.PAGES}]  # nobody reads them
        assert any("12 times" in c.text for c in store.chunks(groups=["public"]))  # the rest was published

        withheld.fix_all(site)
        fixed = run_cli(str(site), "--json", data_dir=data_dir, chroma_url=url)
        assert fixed.returncode == 0, fixed.stderr
        summary = json.loads(fixed.stdout)
        assert (summary["pages_added"], summary["pages_failed"], summary["pages_withheld"]) == (5, 0, 0)
        assert all(answerable().values())


def test_a_second_run_with_no_change_reports_every_page_unchanged_and_nothing_added(tmp_path, data_dir):
    """Pages the index holds nothing of under their own file were reported "added" on every run.

    A page that is only front matter stores no chunk at all, and one that renders a partial stores chunks
    whose source is the partial's file: counted by file, both looked new each time (and the partial removed).
    """
    pages = {**SITE_PAGES,
             "splash.mdx": "---\ntitle: Welcome\n---\n",
             "_webhook-limits.mdx": "## Payload limits\n\nA webhook payload is at most 256 KB.\n",
             "guides/limits.mdx": ("---\ntitle: Limits\n---\nimport Limits from '../_webhook-limits.mdx'\n\n"
                                   "<Limits />\n")}
    site = write_site(tmp_path / "partials-site", pages)
    first = run_cli(str(site), "--json", data_dir=data_dir)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["pages_added"] == 5  # the splash page adds nothing to the index

    again = run_cli(str(site), data_dir=data_dir)
    assert again.returncode == 0, again.stderr
    assert "pages: 0 added, 0 changed, 6 unchanged, 0 removed, 0 failed" in again.stdout, again.stdout


def test_an_index_of_one_site_is_never_synced_to_another_site_s_folder(tmp_path, data_dir):
    """`CONTENT_DIR=docs make serve` beside the demo's DATA_DIR used to delete every demo page from the index."""
    first = write_site(tmp_path / "demo")
    built = run_cli(str(first), "--json", data_dir=data_dir)
    assert built.returncode == 0, built.stderr
    chunks = json.loads(built.stdout)["chunks_embedded"]
    other = write_site(tmp_path / "handbook", {"index.mdx": "# Handbook\n\nThe handbook explains the team's rituals.\n"})
    edit(other / "site.toml", 'name = "Ferrydeck Docs"', 'name = "Team handbook"')

    refused = run_cli(str(other), data_dir=data_dir)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "holds the site 'Ferrydeck Docs', not 'Team handbook'" in refused.stderr
    assert "DATA_DIR" in refused.stderr and "FULL=1" in refused.stderr
    assert ChromaStore(path=str(data_dir / "chroma")).count() == chunks  # nothing deleted

    replaced = run_cli(str(other), "--full", "--json", data_dir=data_dir)  # on purpose: the other site replaces it
    assert replaced.returncode == 0, replaced.stderr
    again = run_cli(str(first), data_dir=data_dir)
    assert again.returncode == 2 and "holds the site 'Team handbook', not 'Ferrydeck Docs'" in again.stderr
