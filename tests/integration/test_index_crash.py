"""kill -9 a real `python -m retrieval index` at random points; the next run must equal a clean build."""

from __future__ import annotations

import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest.corpus import load_corpus
from retrieval.records import Row
from retrieval.store import ChromaStore
from tests.chroma_server import edit
from tests.conftest import CONTENT, REPO

pytestmark = pytest.mark.integration


def start_ingest(root: Path, data_dir: Path, *flags: str) -> subprocess.Popen:
    env = {**os.environ, "DATA_DIR": str(data_dir), "CHROMA_URL": "", "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "retrieval", "index", str(root), *flags],
        env=env, cwd=data_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )


def kill_at(process: subprocess.Popen, seconds: float) -> bool:
    """SIGKILL after `seconds` unless the run finished first; True when it was killed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    return True


def mutate(root: Path) -> None:
    """An author's afternoon: an edit, a renamed heading, a deleted page, a moved page, an access change."""
    edit(root / "billing/refunds.mdx", "30 days", "45 days")
    text = (root / "guides").glob("*.mdx").__next__()
    lines = text.read_text(encoding="utf-8").splitlines(keepends=True)
    heading = next(i for i, line in enumerate(lines) if line.startswith("## "))
    lines[heading] = lines[heading].rstrip("\n") + " renamed\n"
    text.write_text("".join(lines), encoding="utf-8")
    (root / "billing/taxes.mdx").unlink()
    (root / "moved").mkdir()
    shutil.move(root / "billing/invoices.mdx", root / "moved/invoices.mdx")
    plans = root / "billing/plans.mdx"
    plans.write_text(plans.read_text(encoding="utf-8").replace("---\n", "---\naccess: [staff]\n", 1), encoding="utf-8")


def test_killed_runs_converge_to_a_clean_build(tmp_path, model_dir, real_embedder):
    root = tmp_path / "content"
    shutil.copytree(CONTENT, root)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "models").symlink_to(model_dir.parent, target_is_directory=True)
    rng = random.Random(os.environ.get("CRASH_SEED", "4"))

    kills = 0
    for flags, window in (((), (4, 20)), (("--full",), (4, 20))):
        kills += kill_at(start_ingest(root, data_dir, *flags), rng.uniform(*window))
    mutate(root)
    for window in ((3, 8), (4, 10)):
        kills += kill_at(start_ingest(root, data_dir), rng.uniform(*window))
    final = start_ingest(root, data_dir)
    _, err = final.communicate(timeout=900)
    assert final.returncode == 0, err
    assert kills >= 1  # at least one run really died mid-way

    expected = {c.id: c for c in load_corpus(root).chunks()}
    store = ChromaStore(path=str(data_dir / "chroma"))
    rows = store.rows()
    assert store.count() == len(expected)  # no duplicates, no leftovers
    assert {row.chunk.id: row for row in rows} == {cid: Row.of(c) for cid, c in expected.items()}
    assert {c.id: c.text for c in store.chunks()} == {cid: c.text for cid, c in expected.items()}
    assert [n for n in store.collections() if n.startswith("docs")] == sorted(["docs-active", store._live().name])

    # vectors belong to their text: compare a sample (incl. everything mutated) with fresh embeddings
    sample = sorted(cid for cid in expected if cid.startswith(("doc:billing/", "doc:moved/", "doc:guides/")))[:40]
    fresh = real_embedder.embed([expected[cid].embedding_text for cid in sample])
    for cid, stored, new in zip(sample, store.vectors(sample), fresh, strict=True):
        cosine = sum(a * b for a, b in zip(stored, new, strict=True)) / math.sqrt(sum(a * a for a in stored) * sum(b * b for b in new))
        assert cosine > 0.999, cid
