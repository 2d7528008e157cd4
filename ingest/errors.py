"""Errors ingest raises; each names the file and line so an author can fix it."""

from __future__ import annotations


class IngestError(Exception):
    """Base class for ingest failures."""


class SiteConfigError(IngestError):
    """The site config file is missing a value or has one the code cannot use."""


class PageError(IngestError):
    """A content file that cannot be turned into a page.

    `access` is who the page's front matter says may read it, when that much
    could be read; None means nobody can tell, so the page is withheld (its
    previously indexed chunks go too) rather than kept as it was.
    """

    def __init__(self, source: str, line: int | None, reason: str, *, access: tuple[str, ...] | None = None) -> None:
        self.source = source
        self.line = line
        self.reason = reason
        self.access = access
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {reason}")

    @property
    def withheld(self) -> bool:
        """True when the page's access could not be read: nothing of it may stay readable."""
        return self.access is None

    def with_access(self, access: tuple[str, ...]) -> PageError:
        """The same failure, for a page whose front matter did say who may read it."""
        return PageError(self.source, self.line, self.reason, access=access)
