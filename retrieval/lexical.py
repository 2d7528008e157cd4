"""Lexical search: BM25 (bm25s) over chunk text, title and heading path. bm25s is imported here and nowhere else.

Access control comes before scoring: one index is built per reader group-set
from only the chunks that set may read (the store's own ACL filter), so a
restricted chunk is never scored for, nor counted in the term statistics of,
a viewer who may not read it.

Freshness: each cached index remembers the store state it was built from.
A store with a generation (which every ingest changes at its access step and
at its commit) is held as one `ChunkTable` per generation (read whole once,
then refreshed by the ids that changed, see `retrieval.refresh`), and every
group-set's index is cut from that table with the same access rule as the
store's `where`; the generation is compared on every query, so a restriction
or a page made public again counts from the next query on. A store without
one is compared by chunk count on every query and by full fingerprint (every
chunk id and content hash) at most every `recheck_seconds`. `refresh()` drops
every cached index at once.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ingest.documents import Chunk
from ingest.text import tokenize

from .records import Record
from .refresh import can_diff, refresh_table
from .table import ChunkTable


def searchable_text(chunk: Chunk) -> str:
    """What BM25 reads for a chunk: page title, heading path, then the section text."""
    return "\n".join((chunk.title, *chunk.heading_path, chunk.text))


class ChunkSource(Protocol):
    """What the lexical index needs from a store: its size and its chunks filtered by reader groups."""

    def count(self) -> int: ...

    def chunks(self, groups: Iterable[str] | None = None, ids: Sequence[str] | None = None) -> list[Chunk]: ...


class TableSource(ChunkSource, Protocol):
    """A store that can hand over its whole index at once and say when it changed (see `ChunkTable`)."""

    def generation(self) -> str: ...

    def records(self) -> list[Record]: ...


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


class LexicalSearcher:
    """BM25 over a store, one cached index per reader group-set, rebuilt when the store changes.

    With a store that has a generation and hands over its records, the
    searcher also holds the `ChunkTable` every index is cut from (one read of
    the store per change, however many group-sets ask), and the table is
    what the hybrid retriever reads texts and vectors from.
    """

    def __init__(self, store: ChunkSource, *, recheck_seconds: float = 30.0, max_indexes: int = 16) -> None:
        self.store = store
        self.recheck_seconds = recheck_seconds
        self.max_indexes = max_indexes
        self._cache: OrderedDict[frozenset[str], tuple[str, float, LexicalIndex]] = OrderedDict()
        self._table: tuple[str, ChunkTable] | None = None
        self._lock = threading.Lock()
        self._building = threading.RLock()  # held while reading the store whole or building an index
        self.reread = 0  # rows the last table refresh read from the store (all of them on the first build)
        self._terms = TermCache()

    @property
    def follows_generation(self) -> bool:
        """True when the store says when it changed, so the cache is exactly as fresh as the store."""
        return callable(getattr(self.store, "generation", None)) and callable(getattr(self.store, "records", None))

    def refresh(self) -> None:
        """Forget every cached index; the next query rebuilds from the store."""
        with self._lock:
            self._cache.clear()
            self._table = None

    def search(self, question: str, k: int, groups: Iterable[str]) -> list[tuple[Chunk, float]]:
        """The k best BM25 hits among the chunks `groups` may read."""
        return self.index_for(groups).search(question, k)

    def table(self, state: str | None = None) -> ChunkTable:
        """The chunk table of the store's current generation (a store without one: use `index_for`).

        After a change, a store that lists its hashes is diffed against the
        held table (see `retrieval.refresh`); otherwise it is read whole.
        """
        store: Any = self.store
        state = state if state is not None else store.generation()
        with self._building:  # one read of the whole index per change, however many requests arrive meanwhile
            with self._lock:
                if self._table is not None and self._table[0] == state:
                    return self._table[1]
            with self._lock:
                held = self._table
            if held is not None and can_diff(store):
                table, self.reread = refresh_table(held[1], store)  # only what changed since the held generation
            else:
                table = ChunkTable.build(store.records())
                self.reread = len(table)
            self._terms.keep_only(table)
            with self._lock:
                self._table = (state, table)
            return table

    def view(self, groups: Iterable[str]) -> tuple[ChunkTable | None, LexicalIndex]:
        """The chunk table (None for a store without one) and the BM25 index of what `groups` may read, of one state."""
        key = frozenset(groups)
        if not key:
            raise ValueError("a lexical search needs at least one reader group")
        if not self.follows_generation:
            return None, self._index_by_count(key)
        state = self.store.generation()  # type: ignore[attr-defined]
        with self._lock:
            cached = self._cache.get(key)
            held = self._table
        if cached is not None and held is not None and cached[0] == state and held[0] == state:
            return held[1], cached[2]
        with self._building:  # concurrent requests after a change wait for one build instead of each making one
            table = self.table(state)
            with self._lock:
                cached = self._cache.get(key)
            if cached is not None and cached[0] == state:
                return table, cached[2]
            chunks = table.readable(key)
            fingerprint = chunk_fingerprint(chunks)
            reusable = cached is not None and cached[2].fingerprint == fingerprint
            index = cached[2] if cached is not None and reusable else LexicalIndex.build(chunks, fingerprint, self._terms)
            self._remember(key, state, index)
            return table, index

    def index_for(self, groups: Iterable[str]) -> LexicalIndex:
        """The index of exactly the chunks `groups` may read, fresh against the store."""
        return self.view(groups)[1]

    def _index_by_count(self, key: frozenset[str]) -> LexicalIndex:
        """For a store with no generation: compare the count on every query, the full fingerprint now and then."""
        count = self.store.count()
        state = f"{count}/"
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            built_state, checked_at, index = cached
            if built_state == state and now - checked_at < self.recheck_seconds:
                return index
        chunks = self.store.chunks(groups=sorted(key)) if count else []
        fingerprint = chunk_fingerprint(chunks)
        if cached is not None and cached[2].fingerprint == fingerprint:
            index = cached[2]
        else:
            index = LexicalIndex.build(chunks, fingerprint)
        self._remember(key, state, index)
        return index

    def _remember(self, key: frozenset[str], state: str, index: LexicalIndex) -> None:
        with self._lock:
            self._cache[key] = (state, time.monotonic(), index)
            self._cache.move_to_end(key)
            while len(self._cache) > self.max_indexes:
                self._cache.popitem(last=False)
