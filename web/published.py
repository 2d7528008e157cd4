"""The docs as the index publishes them: what the docs viewer, docs search, llms.txt and the version list serve.

The viewer follows the index, not the disk, so it and the chat agree: an
edit on disk is published by an ingest, at the moment that ingest applies its
access changes (`publish`, for the runs this server makes). When another
process changes the index (a CLI against a Chroma server this server does not
own), the store's generation moves and the content is re-read within
`CORPUS_TTL`. Who may read a page is asked of the served table, as answers
ask it, never of this replica's own parse.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ingest.corpus import Corpus, load_corpus
from ingest.documents import PUBLIC, Chunk
from ingest.errors import IngestError
from ingest.ids import doc_id
from retrieval.errors import IndexDamagedError, IndexMismatchError, StoreUnavailableError
from retrieval.protocols import StoreReader
from retrieval.snapshot import IndexSnapshot
from retrieval.table import ChunkTable

log = logging.getLogger(__name__)
MAX_SUGGESTIONS = 4
_QUESTION = re.compile(r"^(how|what|which|when|where|why|can|do|does|is|are)\b.{6,60}\?$", re.IGNORECASE)
CORPUS_TTL = 1.0
INDEX_CHECK_SECONDS = 5.0  # how often answers and the viewer ask the index whether it is damaged (one count)


class PublishedDocs:
    """The published content of one server, and whether the index under it is damaged.

    `store` is the index in use (None until something opened it: the docs viewer alone never opens Chroma, nor
    creates an index folder); `served` is the snapshot this server's searches read (None before the answerer is
    built, or for a fake). An injected `corpus` (tests) is fixed; one read from `content_dir` follows the index.
    """

    def __init__(self, content_dir: Path, *, store: Callable[[], StoreReader | None],
                 served: Callable[[], IndexSnapshot | None], corpus: Corpus | None = None) -> None:
        self.content_dir = content_dir
        self._store = store
        self._served = served
        self._corpus = corpus
        self._reload = corpus is None
        self._generation_seen: str | None = None
        self._checked = 0.0
        self._chunks: list[Chunk] | None = None
        self._page_access: tuple[ChunkTable | None, dict[str, tuple[str, ...]]] = (None, {})
        self._index_checked = float("-inf")
        self._index_damage: IndexDamagedError | None = None
        self._lock = threading.Lock()

    @property
    def corpus(self) -> Corpus:
        """The content as last published, re-read within CORPUS_TTL of another process moving the index."""
        if self._reload:
            if self._corpus is None:
                self._generation_seen = self._generation()
                self._corpus = load_corpus(self.content_dir)
            elif time.monotonic() - self._checked >= CORPUS_TTL:
                self._checked = time.monotonic()
                generation = self._generation()
                if generation is not None and generation != self._generation_seen:
                    try:
                        corpus = load_corpus(self.content_dir, previous=self._corpus)
                    except IngestError as exc:  # e.g. a broken site.toml: keep serving what was published
                        log.error("content not re-read after an index change: %s", exc)
                    else:
                        self._corpus, self._chunks, self._generation_seen = corpus, None, generation
        assert self._corpus is not None
        return self._corpus

    @property
    def last_read(self) -> Corpus | None:
        """What was published last, without reading the disk: what an ingest parses only the changes against."""
        return self._corpus

    def publish(self, corpus: Corpus) -> None:
        """Serve `corpus` in the docs viewer and search from now on (an in-process ingest made it live)."""
        with self._lock:
            self._corpus, self._chunks = corpus, None
            self._generation_seen = self._generation()
            self._checked = time.monotonic()
        snapshot = self._served()
        if snapshot is not None:
            snapshot.follow()  # the access part now, in the ingest's thread; the rest in the background

    def check_index(self) -> None:
        """Raise IndexDamagedError while the index this server reads is damaged (a 503 with the fix, as documented).

        Answers and the docs viewer read a snapshot in memory, so they went on answering 200 from it after the
        files under it were damaged, while /readyz said 503. The index is asked at most every
        INDEX_CHECK_SECONDS (one count), and a damage found is reported until a check finds it repaired.
        """
        store = self._store()
        if store is None:
            return  # the docs viewer alone never opens Chroma (nor creates an index folder)
        now = time.monotonic()
        if now - self._index_checked >= INDEX_CHECK_SECONDS:
            self._index_checked = now
            try:
                store.count(groups=[PUBLIC])  # what /readyz asks: it reads the rows' access, not only a total
                self._index_damage = None
            except IndexDamagedError as exc:
                self._index_damage = exc
            except StoreUnavailableError:
                pass  # a server that is down is reported by the query that meets it, in its own words
        if self._index_damage is not None:
            raise self._index_damage

    @property
    def chunks(self) -> Sequence[Chunk]:
        """The sections the docs search runs over: as the shared index holds them, access included.

        Not this replica's own parse: after another replica publishes a restriction, the index has it at
        once, while this content folder may still say the page is public. Without an index of its own (a
        fake in tests) the parse stands in.
        """
        snapshot = self._served()
        if snapshot is not None:
            return snapshot.table().chunks  # the served table's own tuple: no copy per search
        corpus = self.corpus  # may reload, which drops the cached chunks
        if self._chunks is None:
            self._chunks = corpus.chunks()
        return self._chunks

    def page_access(self, slug: str) -> tuple[str, ...] | None:
        """Who may read the page at `slug` as the shared index says (None: the index holds no section of it).

        The viewer renders the local file but asks the index who may read it, as answers do: a page another
        replica restricted, deleted or withheld is not shown from this replica's stale copy. Every section of
        the page must be readable, so the strictest section's groups decide. Without an index of its own (a
        fake in tests) the parse stands in.
        """
        snapshot = self._served()
        if snapshot is None:
            page = self.corpus.page(slug)
            return page.access if page is not None else None
        table = snapshot.table()
        held, by_page = self._page_access
        if held is not table:  # one pass per served table, not per page view
            by_page = _access_by_page(table)
            self._page_access = (table, by_page)
        return by_page.get(doc_id(slug))

    def suggestions(self) -> list[str]:
        """Question-shaped headings of public pages: examples the docs can answer, taken from the docs."""
        found = [h.text.strip() for p in self.corpus.pages if PUBLIC in p.access for h in p.headings
                 if _QUESTION.match(h.text.strip()) and len(h.text.split()) >= 4]
        return found[:MAX_SUGGESTIONS]

    def _generation(self) -> str | None:
        store = self._store()  # only a store already in use: the viewer alone must not open Chroma
        if store is None:
            return None
        try:
            return store.generation()
        except (StoreUnavailableError, IndexMismatchError):
            return self._generation_seen  # keep serving what was published; answers report the outage


def _access_by_page(table: ChunkTable) -> dict[str, tuple[str, ...]]:
    """Each page's readers in one served table: the groups every one of its sections allows (kept per table)."""
    found: dict[str, set[str]] = {}
    for chunk in table.chunks:
        groups = found.get(chunk.doc_id)
        found[chunk.doc_id] = set(chunk.access) if groups is None else groups & set(chunk.access)
    return {page: tuple(sorted(groups)) for page, groups in found.items()}
