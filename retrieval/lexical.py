"""Lexical search: BM25 (bm25s) over chunk text, title and heading path. bm25s is imported here and nowhere else.

Access control comes before scoring: one index is built per reader group-set
from only the chunks that set may read (the store's own ACL filter), so a
restricted chunk is never scored for, nor counted in the term statistics of,
a viewer who may not read it.

Freshness: the store's generation (which every ingest changes at its access
step and at its commit) is held as one `Snapshot`: a `ChunkTable` (read whole once,
then refreshed by the rows stamped since, see `retrieval.refresh`) and every
group-set's index cut from it with the same access rule as the store's
`where`. The generation is compared on every query; when it moved, the
query applies the access part of the change to the served table before it
answers (a restriction or a page made public again counts from the next
query on) and the next snapshot is prepared in the background. Until it is
swapped in, BM25 hits are re-checked against the served table (`served`), so
a restricted chunk is never returned; its terms may still count in the old
index's statistics for that window (seconds). `refresh()` drops the snapshot
at once.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ingest.documents import Chunk
from ingest.text import tokenize

from .protocols import StoreReader
from .refresh import apply_access, apply_changes, refresh_table
from .table import ChunkTable

log = logging.getLogger(__name__)


def searchable_text(chunk: Chunk) -> str:
    """What BM25 reads for a chunk: page title, heading path, then the section text."""
    return "\n".join((chunk.title, *chunk.heading_path, chunk.text))


def served(table: ChunkTable, hits: list[tuple[Chunk, float]], groups: frozenset[str]) -> list[tuple[Chunk, float]]:
    """BM25 hits as the served table holds them: only rows `groups` may read there, with the table's metadata.

    A snapshot's BM25 index is cut when its content was prepared; the access
    part of a later change reaches the table first, so a hit is re-checked
    against the table before it is used.
    """
    return [(chunk, score) for chunk, score in ((table.get(c.id), s) for c, s in hits if table.may_read(c.id, groups))
            if chunk is not None]


@dataclass(frozen=True)
class LexicalIndex:
    """A BM25 index over a fixed list of chunks (all readable by one group-set)."""

    chunks: tuple[Chunk, ...]
    fingerprint: str
    _bm25: Any

    @classmethod
    def build(cls, chunks: Sequence[Chunk], fingerprint: str = "", terms: TermCache | None = None) -> LexicalIndex:
        import bm25s

        bm25 = None
        if chunks:
            bm25 = bm25s.BM25()
            tokens = [terms.of(c) for c in chunks] if terms is not None else [tokenize(searchable_text(c)) or [""] for c in chunks]
            bm25.index(tokens, show_progress=False)
        return cls(tuple(chunks), fingerprint or chunk_fingerprint(chunks), bm25)

    def search(self, question: str, k: int) -> list[tuple[Chunk, float]]:
        """The k best-scoring chunks with a positive BM25 score, best first."""
        terms = tokenize(question)
        if self._bm25 is None or not terms or k <= 0:
            return []
        scores = np.asarray(self._bm25.get_scores(terms))
        top = np.nonzero(scores > 0)[0]
        if len(top) > k:  # keep every tie of the k-th score, so the id tie-break decides, not the partition
            kth = np.partition(scores[top], len(top) - k)[len(top) - k]
            top = top[scores[top] >= kth]
        order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), self.chunks[i].id))
        return [(self.chunks[i], float(scores[i])) for i in order[:k]]


class TermCache:
    """Each chunk's BM25 terms, kept between index builds so a rebuild after a change tokenizes only what changed.

    Tokenizing is most of a BM25 build (0.77 s of 1.3 s at 10k chunks); the
    terms are kept space-joined (no term contains a space), one string per
    chunk, and compared with what `searchable_text` reads, so an edited
    title, heading or text is tokenized again.
    """

    def __init__(self) -> None:
        self._held: dict[str, tuple[tuple[str, tuple[str, ...], str], str]] = {}

    def of(self, chunk: Chunk) -> list[str]:
        key = (chunk.title, chunk.heading_path, chunk.text)  # exactly what searchable_text reads (the text is shared, not copied)
        held = self._held.get(chunk.id)
        if held is not None and held[0] == key:
            return held[1].split(" ")
        terms = tokenize(searchable_text(chunk)) or [""]
        self._held[chunk.id] = (key, " ".join(terms))
        return terms

    def keep_only(self, table: ChunkTable) -> None:
        """Forget chunks the table no longer holds."""
        self._held = {cid: held for cid, held in self._held.items() if table.row(cid) is not None}


def chunk_fingerprint(chunks: Iterable[Chunk]) -> str:
    """A digest of chunk ids and content hashes: equal fingerprints, equal index."""
    digest = hashlib.sha1()
    for chunk in sorted(chunks, key=lambda c: c.id):
        digest.update(f"{chunk.id}\0{chunk.hash}\0{','.join(chunk.access)}\n".encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Snapshot:
    """What queries are answered from: one chunk table and the BM25 indexes cut from it, swapped in whole.

    `content` is the generation whose texts and vectors the table holds,
    `access` the generation whose access it applies (the access part of a
    change is applied at once, the content follows from the background).
    """

    content: str
    access: str
    table: ChunkTable
    indexes: dict[frozenset[str], LexicalIndex]


class LexicalSearcher:
    """BM25 over a store, one cached index per reader group-set, rebuilt when the store changes.

    The searcher also holds the `ChunkTable` every index is cut from, and the
    table is what the hybrid retriever reads texts and vectors from. A query
    never waits for the next table: when the generation moves, the query
    applies only the access part of the change to the served snapshot
    (`refresh.apply_access`: the rows changed since, metadata only) and a
    background thread prepares the next table and its BM25 indexes, swapped
    in by one assignment. Only the very first load waits (nothing to serve),
    and so does a query after a change whose rows the store cannot list by
    stamp (`changes` is None: the chain is broken), which lists every row
    before it answers, as every change did before stamps.
    """

    def __init__(self, store: StoreReader, *, max_indexes: int = 16) -> None:
        self.store = store
        self.max_indexes = max_indexes
        self._snapshot: Snapshot | None = None
        self._lock = threading.Lock()  # the snapshot's index cache, and the background thread's state
        self._access = threading.Lock()  # held while the served snapshot is replaced
        self._building = threading.Lock()  # held while the next table is prepared
        self._wanted = False
        self._running: threading.Thread | None = None
        self.reread = 0  # rows the last table refresh read from the store (all of them on the first build)
        self.prepared = 0  # snapshots swapped in by the background
        self._terms = TermCache()

    def refresh(self) -> None:
        """Forget the snapshot; the next query reads the store whole."""
        with self._access, self._lock:
            self._snapshot = None

    def follow(self) -> None:
        """Apply the store's current access to the served table now, and prepare the rest in the background.

        What an in-process ingest calls at its access step, so a restriction
        is live before its embedding starts, whatever queries arrive.
        """
        self._current(self.store.generation())

    def settle(self, timeout: float = 60.0) -> bool:
        """Wait until the served snapshot holds the store's current generation whole; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.caught_up():
                return True
            time.sleep(0.01)
        return False

    def caught_up(self) -> bool:
        """True when the served snapshot holds the store's current generation whole and nothing is being prepared."""
        state = self.store.generation()
        snap = self._current(state)
        with self._lock:
            idle = self._running is None
        return idle and snap.content == snap.access == state

    def search(self, question: str, k: int, groups: Iterable[str]) -> list[tuple[Chunk, float]]:
        """The k best BM25 hits among the chunks `groups` may read."""
        table, index = self.view(groups)
        return served(table, index.search(question, k), frozenset(groups))

    def table(self, state: str | None = None) -> ChunkTable:
        """The chunk table served for the store's current generation."""
        return self._current(state if state is not None else self.store.generation()).table

    def view(self, groups: Iterable[str]) -> tuple[ChunkTable, LexicalIndex]:
        """The chunk table and the BM25 index of what `groups` may read, of one snapshot.

        The index may be a generation behind the table's access: filter its
        hits with `served`, as `search` does.
        """
        key = frozenset(groups)
        if not key:
            raise ValueError("a lexical search needs at least one reader group")
        snap = self._current(self.store.generation())
        index = snap.indexes.get(key)
        if index is None:  # a group-set this snapshot has not met: built now, from the served table
            index = LexicalIndex.build(snap.table.readable(key), terms=self._terms)
            with self._lock:
                snap.indexes[key] = index
                while len(snap.indexes) > self.max_indexes:
                    snap.indexes.pop(next(iter(snap.indexes)))
        return snap.table, index

    def index_for(self, groups: Iterable[str]) -> LexicalIndex:
        """The index of exactly the chunks `groups` may read, fresh against the store."""
        return self.view(groups)[1]

    def _current(self, state: str) -> Snapshot:
        """The snapshot to serve for generation `state`, its access applied; the content is prepared off this thread."""
        snap = self._snapshot
        if snap is None or snap.access != state:
            with self._access:
                snap = self._snapshot
                if snap is None:
                    table = ChunkTable.build(self.store.records())  # the first load: nothing to serve yet
                    self.reread = len(table)
                    snap = self._snapshot = Snapshot(state, state, table, {})
                elif snap.access != state:
                    snap = self._snapshot = self._with_access(snap)
        if snap.content != snap.access:
            self._wake()
        return snap

    def _with_access(self, snap: Snapshot) -> Snapshot:
        """`snap` with the access changed since its access generation applied (called holding `_access`)."""
        store = self.store
        changes = store.changes(snap.access)
        if changes is not None:
            return replace(snap, table=apply_access(snap.table, changes), access=changes.generation)
        state = store.generation()  # the chain is broken: list every row before answering
        table, self.reread = refresh_table(snap.table, store)
        self._terms.keep_only(table)
        return Snapshot(state, state, table, {})

    def _wake(self) -> None:
        with self._lock:
            self._wanted = True
            if self._running is None:
                self._running = threading.Thread(target=self._prepare_loop, name="table-refresh", daemon=True)
                self._running.start()

    def _prepare_loop(self) -> None:
        while True:
            with self._lock:
                if not self._wanted:
                    self._running = None
                    return
                self._wanted = False
            try:
                self._prepare()
            except Exception:  # the next query after a change wakes it again; until then the served snapshot stays
                log.exception("preparing the next chunk table failed")
                with self._lock:
                    self._running = None
                return

    def _prepare(self) -> None:
        """Build the next snapshot from the served one and the store's changes since, then swap it in."""
        with self._building:
            base = self._snapshot
            if base is None or base.content == base.access:
                return
            store = self.store
            changes = store.changes(base.content)
            if changes is not None and changes.complete:
                target = changes.generation
                table, reread = apply_changes(base.table, changes, store)
            else:
                target = store.generation()
                table, reread = refresh_table(base.table, store)
            self._terms.keep_only(table)
            indexes = {}
            for key, held in list(base.indexes.items()):
                chunks = table.readable(key)
                fingerprint = chunk_fingerprint(chunks)
                indexes[key] = held if held.fingerprint == fingerprint else LexicalIndex.build(chunks, fingerprint, self._terms)
            with self._access:
                current = self._snapshot
                if current is None or current.content != base.content:
                    return  # replaced meanwhile (a refresh, or a listing after a broken chain)
                access = target
                if current.access != target:  # access moved while this was prepared: apply it to the new table too
                    later = store.changes(target)
                    if later is None:
                        self._wake()
                        return
                    table, access = apply_access(table, later), later.generation
                self._snapshot = Snapshot(target, access, table, indexes)
                self.reread, self.prepared = reread, self.prepared + 1
            if access != target:
                self._wake()
