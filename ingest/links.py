"""Links: where a page's links are written (extraction), and which of them land nowhere (the checker).

A broken deep link in the docs is the same failure as a wrong citation link,
so ingest reports them (as warnings with file:line) using the very anchors the
chunks use. External links, assets and links into pages that failed to parse
are not judged.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit

from markdown_it.token import Token

from .documents import Link, Page
from .mdx import find_fences
from .site import SiteConfig, slug_for

_JSX_HREF = re.compile(r"<[A-Za-z][^<>]*?\bhref=([\"'])(?P<href>[^\"']*)\1")
_SCHEME = re.compile(r"^[A-Za-z][\w+.-]*:")
_CONTENT_EXT = (".mdx", ".md")


@dataclass(frozen=True)
class BrokenLink:
    """One link that does not resolve: where it is written and why it fails."""

    source: str
    line: int
    target: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: broken link {self.target!r}: {self.reason}"


def check_links(pages: Sequence[Page], site: SiteConfig, *, unparsed: Iterable[str] = ()) -> list[BrokenLink]:
    """Every internal link in `pages` that names no page or no heading anchor, in file/line order.

    `unparsed` are sources of pages that failed to parse: links to them are not judged.
    """
    by_slug = served_paths(pages, site)
    by_source = {page.source: page for page in pages}
    unknown = {site.rules.page_slug(source) for source in unparsed} | set(unparsed)
    base = urlsplit(site.base_url).path.rstrip("/")
    broken: list[BrokenLink] = []
    for page in sorted(pages, key=lambda p: p.source):
        for link in page.links:
            reason = _problem(link.target, page, by_slug, by_source, unknown, base)
            if reason:
                broken.append(BrokenLink(link.source or page.source, link.line, link.target, reason))
    return broken


def served_paths(pages: Sequence[Page], site: SiteConfig) -> dict[str, Page]:
    """Every path the site serves a page at: each page's slug, and (Starlight) untranslated pages under each locale.

    Starlight renders a page missing from a translation at `/<locale>/<path>`
    with the default locale's content, so links there land. A top-level folder
    counts as a locale when at least three of its pages mirror root pages.
    """
    by_slug = {page.slug: page for page in pages}
    if not site.rules.locale_fallback:
        return by_slug
    folders = {slug.split("/", 1)[0] for slug in by_slug if "/" in slug}
    locales = {f for f in folders if sum(1 for slug in by_slug if slug.startswith(f + "/")
                                         and slug[len(f) + 1:] in by_slug) >= 3}
    served = dict(by_slug)
    for slug, page in by_slug.items():
        if slug.split("/", 1)[0] not in locales:
            for locale in locales:
                served.setdefault(f"{locale}/{slug}", page)
    return served


@dataclass(frozen=True)
class AnchorLink:
    """A link with a `#fragment` and the page it lands on (None when no page has that path)."""

    source: str
    line: int
    target: str
    page: Page | None
    anchor: str


def anchor_links(pages: Sequence[Page], site: SiteConfig) -> list[AnchorLink]:
    """Every internal link with a fragment: on a site that refuses broken anchors, each names a real heading id."""
    by_slug = served_paths(pages, site)
    by_source = {page.source: page for page in pages}
    base = urlsplit(site.base_url).path.rstrip("/")
    found: list[AnchorLink] = []
    for page in sorted(pages, key=lambda p: p.source):
        for link in page.links:
            judged = _destination(link.target, page, by_slug, by_source, set(), base)
            if judged is not None and judged[2]:
                found.append(AnchorLink(link.source or page.source, link.line, link.target, judged[0], judged[2]))
    return found


def _problem(target: str, page: Page, by_slug: dict[str, Page], by_source: dict[str, Page],
             unknown: set[str], base: str) -> str | None:
    """Why `target` (written in `page`) does not resolve, or None when it does or is not ours to judge."""
    judged = _destination(target, page, by_slug, by_source, unknown, base)
    if judged is None:
        return None
    dest, reason, anchor = judged
    if dest is None:
        return reason
    if anchor and anchor not in {h.anchor for h in dest.headings if h.anchor} | set(dest.built_ids):
        return f"no heading with id {anchor!r} on {dest.source}"
    return None


def _destination(target: str, page: Page, by_slug: dict[str, Page], by_source: dict[str, Page],
                 unknown: set[str], base: str) -> tuple[Page | None, str, str] | None:
    """(page the link lands on or None, why none, the decoded fragment); None when the link is not ours to judge."""
    target = target.strip()
    if not target or target.startswith("//") or _SCHEME.match(target):
        return None
    path, _, fragment = target.partition("#")
    path = path.split("?", 1)[0]
    anchor = unquote(fragment)
    if not path:
        return page, "", anchor
    path = unquote(path)
    ext = posixpath.splitext(path.rstrip("/"))[1].lower()
    if ext and ext not in _CONTENT_EXT:
        return None  # an image, a PDF, a download: not a docs page
    if ext in _CONTENT_EXT and not path.startswith("/"):
        source = posixpath.normpath(posixpath.join(posixpath.dirname(page.source), path))
        if source in unknown:
            return None
        dest = by_source.get(source)
        return dest, "" if dest else f"no content file {source}", anchor
    absolute = urljoin(page.url if page.url.startswith("/") else urlsplit(page.url).path, path)
    if base and (absolute == base or absolute.startswith(base + "/")) and not _is_slug(absolute, by_slug):
        absolute = absolute[len(base):]
    slug = slug_for(absolute.strip("/") + ".mdx") if absolute.strip("/") else "index"
    if slug in unknown:
        return None
    dest = by_slug.get(slug)
    return dest, "" if dest else f"no page with slug {slug!r}", anchor


def _is_slug(path: str, by_slug: dict[str, Page]) -> bool:
    """True when a site-root path is itself a page slug (a site whose pages live under a folder named like the base)."""
    return path.strip("/") in by_slug


def page_links(tokens: list[Token], text: str, fm_lines: int) -> tuple[Link, ...]:
    """Every link target with its source line: Markdown links and JSX `href` attributes outside code."""
    lines = text.split("\n")
    found: list[Link] = []
    for token in tokens:
        if token.type != "inline" or not token.map:
            continue
        first, last = token.map
        for child in token.children or []:
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                line = next((k for k in range(first, last) if href in lines[k]), first)
                found.append(Link(href, line + 1))
    in_fence: set[int] = set()
    for fence in find_fences(lines):
        in_fence.update(range(fence.start, fence.end))
    for k in range(fm_lines, len(lines)):
        if k not in in_fence:
            found.extend(Link(m["href"], k + 1) for m in _JSX_HREF.finditer(lines[k]))
    return tuple(sorted(set(found), key=lambda link: (link.line, link.target)))


def located_links(links: tuple[Link, ...], origins: tuple[tuple[str, int], ...], source: str) -> tuple[Link, ...]:
    """Links with the file and line they are written on (a partial's links are reported in the partial)."""
    if not origins:
        return links
    located = []
    for link in links:
        file, line = origins[link.line - 1] if 0 < link.line <= len(origins) else (source, link.line - 1)
        located.append(Link(link.target, line + 1, "" if file == source else file))
    return tuple(located)
