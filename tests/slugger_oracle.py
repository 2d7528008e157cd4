"""github-slugger itself (npm, under node) as the oracle of the slugger tests.

On a developer machine without node the oracle tests are skipped; in CI (`CI`
set) they never are: a missing node or package fails, naming the fix.
`make test` installs the package into DATA_DIR/oracle and points
`GITHUB_SLUGGER_ORACLE_DIR` at it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ORACLE_ENV = "GITHUB_SLUGGER_ORACLE_DIR"

requires_oracle = pytest.mark.skipif(
    not os.environ.get("CI") and (not os.environ.get(ORACLE_ENV) or shutil.which("node") is None),
    reason=f"set {ORACLE_ENV} to a dir with node_modules/github-slugger@2 (never skipped in CI)",
)


def oracle_dir() -> Path:
    """The folder holding node_modules/github-slugger; fails with the fix when node or the package is missing."""
    assert shutil.which("node"), "node is missing: .ci/run installs it, `make test` then installs the oracle"
    folder = Path(os.environ.get(ORACLE_ENV, ""))
    assert (folder / "node_modules/github-slugger").is_dir(), f"no github-slugger under {folder}: run `make test`"
    return folder
