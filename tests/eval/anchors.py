"""How many heading ids match the real site's, measured with the site's own links as the oracle.

    python -m tests.eval.anchors [--site DIR] [--site-config FILE] [--out eval-results]

A Docusaurus site built with `onBrokenAnchors: 'throw'` (cypress-docs is one)
only builds when every `[text](/page#id)` in its sources names an id the built
page really has. So every distinct (page, #id) a link names is a heading id of
the real site, and the share of them our rules reproduce is the share of
anchors that land where the site put them. Ids a site patch renames (version
headings `15.21.0` -> `15-21-0` on cypress-docs) are counted apart: no rule
set can know a site's patches, only `check-built`/`built_dir` can.

Writes `anchors.json` and prints a summary; the same numbers for the rules
before presets (`slugger = "github-case"`, no trimming, no partials) are given
for comparison. Not part of `make test`: it reads a corpus a user's clone may
not have (`make check-anchors`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
from collections import Counter
from pathlib import Path

from ingest.corpus import Corpus, load_corpus
from ingest.links import anchor_links
from ingest.site import SiteConfig, load_site_config

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
_VERSION = re.compile(r"^\d+(?:\.\d+)+$")


def measure(corpus: Corpus) -> dict:
    """Distinct linked (page, id) targets: how many our anchors reproduce, and why the others do not."""
    targets: dict[tuple[str, str], bool] = {}
    patched: set[tuple[str, str]] = set()
    missing_pages = 0
    for link in anchor_links(corpus.pages, corpus.site):
        if link.page is None:
            missing_pages += 1
            continue
        key = (link.page.source, link.anchor)
        anchors = {h.anchor for h in link.page.headings if h.anchor}
        targets[key] = link.anchor in anchors
        versions = {h.text.strip().replace(".", "-") for h in link.page.headings if _VERSION.match(h.text.strip())}
        if link.anchor in versions:
            patched.add(key)
    unresolved = sorted(k for k, ok in targets.items() if not ok and k not in patched)
    judged = len(targets) - len([k for k in patched if not targets[k]])
    resolved = sum(targets.values())
    headings = [h for page in corpus.pages for h in page.headings]
    from_partials = sum(1 for page in corpus.pages for h in page.headings
                        if page.origins and page.locate(h.line - 1)[0] != page.source)
    return {
        "pages": len(corpus.pages),
        "failed_pages": len(corpus.failures),
        "headings": len(headings),
        "headings_from_partials": from_partials,
        "linked_targets": len(targets),
        "linked_targets_renamed_by_site_patch": len(patched),
        "resolved": resolved,
        "resolved_share": round(resolved / len(targets), 4) if targets else None,
        "resolved_share_excluding_patch": round(resolved / judged, 4) if judged else None,
        "links_to_missing_pages": missing_pages,
        "unresolved_not_patch": [f"{source}#{anchor}" for source, anchor in unresolved],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.eval.anchors", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    default = Path(os.environ.get("CYPRESS_DOCS", REPO.parent / "shared" / "corpora" / "cypress-docs"))
    parser.add_argument("--site", type=Path, default=default, help="content folder (default: cypress-docs)")
    parser.add_argument("--site-config", type=Path, default=HERE / "cypress" / "site.toml",
                        help="a site.toml for the folder (default: tests/eval/cypress/site.toml)")
    parser.add_argument("--out", type=Path, default=REPO / "eval-results")
    args = parser.parse_args(argv)
    if not args.site.is_dir():
        raise SystemExit(f"no content folder at {args.site}; set CYPRESS_DOCS or pass --site")
    site = load_site_config(args.site_config.parent) if args.site_config else load_site_config(args.site)
    before = SiteConfig(name=site.name, base_url=site.base_url, trailing_slash=site.trailing_slash,
                        slugger="github-case" if site.maintain_case else site.slugger)
    now = measure(load_corpus(args.site, site))
    old = measure(load_corpus(args.site, before))
    report = {"site": str(args.site), "config": dataclasses.asdict(site), "now": now, "before_presets": old}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "anchors.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for label, figures in (("before presets", old), (f"preset {site.preset}", now)):
        print(f"{label}: {figures['pages']} pages ({figures['failed_pages']} failed), {figures['headings']} headings "
              f"({figures['headings_from_partials']} from partials); linked ids reproduced "
              f"{figures['resolved']}/{figures['linked_targets']} = {figures['resolved_share']:.2%}, "
              f"{figures['resolved_share_excluding_patch']:.2%} of those the site's patch does not rename "
              f"({figures['linked_targets_renamed_by_site_patch']} renamed)")
    reasons = Counter(item.split("#")[0] for item in now["unresolved_not_patch"])
    for source, count in reasons.most_common():
        print(f"  not reproduced: {count} on {source}")
    print(f"report: {args.out / 'anchors.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
