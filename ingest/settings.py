"""Configuration, read once at the edge from the environment (and a `.env` file), one layer at a time.

Each layer owns the settings of what it configures and reads only its own
environment variables: ingest the content and data folders (here), retrieval
the models and the store (`retrieval/settings.py`), answer the LLM and the
answer policies (`answer/settings.py`), web the server (`web/settings.py`).
Each class extends the one below it, so an entrypoint takes the class of its
own layer and gets everything underneath; `web.settings.Settings` is all of
it. Only entrypoints (`python -m ingest|retrieval|answer|web`) call
`from_env()`; library code takes plain arguments. Policies are typed
(`Literal`s) and checked once, here at the edge, with messages naming the
variable to fix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

REPO_ROOT = Path(__file__).resolve().parent.parent


def env_path(env: dict[str, str], name: str, default: Path) -> Path:
    """A folder named by an environment variable (`~` expanded, made absolute), or the default."""
    value = env.get(name, "").strip()
    return Path(value).expanduser().resolve() if value else default


@dataclass(frozen=True)
class IngestSettings:
    """Where the content is read from and where everything derived from it is kept."""

    content_dir: Path = REPO_ROOT / "content"
    data_dir: Path = REPO_ROOT / ".data"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, *, dotenv: bool = True) -> Self:
        """Settings from environment variables; a `.env` in the working directory fills gaps."""
        if env is None:
            if dotenv:
                from dotenv import load_dotenv

                load_dotenv(Path.cwd() / ".env", override=False)
            env = dict(os.environ)
        return cls(**cls.read_env(env))

    @classmethod
    def read_env(cls, env: dict[str, str]) -> dict[str, Any]:
        """This layer's fields from `env`, validated; each subclass adds its own to its parent's."""
        return {"content_dir": env_path(env, "CONTENT_DIR", cls.content_dir),
                "data_dir": env_path(env, "DATA_DIR", cls.data_dir)}
