"""`python -m web [--ingest]` — serve the app with uvicorn on HOST:PORT (default 127.0.0.1:8000).

The server owns the index while it runs (`DATA_DIR/server.lock`) and is its
only writer: `python -m retrieval index` (`make ingest`) hands its run to the
server through `DATA_DIR/ingest.sock`, and the server applies it in-process
— access changes and deletions first, then embedding with the model it has
loaded — so visitors keep getting answers while authors publish.

With `--ingest`, the content folder is synced into the index first, in the
same process, so the embedding model is imported once for both (`make serve`).

With `--workers N` (`make serve WORKERS=N`), N uvicorn worker processes
serve requests; this process stays the index's only writer (the lock, the
hand-off listener, `--ingest`) and the workers only read. Each worker holds
its own model and chunk table, so several processes must share the index
through a Chroma server (`CHROMA_URL`): embedded Chroma is one process's. Each
worker's table follows the server's index pointer on every query, as a single
process's does, so an ingest applied here is served by every worker from its
next query on. Per-process state (recent answers held in memory) is per worker; threads and the answer log live in the shared database.

A damaged store is dealt with before serving: a damaged answer log
(`DATA_DIR/answers.sqlite3`) is moved aside to `answers.sqlite3.damaged-<time>`
and a fresh one started, logged as an error (its answers stay in the moved
file); a damaged or unreachable index stops the start with one message naming
the fix (exit 2), never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sqlite3
import sys
import threading
from types import FrameType

import uvicorn
from starlette.applications import Starlette

from answer.errors import LocalModelError
from answer.log.damage import set_aside_if_damaged
from answer.services import local_llm
from retrieval.errors import RetrievalError
from retrieval.handoff import IngestListener
from retrieval.heap import freeze_long_lived, share_the_interpreter
from retrieval.lock import owner_lock

from .app import create_app
from .failures import FIX_INTERNAL, fix_for
from .logs import configure as configure_logs
from .metrics import prepare_multiprocess
from .server import server_options
from .settings import Settings

log = logging.getLogger("web")


def worker_app() -> Starlette:
    """One worker's app (uvicorn calls this in each worker process): model loaded and table read before serving."""
    settings = Settings.from_env()
    configure_logs(settings.log_format)  # a worker process starts with no logging of its own
    app = create_app(settings)
    warm(app)
    return app


def warm(app: Starlette) -> None:
    """Load the model and read the table before the first visitor, then keep that heap out of the collector's scans.

    Everything alive once the process is warm lives as long as it serves (see
    `retrieval.heap`), and so does each table swapped in after a publish.
    """
    from answer.language import load as load_language_identifier
    from retrieval.viewer import Viewer

    try:
        components = app.state.services.components
        components.answerer.retriever.search("warm up", Viewer.anonymous())
        load_language_identifier()  # a refusal names the question's language without loading it on the event loop
    except Exception as exc:  # an unreachable store is reported per request; the process serves
        log.warning("warm-up failed: %s", exc)
        return  # nothing warm to freeze: collections stay as Python runs them
    if components.snapshot is not None:
        components.snapshot.on_swap = freeze_long_lived
    freeze_long_lived()
    share_the_interpreter()  # a publish's work in other threads must not hold a query up for 5 ms at a time


def _stop(signum: int, frame: FrameType | None) -> None:
    """SIGTERM before uvicorn serves (while models load or `--ingest` runs) unwinds like Ctrl-C: the blocks
    that started the local LLM child, the hand-off listener and the index lock close on the way out. Python's
    default would end the process on the spot, leaving the child running. Uvicorn has its own while it serves."""
    raise SystemExit(128 + signum)


def _drained(signum: int, frame: FrameType | None) -> None:
    """SIGTERM once uvicorn has served: uvicorn drains (no new connections, answers in flight finish within
    SHUTDOWN_TIMEOUT) and then replays the signal to the handler it found. By then the stop is done: exit cleanly."""


def _exit_within(seconds: float, code: int) -> None:
    """End the process `seconds` from now if it has not ended by itself.

    Past SHUTDOWN_TIMEOUT uvicorn cancels the answers still streaming, but an answer's worker thread blocked on a
    model's reply cannot be cancelled, and the interpreter joins every worker thread before it exits: the process
    would outlive its shutdown timeout by up to LLM_TIMEOUT. Those answers are abandoned instead (each record is
    one transaction: written whole or not at all)."""
    def end() -> None:
        log.warning("answers still running after the shutdown timeout were abandoned")
        logging.shutdown()
        os._exit(code)

    timer = threading.Timer(seconds, end)
    timer.daemon = True
    timer.start()


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _stop)
    parser = argparse.ArgumentParser(prog="python -m web", description=__doc__)
    parser.add_argument("--ingest", action="store_true", help="sync content into the index before serving")
    parser.add_argument("--workers", type=int, help="worker processes serving requests (more than one needs "
                        "CHROMA_URL); default: WORKERS, else 1")
    args = parser.parse_args(argv)
    workers = os.environ.get("WORKERS", "").strip()
    if args.workers is None and workers and not workers.isdigit():
        print(f"error: WORKERS must be a whole number, got {workers!r}", file=sys.stderr)
        return 2
    if args.workers is None:
        args.workers = int(workers or 1)
    try:
        settings = Settings.from_env()
    except ValueError as exc:  # a setting that cannot be read: its message names it and what it takes
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.ingest and not settings.content_dir.is_dir():  # said now, not after the model has loaded
        print(f"error: CONTENT_DIR={settings.content_dir} is not a folder: point CONTENT_DIR at the docs' content "
              "folder (the one holding the .mdx pages)", file=sys.stderr)
        return 2
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if args.workers > 1 and not settings.chroma_url:
        parser.error("--workers above 1 needs CHROMA_URL (a `chroma run` server): embedded Chroma is one process's")
    configure_logs(settings.log_format)
    try:
        with local_llm(settings) as served:  # LLM_MODEL=local: the llama.cpp child lives as long as this server
            if served is not settings:  # workers read the environment: they reach this child instead of starting their own
                os.environ.update(LLM_MODEL=served.llm_model, LLM_API_BASE=served.llm_api_base,
                                  LLM_API_KEY=served.llm_api_key, LLM_TIMEOUT=str(served.llm_timeout),
                                  LLM_PROMPT_TOKENS=str(served.llm_prompt_tokens), LLM_MAX_TOKENS=str(served.llm_max_tokens))
            return serve(served, args.ingest, args.workers)
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def serve(settings: Settings, ingest: bool, workers: int) -> int:
    """Own the index and serve it until stopped."""
    app = create_app(settings)
    services = app.state.services

    def waiting() -> None:
        log.info("waiting for the ingest or server that holds %s to finish", settings.data_dir / "server.lock")

    with owner_lock(settings.data_dir, on_wait=waiting):
        _set_aside_damaged_log(settings)  # only the owner may move it: no other server is writing to it
        listener = IngestListener(settings.data_dir, services.run_handed_off).start()
        try:
            try:
                embedder = services.components.embedder
                if ingest:
                    report = services.ingest()
                    log.info("ingest: %s", report.summary().replace("\n", " | "))
                chunks = services.store.count()
            except RetrievalError as exc:
                fix = fix_for(exc)  # an error whose own message says what to do gets no generic line after it
                log.error("cannot serve: %s%s", exc, "" if fix == FIX_INTERNAL else f"\nfix: {fix}")
                return 2
            log.info("index holds %d chunks; serving on http://%s:%d with %d worker(s); `make ingest` hands its runs "
                     "to this server (%s)", chunks, settings.host, settings.port, workers, listener.path)
            signal.signal(signal.SIGTERM, _drained)
            if workers > 1:
                # The cores are shared: each worker's model gets its share of threads instead of all of them.
                os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))
                prepare_multiprocess(settings.data_dir / "metrics")  # /metrics on any worker counts every worker's
                uvicorn.run("web.__main__:worker_app", factory=True, workers=workers, host=settings.host,
                            port=settings.port, log_level="info", log_config=None, **server_options(settings))
            else:
                if embedder is not None:
                    warm(app)
                uvicorn.run(app, host=settings.host, port=settings.port, log_level="info", log_config=None,
                            **server_options(settings))
        finally:
            listener.close()
    return 0


def _set_aside_damaged_log(settings: Settings) -> None:
    """A damaged answer log is moved aside (renamed, never deleted) so the server starts with a fresh one."""
    try:
        moved = set_aside_if_damaged(settings.audit_path)
    except (sqlite3.Error, OSError) as exc:  # e.g. locked by another process: serve, and let /healthz say so
        log.warning("could not check the answer log %s: %s", settings.audit_path, exc)
        return
    if moved is not None:
        target, problem = moved
        log.error("the answer log %s was damaged (%s): moved it to %s, kept as it was, and started a fresh log; "
                  "`sqlite3 %s .recover` salvages what it still holds", settings.audit_path, problem, target, target)


if __name__ == "__main__":
    status = main()
    _exit_within(5.0, status)
    sys.exit(status)
