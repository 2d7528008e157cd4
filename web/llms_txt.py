"""The docs for programs: `/llms.txt`, `/llms-full.txt` and a Markdown copy of each page at `/docs/<path>.md`.

Coding assistants fetch answers for developers, and an assistant that finds
`/llms.txt` learns what the site is, which pages it has and that `/mcp` and
`/api/ask` answer with verified quotes. Everything here is read from the
corpus the docs viewer serves, so a publish changes it at once.

Public pages only, for every reader: these files are made to be fetched by
programs, cached and pasted into other tools' context, where a reader's
groups no longer travel with them. A page behind `access:` is never listed,
and its `.md` is a 404 worded like a page that does not exist, even for a
reader who may open it in the viewer.

Pages are grouped as the site's navigation groups them (ingest/navigation.py:
Mintlify's docs.json, Docusaurus categories, folders otherwise), in its order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from pathlib import PurePosixPath

from starlette.concurrency import iterate_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse

from ingest.corpus import Corpus
from ingest.documents import Page
from ingest.navigation import UNLISTED
from ingest.page_markdown import page_markdown
from retrieval.viewer import Viewer

from .state import state_of

TEXT = "text/plain; charset=utf-8"
MARKDOWN = "text/markdown; charset=utf-8"
ROOT_GROUP = "Pages"  # the pages at the top of the content folder
GROUP_JOINER = " › "
MAX_DESCRIPTION_CHARS = 300
PUBLIC_READER = Viewer.anonymous()
IndexAccess = Callable[[str], tuple[str, ...] | None]  # who the shared index lets read a page (PublishedDocs.page_access)


def is_public(page: Page, index_access: IndexAccess) -> bool:
    """Public by the page's own front matter and by the shared index (another replica may have restricted it)."""
    shared = index_access(page.slug)
    return PUBLIC_READER.may_read(page.access) and shared is not None and PUBLIC_READER.may_read(shared)


def public_pages(corpus: Corpus, index_access: IndexAccess) -> list[Page]:
    """The public pages in navigation order: each group where its first page is listed, pages in their order."""
    pages = [p for p in corpus.pages if is_public(p, index_access)]
    navigation = corpus.navigation

    def key(page: Page) -> tuple[object, ...]:
        place = navigation.place(page.source)
        return (place.position, PurePosixPath(page.source).stem != "index", page.title.lower(), page.slug)

    ordered = sorted(pages, key=key)
    first_of_group: dict[str, int] = {}
    for index, page in enumerate(ordered):
        first_of_group.setdefault(group_of(page, corpus), index)
    listed = navigation.source == "docs.json"
    rank = {group: (index, 0, "") if listed and navigation.place(ordered[index].source).position != UNLISTED
            else (len(ordered), int(group != ROOT_GROUP), group.lower())  # the rest by folder, the top level first
            for group, index in first_of_group.items()}
    return sorted(ordered, key=lambda p: rank[group_of(p, corpus)])


def group_of(page: Page, corpus: Corpus) -> str:
    """The page's navigation group path as one heading, e.g. "Documentation › Get started"."""
    return GROUP_JOINER.join(corpus.navigation.place(page.source).groups) or ROOT_GROUP


def description(page: Page) -> str:
    """The page's front-matter description on one line, bounded (a page may carry a paragraph there)."""
    value = page.front_matter.get("description")
    text = " ".join(value.split()) if isinstance(value, str) else ""
    return text if len(text) <= MAX_DESCRIPTION_CHARS else text[: MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"


def llms_txt(corpus: Corpus, pages: Sequence[Page], origin: str) -> str:
    """The llms.txt file (llmstxt.org): the site's name, what it is, how agents ask, and the pages by folder."""
    index = next((p for p in pages if p.slug == "index"), None)
    summary = (description(index) if index is not None else "") or f"The {corpus.site.name} documentation."
    lines = [f"# {corpus.site.name}", "", f"> {summary}", "",
             f"AI agents: ask these docs through the MCP server at {origin}/mcp (streamable HTTP; tools ask_docs, "
             f"search_docs and read_section) or with `POST {origin}/api/ask` and a JSON body "
             '`{"question": "…"}`. Every answer is made of verbatim quotes from these pages, each checked against the '
             f"page and linked to its heading. Each page below is Markdown; {origin}/llms-full.txt has them all in "
             "one file.", ""]
    current: str | None = None
    for page in pages:
        group = group_of(page, corpus)
        if group != current:
            lines += ([""] if current is not None else []) + [f"## {group}", ""]
            current = group
        about = description(page)
        lines.append(f"- [{_link_text(page.title)}]({markdown_url(page, origin)})" + (f": {about}" if about else ""))
    return "\n".join(lines).rstrip() + "\n"


def _link_text(title: str) -> str:
    return " ".join(title.split()).replace("[", "\\[").replace("]", "\\]")


def markdown_url(page: Page, origin: str) -> str:
    """Where this app serves the page's Markdown copy: the viewer's path with `.md`."""
    return f"{origin}/docs/{page.slug.strip('/') or 'index'}.md"


def site_address(url: str, origin: str) -> str:
    """A site URL as a reader elsewhere can open it: a root-relative one is on this app (the bundled viewer)."""
    return f"{origin}{url}" if url.startswith("/") and not url.startswith("//") else url


def markdown_of(page: Page, corpus: Corpus, origin: str) -> str:
    """The page as Markdown with its links and its Source line absolute."""
    return page_markdown(page, link_base=site_address(corpus.site.base_url.rstrip("/"), origin),
                         source=site_address(page.url, origin))


def origin_of(request: Request) -> str:
    """This app's scheme://host[:port] as the reader reached it."""
    return str(request.base_url).rstrip("/")


async def llms(request: Request) -> Response:
    """`GET /llms.txt`."""
    services = state_of(request).services
    corpus = await asyncio.to_thread(lambda: services.docs.corpus)
    pages = await asyncio.to_thread(public_pages, corpus, services.docs.page_access)
    text = llms_txt(corpus, pages, origin_of(request))
    return PlainTextResponse(text, media_type=TEXT)


async def llms_full(request: Request) -> Response:
    """`GET /llms-full.txt`: every public page as Markdown, one after another (streamed)."""
    services = state_of(request).services
    corpus = await asyncio.to_thread(lambda: services.docs.corpus)
    origin = origin_of(request)

    def texts() -> Iterator[str]:
        yield f"# {corpus.site.name}\n\n"
        for page in public_pages(corpus, services.docs.page_access):
            yield markdown_of(page, corpus, origin) + "\n"

    return StreamingResponse(iterate_in_threadpool(texts()), media_type=TEXT)


async def page_md(request: Request) -> Response:
    """`GET /docs/<path>.md`: one public page as Markdown (any other is a 404 like a missing page)."""
    slug = request.path_params.get("path", "").strip("/") or "index"
    services = state_of(request).services
    corpus = await asyncio.to_thread(lambda: services.docs.corpus)
    page = corpus.page(slug)
    if page is None or not await asyncio.to_thread(is_public, page, services.docs.page_access):
        return PlainTextResponse(f"no page at /docs/{slug}.md; {origin_of(request)}/llms.txt lists the pages",
                                 status_code=404)
    return Response(markdown_of(page, corpus, origin_of(request)), media_type=MARKDOWN)

