"""The web app's process-wide components, and the server's role as the index's only writer.

`Services` builds the answerer and store lazily (the model loads once), opens
the answer log and the thread secret kept with it, and runs ingests
in-process: at startup (`make serve`) and when `make ingest` hands its run
over (`retrieval.handoff`). What the docs viewer and search serve is
`docs` (`published.py`); an ingest publishes to it at its access step, so the
viewer and the chat change access at the same moment.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from answer.contract.result import Answer
from answer.followup import Rewrite, rewrite
from answer.log.protocol import AnswerLog
from answer.pipeline import Answerer
from answer.reports.gap_index import QuestionIndex
from answer.services import Components, components_for, open_audit
from answer.suggest import suggest
from ingest.corpus import Corpus, load_corpus
from ingest.errors import IngestError
from retrieval import heap
from retrieval.handoff import AccessApplied, Embedded, Emit, HandoffError, IngestRequest
from retrieval.indexer import IndexReport, KnownRows
from retrieval.protocols import StoreReader
from retrieval.snapshot import IndexSnapshot
from retrieval.store import ChromaStore
from retrieval.viewer import Viewer

from .published import PublishedDocs
from .settings import Settings
from .thread import Threads
from .thread_ids import ThreadSecretError, thread_secret

log = logging.getLogger(__name__)


class Services:
    """Lazily built, process-wide components; building the answerer loads the model once."""

    def __init__(self, settings: Settings, answerer: Answerer | None, store: StoreReader | None,
                 corpus: Corpus | None = None, *, index: ChromaStore | None = None,
                 observers: Sequence[Callable[[Answer], None]] = ()) -> None:
        self.settings = settings
        self._observers = tuple(observers)  # told of every finished answer (the metrics)
        # What answers are read from: a reader given (tests, a library caller), the index given, or Chroma opened here.
        self._store = store if store is not None else index
        self._chroma_store = index  # the index this server may also write: the one given, or the one it opens
        self.docs = PublishedDocs(settings.content_dir, store=lambda: self._store, served=self._served, corpus=corpus)
        self._known_rows = KnownRows()  # the index's rows as this server's last ingest left them (indexer.py)
        self._log: AnswerLog | None = None
        self._lock = threading.Lock()
        self._loader: threading.Thread | None = None
        self._components = self._wired(components_for(answerer)) if answerer is not None else None
        self.threads = Threads(lambda: self.audit, lambda: self.store, self._thread_secret)

    @property
    def components(self) -> Components:
        with self._lock:
            if self._components is None:
                from answer.services import build_components

                self._components = self._wired(
                    build_components(self.settings, store=self._chroma(), audit=self._answer_log()))
            return self._components

    def _wired(self, components: Components) -> Components:
        """Components as this server runs them: gap questions indexed as written, every answer observed."""
        components.answerer.observers.extend(o for o in self._observers if o not in components.answerer.observers)
        return self._indexed(components)

    def _indexed(self, components: Components) -> Components:
        """Components whose answer log stores each gap question's vector as it is written (`answer.reports.gap_index`).

        With the site's name as `/gaps` takes it out (the published corpus's), so the page finds those
        vectors; an answerer without an embedder leaves the log as it is, and `/gaps` embeds lazily.
        """
        if components.audit is not None and components.embedder is not None:
            components.audit.index_gaps(QuestionIndex(components.embedder, lambda: self.docs.corpus.site.name))
        return components

    @property
    def loaded(self) -> bool:
        """True once the answerer (and the models it holds) is built; reading this builds nothing."""
        return self._components is not None

    def load_in_background(self) -> None:
        """Build the answerer on a thread of its own, once at a time (readiness probes call this while it loads)."""
        with self._lock:
            if self._components is not None or (self._loader is not None and self._loader.is_alive()):
                return
            self._loader = threading.Thread(target=self._load, name="load-models", daemon=True)
            self._loader.start()

    def _load(self) -> None:
        try:
            _ = self.components  # built and kept by the property
        except Exception:  # the next probe tries again; until then /readyz says "loading" and requests say why
            log.exception("loading the models failed")

    @property
    def answerer(self) -> Answerer:
        return self.components.answerer

    @property
    def audit(self) -> AnswerLog | None:
        """The answer log; opening it does not build the answerer (the health check reads it before any question)."""
        if self._components is not None:
            return self._components.audit
        with self._lock:
            return self._answer_log() if self._components is None else self._components.audit

    def _answer_log(self) -> AnswerLog:
        """The one answer log of this process, the answerer's included (its damage is remembered once)."""
        if self._log is None:
            self._log = open_audit(self.settings)
        return self._log

    def _thread_secret(self) -> bytes:
        """What signs thread ids: THREAD_SECRET, else the one kept with the answer log (a file beside a SQLite log, a
        row of a PostgreSQL one); with no log, threads die with the process, and so does this."""
        if self.settings.thread_secret:
            return self.settings.thread_secret.encode("utf-8")
        audit = self.audit
        if audit is not None:
            try:
                return thread_secret("", audit.secrets())
            except ThreadSecretError as exc:  # the log's storage is unusable too: that costs lasting links, never the answer
                log.error("%s; thread links last only while this process runs", exc)
        return secrets.token_hex(32).encode("ascii")

    def rewrite(self, question: str, thread: str | None, viewer: Viewer, version: str | None = None) -> Rewrite:
        """The standalone question to search for, from the turns of the thread this viewer may see (a follow-up
        the offline rule reads two ways is searched both ways for this viewer, and the reading the docs answer is
        kept; an LLM condenser decides alone)."""
        history = self.threads.history(thread, viewer) if thread else []
        prefer = functools.partial(self.answerer.likelier, viewer=viewer, version=version)
        return rewrite(question, history, self.components.condenser, prefer)

    @property
    def store(self) -> StoreReader:
        return self._store if self._store is not None else self._chroma()

    def _chroma(self) -> ChromaStore:
        """The Chroma index this server answers from and ingests into (the one it was given, or opened on first use).

        Ingesting needs Chroma itself (its writer lease, its location), not only the reader seam, so a server
        is given the index it may write as `index`; one given only a reader (`store`) ingests from the CLI.
        """
        if self._chroma_store is None:
            if self._store is not None:
                raise TypeError("this server was given an index to read (store=), not one to write (index=): "
                                "it cannot ingest into it")
            from retrieval.services import open_chroma

            self._chroma_store = open_chroma(self.settings)
            self._store = self._chroma_store
        return self._chroma_store

    def ingest(self, *, full: bool = False, wait: bool = True, emit: Emit | None = None) -> IndexReport:
        """Sync the content folder into the index from this process, the index's only writer while it serves."""
        from retrieval.indexer import sync_index
        from retrieval.lock import index_lock

        embedder = self.components.embedder
        if embedder is None:
            raise IngestError("this server's answerer has no embedder of its own to ingest with; ingest from the CLI")
        store = self._chroma()

        def waiting(holder: str) -> None:
            log.info("waiting for the ingest of %s to finish writing the index at %s", holder, store.location)

        # Against a Chroma server the lease makes replicas started at once take turns: the first builds, the others
        # then find nothing to embed and follow its generation.
        with (index_lock(self.settings.data_dir, wait=wait, lease=store.writer_lease(), on_wait=waiting),
              heap.building()):  # the parse and the rows it keeps are long-lived: no full collection walks them
            corpus = load_corpus(self.settings.content_dir, previous=self.docs.last_read)  # only the changed pages

            def access_applied(report: IndexReport) -> None:
                self.docs.publish(corpus)
                if emit:
                    emit(AccessApplied(report))

            def progress(total: int) -> Callable[[int], None]:
                done = 0

                def tick(n: int) -> None:
                    nonlocal done
                    done += n
                    if emit:
                        emit(Embedded(done, total))
                return tick

            snapshot = self._served()
            with snapshot.publishing() if snapshot is not None else contextlib.nullcontext():
                report = sync_index(corpus, store, embedder, full=full, on_access=access_applied, progress=progress,
                                    known=self._known_rows)
                self.docs.publish(corpus)
            self._settle()
        return report

    def _served(self) -> IndexSnapshot | None:
        """The snapshot this server's searches read, once its components are built (None before, or for a fake)."""
        return self._components.snapshot if self._components is not None else None

    def _settle(self) -> None:
        """Let the ingest return once this server answers from the new content (the visitors never waited for it)."""
        snapshot = self._served()
        if snapshot is not None and not snapshot.settle(timeout=120.0):
            log.warning("the chunk table had not caught up with the index 120 s after the ingest")

    def run_handed_off(self, request: IngestRequest, emit: Emit) -> IndexReport:
        """An ingest a CLI handed over: only for the content folder and Chroma this server serves."""
        wanted = Path(request.content_dir).resolve() if request.content_dir else self.settings.content_dir.resolve()
        if wanted != self.settings.content_dir.resolve():
            raise HandoffError(f"the running server serves CONTENT_DIR={self.settings.content_dir}, not {wanted}; "
                               "ingest that folder, or stop the server first")
        if request.chroma_url != self.settings.chroma_url:
            raise HandoffError(f"the running server uses CHROMA_URL={self.settings.chroma_url or '(embedded)'}, "
                               f"not {request.chroma_url or '(embedded)'}")
        report = self.ingest(full=request.full, wait=request.wait, emit=emit)
        log.info("ingest (handed off): %s", report.summary().replace("\n", " | "))
        return report

    def next_questions(self, answer: Answer, viewer: Viewer) -> tuple[str, ...]:
        """Up to three follow-ups this reader's docs answer (answer/suggest.py), checked by searching for each."""
        if not answer.retrieval.hits:
            return ()
        return suggest(answer, self.answerer.retriever, viewer)
