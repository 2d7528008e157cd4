"""`python -m retrieval index` — sync the authors' content folder into the index (what `make ingest` runs).

Exit codes: 0 all good, 1 some pages failed (everything else was indexed), 2 bad usage or configuration.

When a server of this DATA_DIR is running it owns the index, and the run is
handed to it (`handoff`); otherwise this process writes. Against a Chroma
server (`CHROMA_URL`) the run can come from anywhere, a docs team's CI job
say: every writer, on any machine, takes the server's writer lease first, and
every replica follows the index pointer to the new generation by itself.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from ingest.corpus import load_corpus
from ingest.errors import IngestError
from ingest.report import print_failures, print_warnings

from .errors import IndexDamagedError, StoreUnavailableError
from .handoff import AccessApplied, Done, Embedded, Failed, HandoffError, IngestRequest, Started, hand_off
from .indexer import IndexReport
from .settings import RetrievalSettings
from .store import ChromaStore


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The index command's arguments (the same `make ingest` passes)."""
    parser.add_argument("content_dir", nargs="?")
    parser.add_argument("--full", action="store_true", help="rebuild into a fresh collection, switch when complete")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--wait", action="store_true", help="wait for a running ingest instead of exiting")


def cmd_index(args: argparse.Namespace, settings: RetrievalSettings) -> int:
    """Sync the content folder into the index: here, or through the server of this DATA_DIR that owns it."""
    from .indexer import sync_index
    from .lock import index_lock, owner_lock
    from .provision import is_default_model, provision_default_model
    from .services import open_chroma, open_embedder

    content_dir = Path(args.content_dir or settings.content_dir)
    with owner_lock(settings.data_dir, wait=False) as owned:
        if not owned:  # a server is running: it is the index's only writer, so it does the run
            return _hand_off(args, settings, content_dir)
        if is_default_model(settings.embed_model):
            provision_default_model(settings.models_dir)
        store = open_chroma(settings)
        try:
            lease = store.writer_lease()  # writers on other machines of a Chroma server take turns with this one
        except StoreUnavailableError:
            lease = None  # the first read below reports the outage in its own words
        with index_lock(settings.data_dir, wait=args.wait, lease=lease, on_wait=_say_waiting):
            try:
                store.manifest()  # reach Chroma before parsing or loading a model: a down server fails fast
            except IndexDamagedError as exc:
                _set_aside(store, exc, full=args.full)
            corpus = load_corpus(content_dir, progress=_progress_bar("parsing", "page"))
            print_warnings(corpus)  # before the slow part, so an author can start fixing
            embedder = open_embedder(settings)

            def sync() -> IndexReport:
                return sync_index(corpus, store, embedder, full=args.full, progress=_progress_bar(),
                                  on_access=_say_access_applied)

            try:
                try:
                    report = sync()
                except IndexDamagedError as exc:  # damage the first read did not reach
                    _set_aside(store, exc, full=args.full)
                    report = sync()
            except KeyboardInterrupt:
                print("interrupted: what was written is kept; the next `make ingest` finishes the job", file=sys.stderr)
                return 130
    print(json.dumps(report.as_dict(), indent=2) if args.json else report.summary())
    if args.json:
        print_failures(corpus.failures)
    return 1 if report.pages_failed else 0


def _set_aside(store: ChromaStore, exc: IndexDamagedError, *, full: bool) -> None:
    """For a full rebuild of an embedded index, move its damaged folder aside (never deleted) and start a fresh one."""
    if not full or not store.embedded:
        raise exc
    moved = store.set_aside()
    print(f"warning: {exc}\nmoved the damaged index to {moved} (kept, not deleted); rebuilding it from the content",
          file=sys.stderr, flush=True)


def _say_waiting(holder: str) -> None:
    print(f"waiting for the ingest of {holder} to finish writing this index", file=sys.stderr, flush=True)


def _say_access_applied(report: IndexReport) -> None:
    """One line on stderr the moment deletions and access changes are live (before any embedding)."""
    print(f"access step live after {report.access_seconds:.2f}s: {report.chunks_deleted} deleted, "
          f"{report.chunks_updated} updated, {report.chunks_tightened} access-tightened", file=sys.stderr, flush=True)


def _hand_off(args: argparse.Namespace, settings: RetrievalSettings, content_dir: Path) -> int:
    """Send the run to the server that owns the index and report it exactly as a local run would."""
    request = IngestRequest(full=args.full, wait=args.wait, content_dir=str(content_dir.resolve()),
                            chroma_url=settings.chroma_url)
    tick, shown = None, 0
    try:
        for event in hand_off(settings.data_dir, request):
            if isinstance(event, Started):
                print(f"a server is serving this index: ingest handed to it (pid {event.pid})", file=sys.stderr, flush=True)
            elif isinstance(event, AccessApplied):
                _say_access_applied(event.report)
            elif isinstance(event, Embedded):
                start = _progress_bar() if tick is None else None
                if start is not None:
                    tick = start(event.total)
                if tick is not None:
                    tick(event.embedded - shown)
                    shown = event.embedded
            elif isinstance(event, Failed):
                print(f"error: {event.message}", file=sys.stderr)
                return 2
            elif isinstance(event, Done):
                report = event.report
                # The server's run does not carry warnings back: read them here. What stops a run,
                # the server already reported.
                with contextlib.suppress(IngestError, OSError):
                    print_warnings(load_corpus(content_dir))
                print(json.dumps(report.as_dict(), indent=2) if args.json else report.summary())
                if args.json:
                    for failure in report.failures:
                        print(f"error: {failure}", file=sys.stderr)
                return 1 if report.pages_failed else 0
    except HandoffError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: the server carries on with the ingest (see its log)", file=sys.stderr)
        return 130
    return 2


def _progress_bar(desc: str = "embedding", unit: str = "chunk"):  # type: ignore[no-untyped-def]
    """A tqdm bar on a terminal for runs worth watching; nothing when output is piped or logged."""
    if not sys.stderr.isatty():
        return None

    def start(total: int):  # type: ignore[no-untyped-def]
        from tqdm import tqdm

        bar = tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, leave=desc == "embedding",
                   disable=desc != "embedding" and total < 200)
        return bar.update

    return start
