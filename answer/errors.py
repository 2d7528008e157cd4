"""Errors the answer layer raises; the web edge turns them into statuses."""

from __future__ import annotations


class AnswerError(Exception):
    """Base class for answer failures."""


class DraftFormatError(AnswerError):
    """A generator's output is not a well-formed draft; treated as a failed verification."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw  # the reply as received, kept for the audit


class GeneratorError(AnswerError):
    """The generator could not produce a draft (model unreachable, timed out, refused by the provider)."""

    raw: str = ""  # what a stream had written before it broke, kept for the audit


class AnswerLogError(AnswerError):
    """The audit log could not be written or read."""


class AnswerLogDamagedError(AnswerLogError):
    """The answer log's file is damaged (not a database, or a malformed page): it stays so until it is moved aside."""


class AuditUnreachableError(AnswerLogError):
    """The answer log's database server (DATABASE_URL) cannot be reached or refuses the connection."""


class SecretError(AnswerError):
    """A secret every process must share (the thread-signing one) cannot be read or created."""


class LocalModelError(AnswerError):
    """The local LLM's weights or runtime are missing, corrupt or would not start."""
