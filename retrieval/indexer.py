"""Incremental index builds: embed only what changed, delete what is gone, keep what failed only as far as is safe.

The diff is by chunk id (where a citation points) and chunk hash (what the
text says): a new or edited chunk is embedded; an unchanged chunk whose
metadata moved (line numbers, access) is updated in place; a chunk whose text
reappears under a new id (a moved page) reuses its stored vector. Vectors are
written batch by batch, so an interrupted run keeps its progress and the next
run converges to exactly the content: ids are primary keys, so there are no
duplicates, and whatever is not in the content is deleted.

Access first: before anything is embedded, the live index gets every deletion,
every metadata change of unchanged text (a page made public again is public
at once), and, for chunks whose text also changed, the *tightening* part of an
access change (the old text stays readable only by groups in both the old and
the new access list until the new text replaces it). A run killed after that
step has already withdrawn what it withdraws; one killed before it changed
nothing. A full rebuild applies the same step to the live index before it
builds the new collection.

A page that fails to parse keeps its previously indexed chunks only when its
front matter still says who may read it, and then only for the groups both
the old and the new access list name. A page whose access cannot be read
(YAML that does not parse, a repeated key, a misspelled `access`, a value
that is not a list of groups) is withheld: its chunks are deleted in the
access step, until the author fixes it and the next run indexes it again.

A process that ingests again and again (the server) keeps the rows it last
saw (`KnownRows`) and asks the store only what changed since, instead of
listing every row's metadata before each diff (~10 s at 100k chunks here);
the change listing is the one the serving table's refresh relies on, and a
broken chain (a full rebuild, an unstamped writer) lists the index whole.

A run with nothing to embed never loads the model: the embedder is checked by
id against the manifest, and its dimension against the first vector it makes.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ingest.corpus import Corpus
from ingest.documents import Chunk
from ingest.errors import PageError
from ingest.ids import doc_id
from ingest.site import SiteConfig

from .embedder import Embedder
from .errors import IndexMismatchError
from .protocols import Store, StoreWriter
from .records import Manifest, Row

EMBED_BATCH = 64

Progress = Callable[[int], None]


@dataclass
class IndexReport:
    """What one build did; printed for authors and returned as JSON with `--json`."""

    pages_added: int = 0
    pages_changed: int = 0
    pages_unchanged: int = 0
    pages_removed: int = 0
    pages_failed: int = 0
    pages_withheld: int = 0  # failed pages whose access could not be read: none of their chunks stay
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_updated: int = 0
    chunks_tightened: int = 0
    chunks_deleted: int = 0
    chunks_total: int = 0
    full_rebuild: bool = False
    seconds: float = 0.0
    access_seconds: float = 0.0  # from the start until deletions and access changes were live
    embed_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)  # every failed page, as "file:line: reason"
    withheld: list[str] = field(default_factory=list)  # those of `failures` whose pages were withheld

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        lines = [
            f"pages: {self.pages_added} added, {self.pages_changed} changed, {self.pages_unchanged} unchanged, "
            f"{self.pages_removed} removed, {self.pages_failed} failed",
            f"chunks: {self.chunks_embedded} embedded, {self.chunks_reused} reused, {self.chunks_updated} updated, "
            f"{self.chunks_tightened} access-tightened, {self.chunks_deleted} deleted ({self.chunks_total} in index)",
            f"time: {self.seconds:.2f}s (access changes live after {self.access_seconds:.2f}s; "
            f"{self.embed_seconds:.2f}s embedding)"
            + (" — full rebuild" if self.full_rebuild else ""),
        ]
        lines.extend(f"WITHHELD {failure} (the page and its previously indexed chunks are out of the index "
                     "until this is fixed)" if failure in self.withheld else
                     f"FAILED {failure} (its previously indexed chunks were kept, for the groups its access still names)"
                     for failure in self.failures)
        return "\n".join(lines)


@dataclass(frozen=True)
class Plan:
    """What a build must write: the pure result of diffing the corpus against the stored index."""

    embed: tuple[Chunk, ...]
    reuse: tuple[tuple[Chunk, str], ...]  # (chunk, stored id whose vector it takes)
    update: tuple[Chunk, ...]
    delete: tuple[str, ...]


def plan_sync(chunks: Sequence[Chunk], existing: dict[str, Row], keep: set[str]) -> Plan:
    """Diff wanted chunks against the stored rows by id; ids in `keep` are never deleted."""
    wanted = {chunk.id for chunk in chunks}
    delete = sorted(set(existing) - wanted - keep)
    vector_of = {existing[cid].hash: cid for cid in delete}  # hash → a stale id holding that text's vector
    embed: list[Chunk] = []
    reuse: list[tuple[Chunk, str]] = []
    update: list[Chunk] = []
    for chunk in chunks:
        stored = existing.get(chunk.id)
        if stored is not None and stored.hash == chunk.hash:
            if not stored.matches(chunk):
                update.append(chunk)
        elif chunk.hash in vector_of:
            reuse.append((chunk, vector_of[chunk.hash]))
        else:
            embed.append(chunk)
    return Plan(tuple(embed), tuple(reuse), tuple(update), tuple(delete))


def tightened(chunk: Chunk, stored: Row) -> Chunk | None:
    """The stored chunk's record with only the groups both access lists share, or None when nothing narrows.

    For a chunk whose text changed: the old text may not become readable by a
    group the new access list adds (that waits for the new text), but must
    stop being readable at once by every group it drops.
    """
    old = stored.chunk
    keep = tuple(g for g in old.access if g in chunk.access)
    return None if keep == old.access else replace(old, access=keep)


def sync_index(
    corpus: Corpus,
    store: Store,
    embedder: Embedder,
    *,
    full: bool = False,
    progress: Callable[[int], Progress] | None = None,
    on_access: Callable[[IndexReport], None] | None = None,
    known: KnownRows | None = None,
) -> IndexReport:
    """Make the index equal the corpus; a page that failed to parse keeps its old chunks only as far as is safe.

    `on_access` is called once deletions and access changes are live, before any embedding. `known`, kept by
    the caller from one run to the next, spares a long-lived writer the listing of every stored row.
    """
    started = time.perf_counter()
    report = IndexReport(full_rebuild=full)
    current = store.manifest()
    site_name = site_identity(corpus.root, corpus.site)
    if current is not None and not full:
        current.check_embedder(embedder.id)
        current.check_site(site_name)  # before anything is deleted
    dimension = current.dimension if current is not None and not full else embedder.dimension
    manifest = Manifest(embedder=embedder.id, dimension=dimension, site=corpus.site.fingerprint, site_name=site_name)
    previous = (known.read(store) if known is not None else _stored(store)) if current is not None else {}
    failed_sources = {failure.source for failure in corpus.failures}
    kept_chunks = _kept_for_failed(previous, corpus.failures)
    kept = set(kept_chunks)
    narrowed_kept = [chunk for cid, chunk in kept_chunks.items() if not previous[cid].matches(chunk)]
    report.pages_failed = len(failed_sources)
    report.failures = [str(failure) for failure in corpus.failures]
    report.withheld = [str(failure) for failure in corpus.failures if failure.withheld]
    report.pages_withheld = len({failure.source for failure in corpus.failures if failure.withheld})
    chunks = corpus.chunks()

    # 1. Access first, on the live index: deletions, metadata of unchanged text, tightening of changed text.
    live_plan = plan_sync(chunks, previous, kept)
    if live_plan.embed and not full and embedder.dimension != dimension:  # refuse before writing anything
        _check_vectors([[0.0] * embedder.dimension], 1, manifest)
    reused_vectors: list[list[float]] = []
    applied = bool(previous) and current is not None and (current.embedder, current.dimension) == (embedder.id, dimension)
    if applied:
        assert current is not None
        if not full and live_plan.reuse:  # their vectors sit under ids about to be deleted
            reused_vectors = store.vectors([cid for _, cid in live_plan.reuse])
        _apply_access(store.open_for_write(current), live_plan, previous, report, narrowed_kept)
    report.access_seconds = round(time.perf_counter() - started, 3)
    if on_access:
        on_access(report)

    # 2. Then the slow part: embed (into the live collection, or a fresh one for a full rebuild).
    writer = store.open_for_write(manifest, fresh=full)
    if writer.is_fresh:
        carry = kept - {chunk.id for chunk in chunks}
        if carry:  # a fresh collection must carry the failed pages' chunks over, re-embedded, with narrowed access
            chunks = chunks + [replace(c, access=kept_chunks[c.id].access) for c in store.chunks(ids=sorted(carry))]
        plan = plan_sync(chunks, {}, kept)
    elif applied:
        plan = Plan(live_plan.embed, live_plan.reuse, (), ())  # updates and deletions are already live
    else:
        plan = replace(live_plan, update=live_plan.update + tuple(narrowed_kept))
    _count_pages(report, corpus, chunks, previous, failed_sources, live_plan if previous else plan)

    if plan.reuse:
        vectors = reused_vectors if reused_vectors else store.vectors([cid for _, cid in plan.reuse])
        writer.upsert([chunk for chunk, _ in plan.reuse], vectors)
        report.chunks_reused = len(plan.reuse)

    tick = progress(len(plan.embed)) if progress and plan.embed else None
    embed_started = time.perf_counter()
    report.chunks_embedded = embed_and_write(plan.embed, embedder, writer, manifest, tick)
    report.embed_seconds = round(time.perf_counter() - embed_started, 3)

    writer.update_metadata(plan.update)
    report.chunks_updated += len(plan.update)
    writer.delete(plan.delete)
    report.chunks_deleted += len(plan.delete)
    writer.commit()
    report.chunks_total = store.count()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def site_identity(root: Path, site: SiteConfig) -> str:
    """Which site a content folder is: the name its site.toml gives, else the folder's own name.

    Not its path: replicas on several machines hold the same site at different paths and share one index.
    """
    return site.name if site.fingerprint else root.resolve().name


def embed_and_write(chunks: Sequence[Chunk], embedder: Embedder, writer: StoreWriter, manifest: Manifest,
                    tick: Progress | None = None) -> int:
    """Embed batch by batch while the previous batch is written, so the store's time hides behind the model's.

    Texts go shortest first, so each batch pads to a similar length (the
    model's time grows with the longest text of a batch). A batch counts as
    done, and is reported to `tick`, once it is written; a failure in either
    step stops the loop after the write in flight, keeping the progress made.
    """
    ordered = sorted(chunks, key=lambda c: (len(c.embedding_text), c.id))
    written = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-write") as pool:
        pending: tuple[Future[None], int] | None = None
        for start in range(0, len(ordered), EMBED_BATCH):
            batch = ordered[start : start + EMBED_BATCH]
            vectors = embedder.embed([c.embedding_text for c in batch])
            _check_vectors(vectors, len(batch), manifest)
            written += _settle(pending, tick)
            pending = (pool.submit(writer.upsert, batch, vectors), len(batch))
        written += _settle(pending, tick)
    return written


def _settle(pending: tuple[Future[None], int] | None, tick: Progress | None) -> int:
    """Wait for the write in flight (raising its error); how many chunks it wrote."""
    if pending is None:
        return 0
    pending[0].result()
    if tick:
        tick(pending[1])
    return pending[1]


def _apply_access(live: StoreWriter, plan: Plan, previous: dict[str, Row], report: IndexReport,
                  narrowed_kept: Sequence[Chunk] = ()) -> None:
    """Make deletions and access changes live before anything is embedded, and say so to readers."""
    narrowed = [n for n in (tightened(c, previous[c.id]) for c in plan.embed if c.id in previous) if n is not None]
    narrowed += narrowed_kept
    live.update_metadata(list(plan.update) + narrowed)
    live.delete(plan.delete)
    live.mark_changed()
    report.chunks_updated = len(plan.update)
    report.chunks_tightened = len(narrowed)
    report.chunks_deleted = len(plan.delete)


class KnownRows:
    """The live index's rows as of one generation, carried by a writer from one ingest to its next.

    `read` answers what `store.rows()` would, by the rows written and deleted since (`Store.changes`):
    the diff, and so the access step, sees exactly the stored state, at the cost of what changed.
    """

    def __init__(self) -> None:
        self._generation: str | None = None
        self._rows: dict[str, Row] = {}

    def read(self, store: Store) -> dict[str, Row]:
        """Every stored row by chunk id, now (the caller holds the index lock: no other writer moves it)."""
        try:
            changes = store.changes(self._generation) if self._generation is not None else None
        except IndexMismatchError:
            changes = None
        if changes is not None and changes.complete:
            rows = self._rows
            for deleted in changes.deleted:
                rows.pop(deleted, None)
            rows.update((row.chunk.id, row) for row in changes.rows)
            self._generation = changes.generation
        else:
            generation = store.generation()
            rows = _stored(store)
            self._generation = generation if rows else None
        self._rows = rows
        return dict(rows)


def _stored(store: Store) -> dict[str, Row]:
    try:
        return {row.chunk.id: row for row in store.rows()}
    except IndexMismatchError:  # the live collection is gone; only a full rebuild gets here (open_for_write)
        return {}


def _check_vectors(vectors: Sequence[Sequence[float]], expected: int, manifest: Manifest) -> None:
    """The dimension check a no-op run skips: the first vectors made must fit the index."""
    if len(vectors) != expected:
        raise ValueError(f"embedder returned {len(vectors)} vectors for {expected} texts")
    for vector in vectors[:1]:
        if len(vector) != manifest.dimension:
            raise IndexMismatchError(
                f"index holds {manifest.dimension}-dim vectors but embedder {manifest.embedder!r} makes "
                f"{len(vector)}-dim ones; run `make ingest FULL=1` to rebuild"
            )


def _kept_for_failed(previous: dict[str, Row], failures: Sequence[PageError]) -> dict[str, Chunk]:
    """The stored chunks failed pages keep, by id, each narrowed to the groups the page's access still names.

    A page's chunks are those written in its file and those written in a
    partial it renders (their `source` is the partial's file, their page the
    failed one). A withheld page keeps none, nor does a chunk no group of the
    new access list could read before.
    """
    access_of = {failure.source: failure.access for failure in failures}
    source_of = {row.chunk.doc_id: row.chunk.source for row in previous.values() if row.chunk.source in access_of}
    kept: dict[str, Chunk] = {}
    for cid, row in previous.items():
        source = row.chunk.source if row.chunk.source in access_of else source_of.get(row.chunk.doc_id)
        declared = access_of.get(source) if source is not None else None
        if declared is None:
            continue
        still = tuple(g for g in row.chunk.access if g in declared and g in row.readers)
        if still:
            kept[cid] = replace(row.chunk, access=still)
    return kept


def _count_pages(
    report: IndexReport,
    corpus: Corpus,
    chunks: Sequence[Chunk],
    previous: dict[str, Row],
    failed_sources: set[str],
    plan: Plan,
) -> None:
    """Count pages by what the index holds for each, keyed by page (`doc_id`), not by the file a chunk came from.

    A chunk spliced in from a partial names the partial's file as its source, so
    counting by source made a page that renders only partials "added" on every
    run (and each partial "removed"). A page with nothing to index (front matter
    only, a splash page, text that is all near-duplicates of another page) has
    nothing stored before or after: it is unchanged, not added again each run.
    """
    before: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for cid, row in previous.items():
        before[row.chunk.doc_id].add((cid, row.hash))
    after: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for chunk in chunks:
        after[chunk.doc_id].add((chunk.id, chunk.hash))
    touched = {chunk.doc_id for chunk in plan.update}
    for page in corpus.pages:
        key = doc_id(page.slug)
        if key not in before and after.get(key):
            report.pages_added += 1
        elif before.get(key, set()) == after.get(key, set()) and key not in touched:
            report.pages_unchanged += 1
        else:
            report.pages_changed += 1
    current = {doc_id(page.slug) for page in corpus.pages}
    failed = {row.chunk.doc_id for row in previous.values() if row.chunk.source in failed_sources}
    failed |= {doc_id(corpus.site.rules.page_slug(source)) for source in failed_sources}
    report.pages_removed = len(set(before) - current - failed)
