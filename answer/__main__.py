"""`python -m answer "question" [--groups …] [--json]`, `show ID`, `gaps [--since DATE] [--json|--csv]`, `provision`
and `log copy --from sqlite:///… --to postgresql://…`.

The same pipeline and verifier as the web app, for support staff and scripts;
`gaps` is the content-gap report of `GET /gaps`, for the docs team's files.
With `LLM_MODEL=local`, asking starts the local llama.cpp server for the
question and stops it after; `provision` joins and verifies its weights.
`log copy` moves a single server's SQLite answer log into the PostgreSQL
database replicas share (DATABASE_URL); run twice, it copies nothing twice.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from retrieval.errors import RetrievalError
from retrieval.viewer import Viewer

from .contract.record import AnswerRecord
from .errors import AnswerError
from .language import language_note, other_language
from .settings import AnswerSettings as Settings

_TOLD = {"answer": "Answer", "related": "Related passages", "refused": "Not in the docs"}


def _print_answer(record: AnswerRecord) -> None:
    print(f"[{record.state} · {_TOLD[record.outcome]}{' · degraded' if record.degraded else ''}] {record.question}")
    if record.outcome == "related":
        print("The docs don't say this directly; these passages are the closest.")
    for n, claim in enumerate(record.claims, start=1):
        handles = " ".join(f"[{c.handle}]" for c in claim.citations)
        print(f"\n{n}. {claim.text} {handles} ({claim.status}{', stitched' if claim.stitched else ''})")
        for c in claim.citations:
            where = [c.title, *(h for h in c.heading_path if h != c.title)]  # a page's H1 is its title again
            print(f"   “{c.quote}”\n   — {' › '.join(where)}  {c.page_url}")
    if record.state == "refused":
        language = other_language(record.question)
        print(f"\n{language_note(language)}" if language else "\nThe docs do not cover this.")
    print("\nlooked at: " + "; ".join(f"{r.handle} {r.id}" for r in record.retrieved))
    print(f"answer id: {record.answer_id}")


def cmd_ask(args: argparse.Namespace, settings: Settings, store: Any = None) -> int:
    from .services import build_answerer, local_llm

    with local_llm(settings) as served:
        answerer = build_answerer(served, store=store)
        answer = answerer.ask(args.question, Viewer.of(args.groups.split(",") if args.groups else ()))
    if args.json:
        print(json.dumps(answer.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_answer(answer.record())
    return 0


def cmd_show(args: argparse.Namespace, settings: Settings, store: Any = None) -> int:
    from retrieval.services import open_store

    from .contract.record import to_json
    from .services import changed_sources, open_audit

    audit = open_audit(settings)
    record = audit.get(args.answer_id)
    if record is None:
        print(f"error: no answer with id {args.answer_id!r} in {audit.where}", file=sys.stderr)
        return 1
    data = to_json(record, full=True) | {"changed_since": changed_sources(store or open_store(settings), record)}
    typed = audit.asked(record.answer_id)
    if typed is not None and typed != record.question:  # a follow-up: the record holds its rewrite
        data["asked"] = typed
    print(json.dumps(data, indent=2, ensure_ascii=False))
    return 0


def cmd_gaps(args: argparse.Namespace, settings: Settings, store: Any = None) -> int:
    import time

    from ingest.site import load_site_config
    from retrieval.services import open_embedder, open_store

    from .reports.gap_export import report_csv, report_json, report_text
    from .reports.gaps import gap_report, parse_since
    from .services import open_audit

    since = parse_since(args.since, time.time(), args.days)
    site = load_site_config(settings.content_dir).name if settings.content_dir.is_dir() else ""
    groups = Viewer.of(args.groups.split(",") if args.groups else ()).groups
    report = gap_report(open_audit(settings), store or open_store(settings), open_embedder(settings), groups,
                        since=since, site_name=site)
    if args.json:
        print(json.dumps(report_json(report), indent=2, ensure_ascii=False))
    elif args.csv:
        sys.stdout.write(report_csv(report))
    else:
        print(report_text(report))
    return 0


def cmd_provision(args: argparse.Namespace, settings: Settings, store: Any = None) -> int:
    from .llm.local_weights import local_model, provision_local_model

    if settings.llm_model != "local":
        print(f"LLM_MODEL={settings.llm_model or '(unset)'}: no local model to provision")
        return 0
    model = local_model(settings.local_llm)
    path = provision_local_model(settings.models_dir, model)
    print(f"local model ready: {path} ({model.size:,} bytes, sha256 verified; licence {model.licence})")
    return 0


def cmd_log_copy(args: argparse.Namespace, settings: Settings, store: Any = None) -> int:
    from .log.postgres import PostgresAnswerLog
    from .log.transfer import copy_log, sqlite_path
    from .settings import database_url

    source = sqlite_path(args.source)
    if not database_url(args.target):
        raise ValueError("--to must be the PostgreSQL URL the replicas use as DATABASE_URL")
    target = PostgresAnswerLog(args.target)
    try:
        report = copy_log(source, target)
    finally:
        target.close()
    print(f"copied {source} into {target.where}\n{report.summary()}")
    return 0


def main(argv: list[str] | None = None, *, settings: Settings | None = None, store: Any = None) -> int:
    """The CLI; tests pass their own settings and index instead of the environment's."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m answer", description=__doc__)
    if argv[:1] == ["show"]:
        parser.add_argument("command")
        parser.add_argument("answer_id")
        args = parser.parse_args(argv)
        handler = cmd_show
    elif argv[:1] == ["gaps"]:
        parser.add_argument("command")
        parser.add_argument("--since", default="", help="start of the period: a date (2025-06-01) or ISO time (default: --days ago)")
        parser.add_argument("--days", type=float, default=30.0, help="the period when --since is not given (default 30)")
        parser.add_argument("--groups", default="", help="comma-separated reader groups: only answers they may read in full count")
        formats = parser.add_mutually_exclusive_group()
        formats.add_argument("--json", action="store_true")
        formats.add_argument("--csv", action="store_true")
        args = parser.parse_args(argv)
        handler = cmd_gaps
    elif argv[:2] == ["log", "copy"]:
        parser.add_argument("command", choices=["log"])
        parser.add_argument("action", choices=["copy"])
        parser.add_argument("--from", dest="source", required=True,
                            help="the SQLite answer log, as sqlite:///absolute/path/answers.sqlite3")
        parser.add_argument("--to", dest="target", required=True, help="the PostgreSQL database, as DATABASE_URL gives it")
        args = parser.parse_args(argv)
        handler = cmd_log_copy
    elif argv == ["provision"]:
        args = parser.parse_args([])
        handler = cmd_provision
    else:
        parser.add_argument("question")
        parser.add_argument("--groups", default="", help="comma-separated reader groups (default: public only)")
        parser.add_argument("--json", action="store_true")
        args = parser.parse_args(argv)
        handler = cmd_ask
    try:
        return handler(args, settings or Settings.from_env(), store)
    except (AnswerError, RetrievalError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
