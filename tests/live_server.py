"""The real thing, as an author runs it: `python -m web` in one process, `make ingest` in another.

Used by the live re-ingest test and by `make bench` (publish-to-answerable).
Each server gets its own content folder and DATA_DIR (with the provisioned
model linked in, so nothing is downloaded); `CHROMA_URL` selects server mode.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

from tests.processes import free_port, supervised

REPO = Path(__file__).resolve().parent.parent
HEADER = "X-Groups"


def environment(site: Path, data: Path, *, chroma_url: str = "", port: int = 0) -> dict[str, str]:
    """The environment an author's shell would have: this checkout first on the path, offline model."""
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_MODEL", "CHROMA_URL", "PYTEST_CURRENT_TEST")}
    env |= {"PYTHONPATH": str(REPO), "DATA_DIR": str(data), "CONTENT_DIR": str(site), "HOST": "127.0.0.1",
            "PORT": str(port or free_port()), "IDENTITY_HEADER": HEADER, "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "RATE_LIMIT": "off"}  # these servers are polled until an edit is answerable; the limit has its own tests
    if chroma_url:
        env["CHROMA_URL"] = chroma_url
    return env


def link_models(data: Path, model_dir: Path) -> None:
    """DATA_DIR/models → the provisioned models folder (the Makefile's model target then has nothing to do)."""
    data.mkdir(parents=True, exist_ok=True)
    if not (data / "models").exists():
        (data / "models").symlink_to(model_dir.parent, target_is_directory=True)


@contextmanager
def web_server(env: dict[str, str], log: Path, *, startup: float = 180.0, args: tuple[str, ...] = ()) -> Iterator[str]:
    """`python -m web --ingest` until the block ends; yields its base URL once /readyz passes."""
    with log.open("wb") as out:
        process = launch_web(env, out, args=args)
        with supervised_web(process, env, log, startup=startup) as url:
            yield url


def launch_web(env: dict[str, str], out: IO[bytes], *, args: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    """Start `python -m web --ingest` without waiting for it (replicas racing each other start this way)."""
    return subprocess.Popen([sys.executable, "-m", "web", "--ingest", *args], env=env, cwd=Path(out.name).parent,
                            stdout=out, stderr=subprocess.STDOUT)


@contextmanager
def supervised_web(process: subprocess.Popen[bytes], env: dict[str, str], log: Path, *,
                   startup: float = 180.0) -> Iterator[str]:
    """Wait until a launched server's /readyz passes; stop it when the block ends. Yields its base URL."""
    url = f"http://127.0.0.1:{env['PORT']}"
    with supervised(process, lambda: ready(url), startup=startup, what=f"python -m web (see {log})",
                    stop_timeout=20, poll=0.2):
        yield url


def ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class IngestRun:
    """One `make ingest`: when it started, printed its access line, and returned; what it printed."""

    started: float
    returned: float = 0.0
    access_at: float | None = None
    returncode: int | None = None
    lines: list[str] = field(default_factory=list)
    process: subprocess.Popen | None = None

    def wait(self, timeout: float = 300.0) -> IngestRun:
        assert self.process is not None
        self.returncode = self.process.wait(timeout=timeout)
        self.returned = time.monotonic()
        self._reader.join(timeout=10)
        return self

    def start_reader(self) -> None:
        def read() -> None:
            assert self.process is not None and self.process.stdout is not None
            for raw in self.process.stdout:
                line = raw.decode(errors="replace").rstrip()
                self.lines.append(line)
                if line.startswith("access step live") and self.access_at is None:
                    self.access_at = time.monotonic()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()


def make_ingest(env: dict[str, str], *variables: str) -> IngestRun:
    """Start `make ingest [VAR=value…]` (the authors' command) in another process; `.wait()` for it."""
    return _ingest(["make", "-s", "-C", str(REPO), "ingest", *variables], env)


def cli_ingest(env: dict[str, str], *args: str) -> IngestRun:
    """Start `python -m retrieval index [args…]`, the command `make ingest` runs, without make's setup step."""
    return _ingest([sys.executable, "-m", "retrieval", "index", *args], env)


def _ingest(command: list[str], env: dict[str, str]) -> IngestRun:
    run = IngestRun(started=time.monotonic())
    run.process = subprocess.Popen(command, env=env, cwd=REPO, start_new_session=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # own group: kill -9 reaches the CLI
    run.start_reader()
    return run
