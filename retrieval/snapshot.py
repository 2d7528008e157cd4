"""The index snapshot both searches read: the generation's chunk table and the BM25 indexes cut from it.

Dense search (the table's masked numpy product) and lexical search (BM25 per
reader group-set) answer from one `Served` snapshot, swapped in whole, so a
query never mixes two generations' texts or access.

Freshness: the store's generation (which every ingest changes at its access
step and at its commit) is held as one `Served` snapshot: a `ChunkTable` (read whole once,
then refreshed by the rows stamped since, see `retrieval.refresh`) and every
group-set's index cut from it with the same access rule as the store's
`where`. The generation is compared on every query; when it moved, the
query applies the access part of the change to the served table before it
answers (a restriction or a page made public again counts from the next
query on) and the next snapshot is prepared in the background. Until it is
swapped in, BM25 hits are re-checked against the served table (`served`), so
a restricted chunk is never returned; its terms may still count in the old
index's statistics for that window: seconds after a change from another
process, and until the commit of an ingest run in this process (`publishing`),
which prepares one next table for its commit rather than one for its access
step too. `refresh()` drops the snapshot at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ingest.documents import Chunk

from . import heap
from .lexical import LexicalIndex, TermCache, chunk_fingerprint, served
from .protocols import StoreReader
from .refresh import apply_access, apply_changes, refresh_table
from .table import ChunkTable

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Served:
    """What queries are answered from: one chunk table and the BM25 indexes cut from it, swapped in whole.

    `content` is the generation whose texts and vectors the table holds,
    `access` the generation whose access it applies (the access part of a
    change is applied at once, the content follows from the background).
    """

    content: str
    access: str
    table: ChunkTable
    indexes: dict[frozenset[str], LexicalIndex]


class IndexSnapshot:
    """What both searches read of a store: its generation's `ChunkTable` and one BM25 index per reader group-set.

    The hybrid retriever takes texts, vectors and the dense top-k from the
    table and BM25 hits from the index of the viewer's group-set, both of one
    snapshot (`view`), so the two lists always describe the same index. A query
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
        self._snapshot: Served | None = None
        self._lock = threading.Lock()  # the snapshot's index cache, and the background thread's state
        self._access = threading.Lock()  # held while the served snapshot is replaced
        self._building = threading.Lock()  # held while the next table is prepared
        self._wanted = False
        self._running: threading.Thread | None = None
        self._held = 0  # in-process ingests between their start and their commit (`publishing`)
        self.reread = 0  # rows the last table refresh read from the store (all of them on the first build)
        self.prepared = 0  # snapshots swapped in by the background
        self._terms = TermCache()
        self.on_swap: Callable[[], None] | None = None  # called after a new table is served (`heap.freeze_long_lived`)

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

    @contextmanager
    def publishing(self) -> Iterator[None]:
        """While an ingest of this process runs, the next table waits for its commit; access changes do not wait.

        An ingest moves the generation twice: at its access step, which `follow` applies to the served table at
        once, and at its commit. A table prepared for the first (texts, vectors, every BM25 index) is thrown
        away seconds later, and it is built while the ingest embeds on the same cores: at 100k chunks, a second
        rebuild of every BM25 index beside the model. Queries meanwhile apply each access change they see, as
        always, so a restriction is served from the access step on (its text is never returned: BM25 hits are
        re-checked against the served table); the content, and the BM25 statistics without it, come after the commit.
        """
        with self._lock:
            self._held += 1
        try:
            yield
        finally:
            with self._lock:
                self._held -= 1
                due = self._held == 0 and self._wanted
            if due:
                self._wake()

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

    def _current(self, state: str) -> Served:
        """The snapshot to serve for generation `state`, its access applied; the content is prepared off this thread."""
        snap = self._snapshot
        if snap is None or snap.access != state:
            with self._access:
                snap = self._snapshot
                if snap is None:
                    table = ChunkTable.build(self.store.records())  # the first load: nothing to serve yet
                    self.reread = len(table)
                    snap = self._snapshot = Served(state, state, table, {})
                elif snap.access != state:
                    snap = self._snapshot = self._with_access(snap)
        if snap.content != snap.access:
            self._wake()
        return snap

    def _with_access(self, snap: Served) -> Served:
        """`snap` with the access changed since its access generation applied (called holding `_access`)."""
        store = self.store
        changes = store.changes(snap.access)
        if changes is not None:
            return replace(snap, table=apply_access(snap.table, changes), access=changes.generation)
        state = store.generation()  # the chain is broken: list every row before answering
        table, self.reread = refresh_table(snap.table, store)
        self._terms.keep_only(table)
        return Served(state, state, table, {})

    def _wake(self) -> None:
        with self._lock:
            self._wanted = True
            if self._running is None and not self._held:
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
        with self._building, heap.building():
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
                self._snapshot = Served(target, access, table, indexes)
                self.reread, self.prepared = reread, self.prepared + 1
            if self.on_swap is not None:
                self.on_swap()
            if access != target:
                self._wake()
