"""Durable chunk ids, minted in exactly one place.

Ids are location-based (`doc:<slug>#<anchor>`, later parts `~2`, `~3`), so a
typo fix keeps the id and only the content hash changes; a renamed heading is
a new id because the old deep link no longer lands anywhere.
"""

from __future__ import annotations

import hashlib

DOC_PREFIX = "doc:"


def doc_id(slug: str) -> str:
    """The id of a page: `doc:<slug>`."""
    return f"{DOC_PREFIX}{slug}"


def chunk_id(slug: str, anchor: str, part: int = 1) -> str:
    """The id of one chunk; `part` > 1 marks the later pieces of a split section."""
    if part < 1:
        raise ValueError(f"chunk part numbers start at 1, got {part}")
    base = doc_id(slug) if not anchor else f"{doc_id(slug)}#{anchor}"
    return base if part == 1 else f"{base}~{part}"


def content_hash(*parts: str) -> str:
    """A short, stable fingerprint of text; decides whether a chunk is re-embedded."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]
