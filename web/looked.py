"""The sections an answer looked at, as a visitor sees them: each section once, linked when it stays on the site.

A long section is split into several chunks; listing each part would repeat
its title, so parts are grouped under the section's URL. Every entry repeats
the viewer check: a chunk its reader may not read is never titled or linked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ingest.site import SiteConfig
from retrieval.search import RetrievalSet

from .links import is_site_url, section_path

RELATED_LIMIT = 4


@dataclass(frozen=True)
class Looked:
    """One retrieved section as the "looked at" list names it (titles only, never scores)."""

    handle: str
    title: str
    heading: str
    href: str | None = None  # page#anchor when that stays on the site
    handles: tuple[str, ...] = ()  # every retrieved part of the section (a long section is split in several chunks)



def looked_at(rset: RetrievalSet | None, site: SiteConfig | None = None) -> tuple[Looked, ...]:
    """Each retrieved section once (its split parts grouped), in rank order, linked when the link stays on the site.

    Repeats the viewer check, like `related`: a title or link of a chunk its reader may not read is never shown.
    """
    if rset is None:
        return ()
    found: dict[str, Looked] = {}
    for hit in rset.hits:
        chunk = hit.chunk
        if not rset.viewer.may_read(chunk.access):
            continue
        heading = " › ".join(section_path(chunk.title, chunk.heading_path)[-2:])
        href = chunk.url if site is not None and is_site_url(chunk.url, site) else None
        key = chunk.url or f"{chunk.title}\n{heading}"
        seen = found.get(key)
        found[key] = (Looked(hit.handle, chunk.title, heading, href, (hit.handle,)) if seen is None
                      else replace(seen, handles=seen.handles + (hit.handle,)))
    return tuple(found.values())


def related(rset: RetrievalSet | None, site: SiteConfig, limit: int = RELATED_LIMIT) -> tuple[Looked, ...]:
    """The sections a refusal names: the first `limit` of `looked_at`, so both lists agree on what a section is."""
    return looked_at(rset, site)[:limit]
