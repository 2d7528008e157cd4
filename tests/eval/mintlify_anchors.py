"""Does every heading of a Mintlify site get the id Mintlify gives it? Checked by the documented rules, written again.

    python -m tests.eval.mintlify_anchors [DIR]     # default ../shared/corpora/mintlify-docs

The ingest's ids come from `ingest.slugger.MintlifySlugger`. This module does
not call it: it applies the rules Mintlify documents ("Automatic anchor
IDs": lower case, whitespace to `-`, `'` to `’`, `.` to `-`, parentheses
removed, `/` and `&` kept; a repeated id numbered `-2`, `-3` across the page)
character by character, to the headings whose text holds only characters
those rules speak of, and reports the share whose ingested id matches. A
heading with an explicit `{#id}` is expected to keep it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path

from .sites import REPO

COVERED_PUNCTUATION = frozenset(" '’.()/&-")


def covered(text: str) -> bool:
    """True when the documented rules say what becomes of every character of `text`."""
    return all(ch.isalnum() or ch in COVERED_PUNCTUATION for ch in text)


def documented_id(text: str) -> str:
    """The id the documented rules give a heading's text (before a repeat's number)."""
    out = []
    for ch in text.strip():
        if ch == "'":
            out.append("’")
        elif ch == ".":
            out.append("-")
        elif ch in "()":
            continue
        elif ch == " ":
            out.append("-")
        else:
            out.append(ch.lower())
    return "".join(out)


def check(headings: Iterable[tuple[str, str, str, bool]]) -> dict[str, object]:
    """(page, text, ingested id, explicit) per heading in page order → how many covered headings match."""
    seen: dict[str, set[str]] = {}
    total = matched = 0
    misses: list[str] = []
    for page, text, anchor, explicit in headings:
        ids = seen.setdefault(page, set())
        if explicit:
            expected = anchor
        else:
            base = documented_id(text)
            expected, n = base, 1
            while expected in ids:
                n += 1
                expected = f"{base}-{n}"
        ids.add(expected)
        if anchor is not None and (explicit or covered(text)):  # an HTML heading in a component gets no id
            total += 1
            if expected == anchor:
                matched += 1
            else:
                misses.append(f"{page}: {text!r} -> {anchor} (rules: {expected})")
    return {"headings_covered": total, "matching": matched, "share": round(matched / total, 4) if total else None,
            "misses": misses[:20]}


def corpus_headings(root: Path) -> list[tuple[str, str, str, bool]]:
    """Every heading of the site as ingested, in page order, with whether its id is written out (`{#id}`)."""
    from ingest.corpus import load_corpus

    corpus = load_corpus(root)
    found = []
    for page in corpus.pages:
        for heading in page.headings:
            source, line = page.locate(heading.line - 1)
            written = (root / source).read_text(encoding="utf-8").split("\n")[line]
            found.append((page.source, heading.text, heading.anchor, "{#" in written))
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else REPO.parent / "shared" / "corpora" / "mintlify-docs"
    if not root.is_dir():
        print(f"no Mintlify site at {root}", file=sys.stderr)
        return 2
    print(json.dumps(check(corpus_headings(root)), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
