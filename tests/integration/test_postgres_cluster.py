"""The tests' throwaway PostgreSQL server never outlives the test process, however that process ends.

An interrupted `make test` (Ctrl-C, a killed CI job) used to leave its
`postgres` running until someone stopped it by hand: `pg_ctl start`
daemonizes the server. Here a test process starts a cluster and is killed
with SIGKILL, which runs no cleanup at all; its server must go with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, require
from tests.postgres import binaries

pytestmark = pytest.mark.integration

STARTS_AND_DIES = """
import json, os, signal, sys
from pathlib import Path
from tests.postgres import PostgresCluster
cluster = PostgresCluster(Path(sys.argv[1])).start()
print(json.dumps({"pid": cluster.server.pid, "url": cluster.url(), "root": str(cluster.root)}), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _alive(pid: int) -> bool:
    """True while the process runs (a zombie waiting to be reaped has stopped running)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def test_a_killed_test_process_leaves_no_postgres_server_behind():
    found = binaries()
    require(found is not None, "PostgreSQL's server binaries are needed (apt-get install postgresql)")
    done = subprocess.run([sys.executable, "-c", STARTS_AND_DIES, str(found)], capture_output=True, text=True,
                          timeout=180, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == -9, done.stderr
    started = json.loads(done.stdout.splitlines()[-1])
    deadline = time.monotonic() + 60
    while _alive(started["pid"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(started["pid"]), "the server outlived the process that started it"
    import psycopg

    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(started["url"], connect_timeout=2).close()
    subprocess.run(["rm", "-rf", started["root"]], check=False)
