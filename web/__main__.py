"""`python -m web [--ingest]` — serve the app with uvicorn on HOST:PORT (default 127.0.0.1:8000).

The server owns the index while it runs (`DATA_DIR/server.lock`) and is its
only writer: `python -m ingest index` (`make ingest`) hands its run to the
server through `DATA_DIR/ingest.sock`, and the server applies it in-process
— access changes and deletions first, then embedding with the model it has
loaded — so visitors keep getting answers while authors publish.

With `--ingest`, the content folder is synced into the index first, in the
same process, so the embedding model is imported once for both (`make serve`).
"""

from __future__ import annotations

import argparse
import logging
import sys

import uvicorn

from retrieval.handoff import IngestListener
from retrieval.lock import owner_lock

from .app import create_app
from .settings import Settings

log = logging.getLogger("web")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m web", description=__doc__)
    parser.add_argument("--ingest", action="store_true", help="sync content into the index before serving")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_app(settings)
    services = app.state.services

    def waiting() -> None:
        log.info("waiting for the ingest or server that holds %s to finish", settings.data_dir / "server.lock")

    with owner_lock(settings.data_dir, on_wait=waiting):
        listener = IngestListener(settings.data_dir, services.run_handed_off).start()
        try:
            embedder = services.components.embedder
            if args.ingest:
                report = services.ingest()
                log.info("ingest: %s", report.summary().replace("\n", " | "))
            if embedder is not None:
                embedder.embed(["warm up"])  # load the model before the first visitor arrives
            log.info("index holds %d chunks; serving on http://%s:%d; `make ingest` hands its runs to this server (%s)",
                     services.store.count(), settings.host, settings.port, listener.path)
            uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
        finally:
            listener.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
