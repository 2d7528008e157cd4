"""`python -m web [--ingest]` — serve the app with uvicorn on HOST:PORT (default 127.0.0.1:8000).

With `--ingest`, the content folder is synced into the index first, in the
same process, so the embedding model is imported once for both (`make serve`).
"""

from __future__ import annotations

import argparse
import logging
import sys

import uvicorn

from ingest.settings import Settings

from .app import create_app

log = logging.getLogger("web")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m web", description=__doc__)
    parser.add_argument("--ingest", action="store_true", help="sync content into the index before serving")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_app(settings)
    services = app.state.services
    embedder = services.answerer.retriever.embedder
    if args.ingest:
        from ingest.corpus import load_corpus
        from retrieval.indexer import sync_index
        from retrieval.lock import index_lock

        with index_lock(settings.data_dir, wait=True):
            report = sync_index(load_corpus(settings.content_dir), services.store, embedder)
        log.info("ingest: %s", report.summary().replace("\n", " | "))
    embedder.embed(["warm up"])  # load the model before the first visitor arrives
    log.info("index holds %d chunks; serving on http://%s:%d", services.store.count(), settings.host, settings.port)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
    return 0


if __name__ == "__main__":
    sys.exit(main())
