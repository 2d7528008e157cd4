"""`python -m retrieval index|provision|search` — the index: build it from the content, set up its model, search it.

`index` is what `make ingest` runs (see `index_command`); `search` is the support staff's tool.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ingest.errors import IngestError

from . import index_command
from .errors import RetrievalError
from .settings import RetrievalSettings as Settings
from .viewer import Viewer


def cmd_provision(args: argparse.Namespace, settings: Settings) -> int:
    from .provision import is_default_model, provision_default_model

    if not is_default_model(settings.embed_model):
        print(f"EMBED_MODEL={settings.embed_model}: nothing to provision")
        return 0
    path = provision_default_model(settings.models_dir)
    print(f"model ready: {path} (sha256 verified)")
    return 0


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from .services import open_retriever

    viewer = Viewer.of(args.groups.split(",") if args.groups else ())
    rset = open_retriever(settings).search(args.question, viewer, k=args.k, version=args.version or None)
    rows: list[dict[str, Any]] = [{"handle": h.handle, "id": h.chunk.id, "url": h.chunk.url, "title": h.chunk.title,
             "heading_path": list(h.chunk.heading_path), "score": round(h.score, 4),
             "preview": h.chunk.text[:160]} for h in rset.hits]
    if args.json:
        print(json.dumps({"retrieval_id": rset.id, "question": rset.question, "hits": rows}, indent=2, ensure_ascii=False))
    else:
        for row in rows:
            print(f"{row['handle']:>4}  {row['id']}\n      {row['title']} › {' › '.join(row['heading_path'])}\n"
                  f"      {row['url']}\n      {row['preview'][:120].replace(chr(10), ' ')}")
        if not rows:
            print("no hits")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m retrieval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    index_command.add_arguments(sub.add_parser("index", help="embed what changed in the content folder into the index"))
    sub.add_parser("provision", help="unpack and verify the default embedding model")
    search = sub.add_parser("search", help="ranked hits for a question")
    search.add_argument("question")
    search.add_argument("--groups", default="", help="comma-separated reader groups (default: public only)")
    search.add_argument("--k", type=int, default=6)
    search.add_argument("--version", default="", help="docs version the reader is browsing (preferred, not filtered)")
    search.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        handler = {"index": index_command.cmd_index, "provision": cmd_provision, "search": cmd_search}[args.command]
        return handler(args, Settings.from_env())
    except (RetrievalError, IngestError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
