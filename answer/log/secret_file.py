"""Secrets beside a SQLite answer log: one file each under DATA_DIR, created atomically by the first process.

A new secret is written aside, then hard-linked into place: of several workers
starting at the same moment, the first link wins, whole, and the others read
the winner's file, never half of one. The file is the owner's only (mode 0600).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from ..errors import SecretError


class FileSecrets:
    """`folder/<name>` files, one random hex secret each."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def location(self, name: str) -> str:
        return str(self.folder / name)

    def secret(self, name: str) -> str:
        path = self.folder / name
        try:
            if not path.exists():
                _create(path)
            return path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeError) as exc:
            raise SecretError(f"cannot read or create the secret {path}: {exc}; make {self.folder} writable by "
                              "the server") from exc


def _create(path: Path) -> None:
    """Write a new secret aside, then hard-link it into place: of several workers, the first link wins, whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32) + "\n")
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileExistsError):  # another worker won: its secret is the one
            os.link(aside, path)
    finally:
        aside.unlink(missing_ok=True)
