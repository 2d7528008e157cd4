"""A throwaway PostgreSQL cluster for tests: `initdb` + `pg_ctl` in a temporary folder, on a free loopback port.

The answer log's PostgreSQL tests run against the real server, never a fake.
initdb refuses to run as root, so as root the cluster belongs to the
`postgres` system user (its folder is chowned to it, the commands run through
`runuser`). Each test gets a database of its own, copied from an empty
template in a few milliseconds; the whole cluster is removed at the end.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.processes import free_port

SERVER_USER = "postgres"  # the system user that owns the cluster when the tests run as root


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/*/bin; None if absent."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                     if Path(p).parent.name.isdigit() else 0)
    for folder in reversed(folders):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


class PostgresCluster:
    """A running cluster: `url(name)` for a database in it, `database()` for a fresh one, `stop()` to remove it all."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="answer-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._names = itertools.count(1)
        self._as: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam(SERVER_USER)
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", SERVER_USER, "--"]

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self._as, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stdout}{done.stderr}")

    def start(self) -> PostgresCluster:
        self._run(str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "--encoding=UTF8", "--no-instructions")
        options = (f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
                  "-o", options, "-w", "-t", "60", "start")
        self.execute("CREATE DATABASE template_answers")
        return self

    def url(self, name: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def execute(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(statement.encode())

    def database(self) -> str:
        """A new, empty database (no tables: the log migrates it on first use): its URL."""
        name = f"t{next(self._names)}"
        self.execute(f"CREATE DATABASE {name} TEMPLATE template_answers")
        return self.url(name)

    def drop(self, url: str) -> None:
        self.execute(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")

    def stop(self) -> None:
        try:
            if self.data.exists():
                self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
