"""Thread ids this server can prove it minted, and the secret that signs them (owner tokens: owner.py).

A thread id is a random nonce followed by its HMAC under the server's secret:
a made-up id (or one with a byte changed, or a trailing newline) is refused
instead of becoming a thread. Every worker and replica must sign with the same
secret, so it comes from THREAD_SECRET or from where the answer log keeps its
secrets, created once by the first process: a file under DATA_DIR beside a
SQLite log (`answer.log.secret_file`), a row of the shared database with
DATABASE_URL, so a thread id one replica signed verifies on every other.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from answer.errors import SecretError
from answer.log.protocol import SecretStore

SECRET_FILE = "thread_secret"
MIN_SECRET_CHARS = 32
NONCE_CHARS = 16
TAG_CHARS = 24
_THREAD_ID = re.compile(rf"[0-9a-f]{{{NONCE_CHARS + TAG_CHARS}}}")
LEGACY_THREAD_ID = re.compile(r"[0-9a-f]{16}")  # what the previous version minted, unsigned


class ThreadIdError(ValueError):
    """A client sent a thread id (or owner token) this server did not mint (the request gets a 400)."""


class ThreadSecretError(RuntimeError):
    """The signing secret cannot be read or created: no thread can be started or continued."""


class ThreadIds:
    """Mints and checks signed thread ids."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < MIN_SECRET_CHARS:
            raise ThreadSecretError(f"the thread secret must be at least {MIN_SECRET_CHARS} bytes, got {len(secret)}")
        self._secret = secret

    def new(self) -> str:
        nonce = secrets.token_hex(NONCE_CHARS // 2)
        return nonce + self._tag(nonce)

    def signed(self, value: object) -> bool:
        """Whether `value` is exactly an id this secret signed (no surrounding blanks, no newline)."""
        if not isinstance(value, str) or not _THREAD_ID.fullmatch(value):
            return False
        nonce, tag = value[:NONCE_CHARS], value[NONCE_CHARS:]
        return hmac.compare_digest(tag, self._tag(nonce))

    def _tag(self, nonce: str) -> str:
        return hmac.new(self._secret, b"thread:" + nonce.encode("ascii"), hashlib.sha256).hexdigest()[:TAG_CHARS]


def refused(value: object) -> ThreadIdError:
    """The error for a thread id that is not one of ours, naming what was sent and the fix."""
    shown = repr(value[:50]) if isinstance(value, str) else type(value).__name__
    return ThreadIdError(f"thread id {shown} was not minted by this server (an id is {NONCE_CHARS + TAG_CHARS} "
                         "hex digits, exactly as returned); leave it out to start a new conversation")


def thread_secret(configured: str, store: SecretStore) -> bytes:
    """THREAD_SECRET when set, else the answer log's thread secret, created once by whichever process comes first."""
    if configured:
        return configured.encode("utf-8")
    where = store.location(SECRET_FILE)
    try:
        secret = store.secret(SECRET_FILE).encode("ascii")
    except (SecretError, UnicodeError) as exc:
        raise ThreadSecretError(f"{exc}, or set THREAD_SECRET") from exc
    if len(secret) < MIN_SECRET_CHARS:
        raise ThreadSecretError(f"the thread secret in {where} is {len(secret)} bytes, under {MIN_SECRET_CHARS}; "
                                "delete it (every open thread link stops working) or set THREAD_SECRET")
    return secret
