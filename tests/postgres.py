"""A throwaway PostgreSQL cluster for tests: `initdb` and a `postgres` child process, on a free loopback port.

The answer log's PostgreSQL tests run against the real server, never a fake.
initdb refuses to run as root, so as root the cluster belongs to the
`postgres` system user (its folder is chowned to it, initdb runs through
`runuser`, the server as that user). Each test gets a database of its own,
copied from an empty template in a few milliseconds; the whole cluster is
removed at the end.

The server is this process's own child, told by the kernel to shut down when
its parent dies (`PR_SET_PDEATHSIG`): a test run stopped by Ctrl-C, a killed
CI job or `kill -9` leaves no PostgreSQL server behind (one started through
`pg_ctl` daemonizes and outlived an interrupted `make test`).
"""

from __future__ import annotations

import ctypes
import glob
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.processes import free_port

SERVER_USER = "postgres"  # the system user that owns the cluster when the tests run as root


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/*/bin; None if absent."""
    found = shutil.which("initdb")
    if found and shutil.which("postgres"):
        return Path(os.path.realpath(found)).parent
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                     if Path(p).parent.name.isdigit() else 0)
    for folder in reversed(folders):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "postgres").exists():
            return Path(folder)
    return None


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _dies_with_parent(user: pwd.struct_passwd | None) -> Callable[[], None]:
    """What the server's child process runs before exec: become `user` (as root), then ask for SIGINT (PostgreSQL's
    fast shutdown) when the parent dies. In this order: a change of user clears the parent-death signal."""

    def prepare() -> None:
        if user is not None:
            os.setgid(user.pw_gid)
            os.setgroups([])
            os.setuid(user.pw_uid)
        if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")

    return prepare


class PostgresCluster:
    """A running cluster: `url(name)` for a database in it, `database()` for a fresh one, `stop()` to remove it all."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="answer-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._names = itertools.count(1)
        self._as: list[str] = []
        self._user: pwd.struct_passwd | None = None
        self.server: subprocess.Popen[bytes] | None = None
        if os.geteuid() == 0:
            self._user = pwd.getpwnam(SERVER_USER)
            os.chown(self.root, self._user.pw_uid, self._user.pw_gid)
            self._as = ["runuser", "-u", SERVER_USER, "--"]

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self._as, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stdout}{done.stderr}")

    def start(self) -> PostgresCluster:
        self._run(str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "--encoding=UTF8", "--no-instructions")
        with open(self.root / "server.log", "ab") as log:
            self.server = subprocess.Popen(
                [str(self.bin_dir / "postgres"), "-D", str(self.data), "-c", "listen_addresses=127.0.0.1",
                 "-p", str(self.port), "-k", str(self.root), "-c", "fsync=off", "-c", "synchronous_commit=off",
                 "-c", "full_page_writes=off", "-c", "max_connections=200"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=_dies_with_parent(self._user))
        self._wait_ready(60.0)
        self.execute("CREATE DATABASE template_answers")
        return self

    def _wait_ready(self, seconds: float) -> None:
        import psycopg

        deadline = time.monotonic() + seconds
        while True:
            assert self.server is not None
            if self.server.poll() is not None:
                log = (self.root / "server.log").read_text(errors="replace")
                raise RuntimeError(f"postgres exited with {self.server.returncode} on start: {log[-2000:]}")
            try:
                with psycopg.connect(self.url(), connect_timeout=2):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

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
            if self.server is not None and self.server.poll() is None:
                self.server.send_signal(signal.SIGQUIT)  # immediate shutdown: the data is thrown away next
                try:
                    self.server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.server.kill()
                    self.server.wait(timeout=30)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
