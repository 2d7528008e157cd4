"""Which URLs may become links, and how a section is named below its page title."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from ingest.site import SiteConfig

_URL_TRAPS = re.compile(r"[\x00-\x1f\x7f\\]")


def is_site_url(url: str, site: SiteConfig) -> bool:
    """True only for URLs under the site's base URL (the local viewer or the external docs host)."""
    if _URL_TRAPS.search(url):  # browsers drop tabs/newlines and read a backslash as "/", so "/" + "\\evil" leaves the site
        return False
    base = site.base_url.rstrip("/")
    if site.is_external:
        want, got = urlsplit(base), urlsplit(url)
        return (got.scheme, got.netloc) == (want.scheme, want.netloc) and (
            got.path == want.path or got.path.startswith(want.path.rstrip("/") + "/"))
    if url.startswith("//") or urlsplit(url).scheme:
        return False
    return url == base or url.startswith(base + "/") or url.startswith(base + "#") or (base == "" and url.startswith("/"))


def section_path(title: str, heading_path: Sequence[str]) -> tuple[str, ...]:
    """The heading path below the page title (the title is shown on its own already)."""
    path = tuple(heading_path)
    return path[1:] if path and path[0] == title else path
