"""What a command line prints about a corpus: its failed pages and its warnings, on stderr, the same everywhere."""

from __future__ import annotations

import sys

from .corpus import Corpus
from .errors import PageError


def print_failures(failures: tuple[PageError, ...]) -> None:
    """One `error:` line per page that could not be read or split (everything else was processed)."""
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)


def print_warnings(corpus: Corpus, *, indexed: bool = True) -> None:
    """Unclosed fences and brackets, broken links, unmatched built headings: one `warning:` line each."""
    warnings = corpus.warnings
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if warnings and indexed:
        print(f"{len(warnings)} warning(s): the pages were still indexed", file=sys.stderr, flush=True)
