"""Errors ingest raises; each names the file and line so an author can fix it."""

from __future__ import annotations


class IngestError(Exception):
    """Base class for ingest failures."""


class SiteConfigError(IngestError):
    """The site config file is missing a value or has one the code cannot use."""


class PageError(IngestError):
    """A content file that cannot be turned into a page."""

    def __init__(self, source: str, line: int | None, reason: str) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {reason}")
