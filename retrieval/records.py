"""What a store holds, as types: the manifest, a stored row, a stored record, and their metadata encoding.

Pure (no chromadb): every store, the in-memory one included, encodes and
decodes through here, so the access keys a query filters on are the same
keys everywhere, and a flaw in them (two group names meeting in one key)
shows in every store's tests, not only against Chroma.

Access control lives in the encoding: every chunk carries one boolean
metadata key per group that may read it (`acl_public`, `acl_staff`), and a
query filters on the viewer's groups with a `where` built here, so a
restricted chunk is never scored for a viewer who may not read it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ingest.documents import GROUP_RULE, PUBLIC, Chunk, SourceSpan, is_group_name

from .errors import IndexMismatchError, QueryError

INDEX_FORMAT = 1
# Named groups a reader may be in, besides `public` (so a query has at most MAX_GROUPS + 1 clauses).
# Chroma's filter depth is the reason: ~1,000 `$or` clauses fail, ~10,000 crash its native code.
MAX_GROUPS = 64
_ACL_PREFIX = "acl_"

Metadata = dict[str, Any]  # one stored chunk's metadata, as the store keeps it: only this module reads its keys


@dataclass(frozen=True)
class Manifest:
    """What built an index; a reader with a different embedder must not use it."""

    embedder: str
    dimension: int
    format: int = INDEX_FORMAT
    site: str = ""

    def check_embedder(self, embedder: str) -> None:
        """Raise when this index was built by another embedder (needs no model load: ids only)."""
        if self.embedder != embedder:
            raise IndexMismatchError(
                f"index was built with embedder {self.embedder!r} but {embedder!r} is configured; "
                "run `make ingest FULL=1` to rebuild"
            )

    def check(self, embedder: str, dimension: int) -> None:
        """Raise when this index cannot be read with the given embedder."""
        if self.format != INDEX_FORMAT:
            raise IndexMismatchError(
                f"index format {self.format} is not the supported format {INDEX_FORMAT}; "
                "rebuild it with `make ingest FULL=1`"
            )
        if (self.embedder, self.dimension) != (embedder, dimension):
            raise IndexMismatchError(
                f"index was built with embedder {self.embedder!r} ({self.dimension} dims) but "
                f"{embedder!r} ({dimension} dims) is configured; run `make ingest FULL=1` to rebuild"
            )


@dataclass(frozen=True)
class Record:
    """One stored chunk as the store holds it: the chunk, its vector, the groups its access keys admit."""

    chunk: Chunk
    vector: Sequence[float]
    readers: frozenset[str]


@dataclass(frozen=True)
class Row:
    """One stored chunk's metadata, decoded: what an incremental build diffs against.

    The listing reads metadata only (no texts, no vectors), so `chunk.text`
    is empty. `readers` are the groups the stored access keys admit, which
    may differ from `chunk.access` when a write was interrupted; then the row
    does not match the chunk and the build rewrites it.
    """

    chunk: Chunk
    readers: frozenset[str]

    @classmethod
    def of(cls, chunk: Chunk) -> Row:
        """The row a store holds after writing `chunk`."""
        return cls(replace(chunk, text=""), frozenset(chunk.access))

    @property
    def hash(self) -> str:
        return self.chunk.hash

    def matches(self, chunk: Chunk) -> bool:
        """True when writing `chunk` would store exactly this metadata: nothing to update."""
        return self == Row.of(chunk)


def acl_key(group: str) -> str:
    """The metadata key marking a chunk readable by `group`: the name itself, so distinct names never share a key.

    Only names in the group alphabet have a key; anything else is an error
    rather than an escaped form that could meet another name's key.
    """
    if not is_group_name(group):
        raise ValueError(f"group name {group!r} is not allowed: use {GROUP_RULE}")
    return _ACL_PREFIX + group


def acl_filter(groups: Iterable[str]) -> dict[str, Any]:
    """A Chroma `where` that admits only chunks one of `groups` may read."""
    names = sorted(set(groups))
    named = [n for n in names if n != PUBLIC]
    if len(named) > MAX_GROUPS:
        raise QueryError(f"a reader may be in at most {MAX_GROUPS} groups besides {PUBLIC}, got {len(named)}")
    clauses = [{acl_key(g): True} for g in names]
    if not clauses:
        raise ValueError("a query needs at least one reader group")
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def chunk_metadata(chunk: Chunk) -> Metadata:
    """The metadata stored beside a chunk's text and vector: its fields, and one access key per reader group."""
    meta: Metadata = {
        "doc_id": chunk.doc_id,
        "anchor": chunk.anchor,
        "url": chunk.url,
        "title": chunk.title,
        "heading_path": json.dumps(list(chunk.heading_path), ensure_ascii=False),
        "source": chunk.source,
        "line_start": chunk.span.line_start,
        "line_end": chunk.span.line_end,
        "span_start": chunk.span.start,
        "span_end": chunk.span.end,
        "doc_version": chunk.doc_version,
        "hash": chunk.hash,
        "access": ",".join(chunk.access),
    }
    meta.update({acl_key(group): True for group in chunk.access})
    return meta


def readers_of(meta: Metadata) -> frozenset[str]:
    """The groups whose access key is set on a stored record: who the store's `where` admits."""
    return frozenset(key[len(_ACL_PREFIX):] for key, value in meta.items() if key.startswith(_ACL_PREFIX) and value is True)


def chunk_from_record(chunk_id: str, text: str, meta: Metadata) -> Chunk:
    return Chunk(
        id=chunk_id,
        doc_id=meta["doc_id"],
        anchor=meta["anchor"],
        url=meta["url"],
        title=meta["title"],
        heading_path=tuple(json.loads(meta["heading_path"])),
        text=text,
        source=meta["source"],
        span=SourceSpan(meta["line_start"], meta["line_end"], meta["span_start"], meta["span_end"]),
        doc_version=meta["doc_version"],
        hash=meta["hash"],
        access=tuple(meta["access"].split(",")),
    )


def decode_record(chunk_id: str, text: str, meta: Metadata, vector: Sequence[float]) -> Record:
    return Record(chunk_from_record(chunk_id, text, meta), vector, readers_of(meta))


def decode_row(chunk_id: str, meta: Metadata) -> Row:
    return Row(chunk_from_record(chunk_id, "", meta), readers_of(meta))


def is_whole(document: Any, meta: Any) -> bool:
    """False for a record read while a writer deletes it: a Chroma server can return its id with no metadata.

    Such a record has no access keys to check, so it is never served (and never counted as stored).
    """
    return document is not None and isinstance(meta, dict) and "doc_id" in meta and "hash" in meta
