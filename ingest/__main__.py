"""`python -m ingest slug|headings|outline|links|check-built|index` — the authors' command line.

Exit codes: 0 all good, 1 some files failed (everything else was processed)
or, for `links`/`check-built`, some links or chunk anchors do not land, 2 bad usage or configuration.
`headings` and `outline` also print warnings (unclosed fences, broken links)
to stderr; warnings do not change their exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from retrieval.settings import RetrievalSettings

from .built import check_built
from .corpus import Corpus, load_corpus
from .errors import IngestError, PageError
from .site import load_site_config
from .slugger import make_slugger
from .splitter import split_page

if TYPE_CHECKING:
    from retrieval.errors import IndexDamagedError
    from retrieval.indexer import IndexReport
    from retrieval.protocols import Store


def _print_failures(corpus_failures: tuple[PageError, ...]) -> None:
    for failure in corpus_failures:
        print(f"error: {failure}", file=sys.stderr)


def _print_warnings(corpus: Corpus) -> None:
    """What `outline` warns about (unclosed fences and brackets, broken links, unmatched built headings), on stderr."""
    warnings = corpus.warnings
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if warnings:
        print(f"{len(warnings)} warning(s): the pages were still indexed", file=sys.stderr, flush=True)


def _print_problems(corpus: Corpus) -> None:
    for warning in corpus.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    _print_failures(corpus.failures)


def cmd_slug(args: argparse.Namespace, settings: RetrievalSettings) -> int:
    site = load_site_config(Path(args.content_dir or settings.content_dir))
    slugger = make_slugger(args.slugger or site.slugger_name)
    # Split on "\n" only: str.splitlines() also splits on U+2028/U+2029, U+0085, \v, \f and
    # U+001C-U+001E, which a heading may contain, and would shift every later duplicate number.
    # Bytes in and out, so no newline translation or locale encoding gets in between; a trailing
    # "\r" is a control character the slugger strips, and invalid UTF-8 reads as U+FFFD as in Node.
    data = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line does not start another
    rules = site.rules  # e.g. Docusaurus trims the heading text first
    sys.stdout.buffer.write("".join(rules.heading_id(slugger, line) + "\n" for line in lines).encode("utf-8"))
    sys.stdout.flush()
    return 0


def cmd_headings(args: argparse.Namespace, settings: RetrievalSettings) -> int:
    corpus = load_corpus(Path(args.content_dir or settings.content_dir))
    for page in corpus.pages:
        for heading in page.headings:
            url = f"{page.url}#{heading.anchor}" if heading.anchor else page.url
            written_in, line = page.locate(heading.line - 1)  # a partial's heading: its own file and line
            record = {"source": written_in, "line": line + 1, "page": page.source, "level": heading.level,
                      "text": heading.text, "anchor": heading.anchor, "url": url}
            print(json.dumps(record, ensure_ascii=False))
    _print_problems(corpus)
    return 1 if corpus.failures else 0


def cmd_outline(args: argparse.Namespace, settings: RetrievalSettings) -> int:
    corpus = load_corpus(Path(args.content_dir or settings.content_dir))
    duplicates = corpus.duplicates
    for page in corpus.pages:
        for chunk in split_page(page):
            record = {
                "id": chunk.id, "doc_id": chunk.doc_id, "anchor": chunk.anchor, "url": chunk.url,
                "title": chunk.title, "heading_path": list(chunk.heading_path), "source": chunk.source,
                "lines": [chunk.span.line_start, chunk.span.line_end], "span": [chunk.span.start, chunk.span.end],
                "doc_version": chunk.doc_version, "hash": chunk.hash, "access": list(chunk.access), "text": chunk.text,
            }
            if chunk.id in duplicates:
                record["duplicate_of"] = duplicates[chunk.id]  # not indexed: cited through its canonical chunk
            print(json.dumps(record, ensure_ascii=False))
    _print_problems(corpus)
    return 1 if corpus.failures else 0


def cmd_links(args: argparse.Namespace, settings: RetrievalSettings) -> int:
    corpus = load_corpus(Path(args.content_dir or settings.content_dir))
    for link in corpus.broken_links:
        print(link)
    _print_failures(corpus.failures)
    return 1 if corpus.broken_links or corpus.failures else 0


def cmd_check_built(args: argparse.Namespace, settings: RetrievalSettings) -> int:
    """Every chunk whose deep link would not land on the built site, as file:line (exit 1 if any)."""
    built_dir = Path(args.built_dir)
    if not built_dir.is_dir():
        raise FileNotFoundError(f"built site folder not found: {built_dir}")
    corpus = load_corpus(Path(args.content_dir or settings.content_dir))
    chunks = corpus.chunks()
    problems = check_built(chunks, corpus.pages, built_dir, corpus.site)
    for problem in problems:
        print(problem)
    _print_failures(corpus.failures)
    print(f"{len(chunks) - len(problems)} of {len(chunks)} chunks land on an id of the built site; "
          f"{len(problems)} do not", file=sys.stderr)
    return 1 if problems or corpus.failures else 0


def cmd_index(args: argparse.Namespace, settings: RetrievalSettings) -> int:
    # The entrypoint is the composition root: it may wire retrieval's store and
    # embedder into an ingest run; library modules in ingest never import retrieval.
    from retrieval.errors import IndexDamagedError
    from retrieval.indexer import sync_index
    from retrieval.lock import index_lock, owner_lock
    from retrieval.models import is_default_model, provision_default_model
    from retrieval.services import open_embedder, open_store

    content_dir = Path(args.content_dir or settings.content_dir)
    with owner_lock(settings.data_dir, wait=False) as owned:
        if not owned:  # a server is running: it is the index's only writer, so it does the run
            return _hand_off(args, settings, content_dir)
        if is_default_model(settings.embed_model):
            provision_default_model(settings.models_dir)
        with index_lock(settings.data_dir, wait=args.wait):
            store = open_store(settings)
            try:
                store.manifest()  # reach Chroma before parsing or loading a model: a down server fails fast
            except IndexDamagedError as exc:
                _set_aside(store, exc, full=args.full)
            corpus = load_corpus(content_dir, progress=_progress_bar("parsing", "page"))
            _print_warnings(corpus)  # before the slow part, so an author can start fixing
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
        _print_failures(corpus.failures)
    return 1 if report.pages_failed else 0


def _set_aside(store: Store, exc: IndexDamagedError, *, full: bool) -> None:
    """For a full rebuild of an embedded index, move its damaged folder aside (never deleted) and start a fresh one."""
    from retrieval.store import ChromaStore

    if not full or not isinstance(store, ChromaStore) or not store.embedded:
        raise exc
    moved = store.set_aside()
    print(f"warning: {exc}\nmoved the damaged index to {moved} (kept, not deleted); rebuilding it from the content",
          file=sys.stderr, flush=True)


def _say_access_applied(report: IndexReport) -> None:
    """One line on stderr the moment deletions and access changes are live (before any embedding)."""
    print(f"access step live after {report.access_seconds:.2f}s: {report.chunks_deleted} deleted, "
          f"{report.chunks_updated} updated, {report.chunks_tightened} access-tightened", file=sys.stderr, flush=True)


def _hand_off(args: argparse.Namespace, settings: RetrievalSettings, content_dir: Path) -> int:
    """Send the run to the server that owns the index and report it exactly as a local run would."""
    from retrieval.handoff import AccessApplied, Done, Embedded, Failed, HandoffError, IngestRequest, Started, hand_off

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
                    _print_warnings(load_corpus(content_dir))
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    slug = sub.add_parser("slug", help="anchors for heading texts read from stdin, one slugger for all")
    slug.add_argument("content_dir", nargs="?", help="content folder whose site.toml picks the slugger")
    slug.add_argument("--slugger", help="override the site's slugger rule")
    for name, help_text in (("headings", "JSON Lines: every heading with its anchor and URL"),
                            ("outline", "JSON Lines: every chunk, no embedding"),
                            ("links", "internal links that land on no page or anchor, as file:line (exit 1 if any)")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("content_dir", nargs="?")
    built = sub.add_parser("check-built", help="chunks whose page or heading id is missing from the built site "
                                               "(DIR/a/b/index.html or DIR/a/b.html), as file:line (exit 1 if any)")
    built.add_argument("built_dir", help="the site build's output folder")
    built.add_argument("content_dir", nargs="?")
    index = sub.add_parser("index", help="embed what changed into the index")
    index.add_argument("content_dir", nargs="?")
    index.add_argument("--full", action="store_true", help="rebuild into a fresh collection, switch when complete")
    index.add_argument("--json", action="store_true", help="print the summary as JSON")
    index.add_argument("--wait", action="store_true", help="wait for a running ingest instead of exiting")
    args = parser.parse_args(argv)
    try:
        settings = RetrievalSettings.from_env()
        handler = {"slug": cmd_slug, "headings": cmd_headings, "outline": cmd_outline, "links": cmd_links,
                   "check-built": cmd_check_built, "index": cmd_index}[args.command]
        return handler(args, settings)
    except (IngestError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from retrieval.errors import RetrievalError

        if isinstance(exc, RetrievalError):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
