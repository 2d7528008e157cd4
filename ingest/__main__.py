"""`python -m ingest slug|headings|outline|links|check-built` — the authors' command line for their pages.

Building the index from them is the index's own command, `python -m retrieval index` (what `make ingest` runs).

Exit codes: 0 all good, 1 some files failed (everything else was processed)
or, for `links`/`check-built`, some links or chunk anchors do not land, 2 bad usage or configuration.
`headings` and `outline` also print warnings (unclosed fences, broken links)
to stderr; warnings do not change their exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from .built import check_built
from .corpus import Corpus, load_corpus
from .errors import IngestError
from .presets import PRESETS
from .report import print_failures, print_warnings
from .settings import IngestSettings
from .site import load_site_config
from .slugger import DEFAULT_SLUGGER, make_slugger
from .splitter import split_page


def _print_problems(corpus: Corpus) -> None:
    print_warnings(corpus, indexed=False)
    print_failures(corpus.failures)


def cmd_slug(args: argparse.Namespace, settings: IngestSettings) -> int:
    site = load_site_config(Path(args.content_dir or settings.content_dir))
    if args.preset:  # the generator's rules as its preset gives them: its slugger and how it reads heading text
        site = replace(site, preset=args.preset, slugger=PRESETS[args.preset].slugger or DEFAULT_SLUGGER)
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


def cmd_headings(args: argparse.Namespace, settings: IngestSettings) -> int:
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


def cmd_outline(args: argparse.Namespace, settings: IngestSettings) -> int:
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


def cmd_links(args: argparse.Namespace, settings: IngestSettings) -> int:
    corpus = load_corpus(Path(args.content_dir or settings.content_dir))
    for link in corpus.broken_links:
        print(link)
    print_failures(corpus.failures)
    return 1 if corpus.broken_links or corpus.failures else 0


def cmd_check_built(args: argparse.Namespace, settings: IngestSettings) -> int:
    """Every chunk whose deep link would not land on the built site, as file:line (exit 1 if any)."""
    built_dir = Path(args.built_dir)
    if not built_dir.is_dir():
        raise FileNotFoundError(f"built site folder not found: {built_dir}")
    corpus = load_corpus(Path(args.content_dir or settings.content_dir))
    chunks = corpus.chunks()
    problems = check_built(chunks, corpus.pages, built_dir, corpus.site)
    for problem in problems:
        print(problem)
    print_failures(corpus.failures)
    print(f"{len(chunks) - len(problems)} of {len(chunks)} chunks land on an id of the built site; "
          f"{len(problems)} do not", file=sys.stderr)
    return 1 if problems or corpus.failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    slug = sub.add_parser("slug", help="anchors for heading texts read from stdin, one slugger for all")
    slug.add_argument("content_dir", nargs="?", help="content folder whose site.toml picks the slugger")
    slug.add_argument("--slugger", help="override the site's slugger rule")
    slug.add_argument("--preset", choices=sorted(PRESETS), help="the ids a site generator gives (its slugger and rules)")
    for name, help_text in (("headings", "JSON Lines: every heading with its anchor and URL"),
                            ("outline", "JSON Lines: every chunk, no embedding"),
                            ("links", "internal links that land on no page or anchor, as file:line (exit 1 if any)")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("content_dir", nargs="?")
    built = sub.add_parser("check-built", help="chunks whose page or heading id is missing from the built site "
                                               "(DIR/a/b/index.html or DIR/a/b.html), as file:line (exit 1 if any)")
    built.add_argument("built_dir", help="the site build's output folder")
    built.add_argument("content_dir", nargs="?")
    sub.add_parser("index", help="moved: `python -m retrieval index` (make ingest)", add_help=False)
    raw = sys.argv[1:] if argv is None else argv
    if raw[:1] == ["index"]:  # scripts written before the index command moved to the layer that owns the index
        print("error: the index command is `python -m retrieval index` now (what `make ingest` runs), with the same "
              "arguments", file=sys.stderr)
        return 2
    args = parser.parse_args(raw)
    try:
        settings = IngestSettings.from_env()
        handler = {"slug": cmd_slug, "headings": cmd_headings, "outline": cmd_outline, "links": cmd_links,
                   "check-built": cmd_check_built}[args.command]
        return handler(args, settings)
    except (IngestError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
