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

from .errors import IndexMismatchError, QueryError, SiteMismatchError

INDEX_FORMAT = 1  # rows stamped with `changed` read the same way: an index written before stamps is listed whole once
# Named groups a reader may be in, besides `public` (so a query has at most MAX_GROUPS + 1 clauses).
# Chroma's filter depth is the reason: ~1,000 `$or` clauses fail, ~10,000 crash its native code.
MAX_GROUPS = 64
_ACL_PREFIX = "acl_"
CHANGED = "changed"  # per-row metadata: the change stamp of the generation that last wrote the row
# Ids deleted per stamp, kept in the pointer so a reader behind by a few generations can drop them without a
# listing; past this many the oldest stamps are forgotten and a reader that far behind lists the index whole.
DELETION_LOG_IDS = 2_000

Metadata = dict[str, Any]  # one stored chunk's metadata, as the store keeps it: only this module reads its keys


@dataclass(frozen=True)
class Manifest:
    """What built an index; a reader with a different embedder must not use it."""

    embedder: str
    dimension: int
    format: int = INDEX_FORMAT
    site: str = ""  # hash of the site.toml that built it
    site_name: str = ""  # which site it holds (`site_identity`); "" for an index built before it was recorded

    def check_site(self, site_name: str) -> None:
        """Raise when this index holds another site: syncing it to this folder would delete every page of the other.

        An index belongs to one site. Pointing a server or an ingest at another content folder with the same
        DATA_DIR used to replace one site's index with the other's and leave past answers citing deleted pages.
        """
        if self.site_name and site_name and self.site_name != site_name:
            raise SiteMismatchError(
                f"this index holds the site {self.site_name!r}, not {site_name!r}: give this content folder its own "
                "DATA_DIR (or CHROMA_URL), or replace the index on purpose with `make ingest FULL=1`"
            )

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


@dataclass(frozen=True)
class Changes:
    """What changed in the live index since a reader's generation, up to `generation`.

    `rows` are the rows written since (metadata only, current), `deleted` the
    ids deleted since and not written again. `complete` is False when the
    live collection was replaced by a full rebuild whose access step the
    reader already holds: nothing to tighten, but the content must be listed whole.
    """

    generation: str
    rows: tuple[Row, ...] = ()
    deleted: frozenset[str] = frozenset()
    complete: bool = True


@dataclass(frozen=True)
class ChangeLog:
    """The change stamp chain a pointer carries: the current stamp and the ids deleted at each recent stamp.

    `stamped` is the generation the stamp was set with: a writer that moves
    the generation without stamping (code from before stamps) breaks the
    chain, and readers then list the index whole. `floor` is the oldest stamp
    whose deletions are all still logged.
    """

    stamp: int
    stamped: str
    floor: int
    deleted: tuple[tuple[int, tuple[str, ...]], ...] = ()

    @classmethod
    def of(cls, meta: Metadata) -> ChangeLog | None:
        """The chain a pointer's metadata holds, or None when it has none or it is broken."""
        if "stamp" not in meta or meta.get("stamped") != meta.get("generation"):
            return None
        pairs = json.loads(str(meta.get("deleted", "[]")))
        return cls(int(meta["stamp"]), str(meta["stamped"]), int(meta.get("floor", 0)),
                   tuple((int(s), tuple(ids)) for s, ids in pairs))

    @classmethod
    def start(cls, stamp: int, generation: str) -> ChangeLog:
        """A chain for a new collection: nothing before `stamp` can be asked of it."""
        return cls(stamp, generation, stamp + 1)

    def advance(self, stamp: int, generation: str, deleted: Sequence[str]) -> ChangeLog:
        """The chain after a generation stamped `stamp` deleted `deleted`, the oldest entries dropped past the cap."""
        entries = [*self.deleted, *([(stamp, tuple(sorted(set(deleted))))] if deleted else [])]
        floor = self.floor
        while entries and sum(len(ids) for _, ids in entries) > DELETION_LOG_IDS:
            floor = entries.pop(0)[0] + 1
        return ChangeLog(stamp, generation, floor, tuple(entries))

    def deleted_since(self, stamp: int) -> frozenset[str] | None:
        """Ids deleted after `stamp`, or None when the log no longer reaches back that far."""
        if stamp + 1 < self.floor or stamp > self.stamp:
            return None
        return frozenset(i for s, ids in self.deleted if s > stamp for i in ids)

    def metadata(self) -> Metadata:
        return {"stamp": self.stamp, "stamped": self.stamped, "floor": self.floor,
                "deleted": json.dumps([[s, list(ids)] for s, ids in self.deleted])}


def generation_token(collection: str, generation: str, log: ChangeLog | None) -> str:
    """What `generation()` returns: the collection, the generation, and the change stamp when the chain holds."""
    return f"{collection}:{generation}" + (f":{log.stamp}" if log is not None else "")


def token_stamp(token: str, collection: str) -> int | None:
    """The change stamp a token of `collection` carries, or None (another collection, or no chain)."""
    parts = token.split(":")
    if len(parts) != 3 or parts[0] != collection or not parts[2].isdigit():
        return None
    return int(parts[2])


def changed_filter(stamp: int) -> dict[str, Any]:
    """A Chroma `where` for the rows written after change stamp `stamp`."""
    return {CHANGED: {"$gt": stamp}}


def stamped_metadata(chunk: Chunk, stamp: int) -> Metadata:
    """The metadata a writer stores: the chunk's, and the stamp of the generation writing it."""
    return chunk_metadata(chunk) | {CHANGED: stamp}


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
    if chunk.groups:
        meta["groups"] = json.dumps(list(chunk.groups), ensure_ascii=False)
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
        groups=tuple(json.loads(str(meta["groups"]))) if "groups" in meta else (),
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
