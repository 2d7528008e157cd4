"""Incremental index builds: embed only what changed, delete what is gone, never lose what failed.

The diff is by chunk id (where a citation points) and chunk hash (what the
text says): a new or edited chunk is embedded; an unchanged chunk whose
metadata moved (line numbers, access) is updated in place; a chunk whose text
reappears under a new id (a moved page) reuses its stored vector. Vectors are
written batch by batch, so an interrupted run keeps its progress and the next
run converges to exactly the content: ids are primary keys, so there are no
duplicates, and whatever is not in the content is deleted.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ingest.corpus import Corpus
from ingest.documents import Chunk

from .embedder import Embedder
from .store import ChromaStore, Manifest, chunk_metadata

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
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_updated: int = 0
    chunks_deleted: int = 0
    chunks_total: int = 0
    full_rebuild: bool = False
    seconds: float = 0.0
    embed_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        lines = [
            f"pages: {self.pages_added} added, {self.pages_changed} changed, {self.pages_unchanged} unchanged, "
            f"{self.pages_removed} removed, {self.pages_failed} failed",
            f"chunks: {self.chunks_embedded} embedded, {self.chunks_reused} reused, {self.chunks_updated} updated, "
            f"{self.chunks_deleted} deleted ({self.chunks_total} in index)",
            f"time: {self.seconds:.2f}s ({self.embed_seconds:.2f}s embedding)"
            + (" — full rebuild" if self.full_rebuild else ""),
        ]
        lines.extend(f"FAILED {failure}" for failure in self.failures)
        return "\n".join(lines)


def sync_index(
    corpus: Corpus,
    store: ChromaStore,
    embedder: Embedder,
    *,
    full: bool = False,
    progress: Callable[[int], Progress] | None = None,
) -> IndexReport:
    """Make the index equal the corpus (except pages that failed to parse, which keep their old chunks)."""
    started = time.perf_counter()
    report = IndexReport(full_rebuild=full)
    manifest = Manifest(
        embedder=embedder.id, dimension=embedder.dimension, content_root=str(corpus.root), site=corpus.site.fingerprint
    )
    writer = store.open_for_write(manifest, fresh=full)
    existing = writer.existing()
    failed_sources = {failure.source for failure in corpus.failures}
    report.pages_failed = len(failed_sources)
    report.failures = [str(failure) for failure in corpus.failures]

    chunks = corpus.chunks()
    wanted = {chunk.id: chunk for chunk in chunks}
    kept_from_failed = {cid for cid, (_, meta) in existing.items() if meta.get("source") in failed_sources}
    _count_pages(report, corpus, chunks, existing, failed_sources)

    to_embed: list[Chunk] = []
    to_update: list[Chunk] = []
    for chunk in chunks:
        stored = existing.get(chunk.id)
        if stored is None or stored[0] != chunk.hash:
            to_embed.append(chunk)
        elif _metadata_changed(stored[1], chunk):
            to_update.append(chunk)
    stale = sorted(set(existing) - set(wanted) - kept_from_failed)

    reusable = {meta["hash"]: cid for cid, (_, meta) in existing.items() if cid in set(stale)}
    reuse = [c for c in to_embed if c.hash in reusable]
    if reuse:
        vectors = store.vectors([reusable[c.hash] for c in reuse])
        writer.upsert(reuse, vectors)
        report.chunks_reused = len(reuse)
        to_embed = [c for c in to_embed if c.hash not in reusable]

    tick = progress(len(to_embed)) if progress and to_embed else None
    embed_started = time.perf_counter()
    for start in range(0, len(to_embed), EMBED_BATCH):
        batch = to_embed[start : start + EMBED_BATCH]
        writer.upsert(batch, embedder.embed([c.embedding_text for c in batch]))
        report.chunks_embedded += len(batch)
        if tick:
            tick(len(batch))
    report.embed_seconds = round(time.perf_counter() - embed_started, 3)

    writer.update_metadata(to_update)
    report.chunks_updated = len(to_update)
    writer.delete(stale)
    report.chunks_deleted = len(stale)
    writer.commit()
    report.chunks_total = store.count()
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _metadata_changed(stored: dict[str, Any], chunk: Chunk) -> bool:
    fresh = chunk_metadata(chunk)
    return any(stored.get(key) != value for key, value in fresh.items()) or any(
        key.startswith("acl_") and value and key not in fresh for key, value in stored.items()
    )


def _count_pages(
    report: IndexReport,
    corpus: Corpus,
    chunks: Sequence[Chunk],
    existing: dict[str, tuple[str, dict[str, Any]]],
    failed_sources: set[str],
) -> None:
    before: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for cid, (digest, meta) in existing.items():
        before[meta.get("source", "")].add((cid, digest))
    after: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for chunk in chunks:
        after[chunk.source].add((chunk.id, chunk.hash))
    for page in corpus.pages:
        if page.source not in before:
            report.pages_added += 1
        elif before[page.source] == after[page.source]:
            report.pages_unchanged += 1
        else:
            report.pages_changed += 1
    current = {page.source for page in corpus.pages}
    report.pages_removed = len(set(before) - current - failed_sources)
