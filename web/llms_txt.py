"""The docs for programs: `/llms.txt`, `/llms-full.txt` and a Markdown copy of each page at `/docs/<path>.md`.

Coding assistants fetch answers for developers, and an assistant that finds
`/llms.txt` learns what the site is, which pages it has and that `/mcp` and
`/api/ask` answer with verified quotes. Everything here is read from the
corpus the docs viewer serves, and only the pages the reader may open are
listed or served: anonymous readers get the public pages; with
IDENTITY_HEADER the reader's groups decide, exactly as in the viewer. A page
the reader may not open is a 404 worded like a page that does not exist.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import PurePosixPath

from starlette.concurrency import iterate_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse

from ingest.corpus import Corpus
from ingest.documents import Page
from ingest.page_markdown import page_markdown
from retrieval.viewer import Viewer

from .state import state_of

TEXT = "text/plain; charset=utf-8"
MARKDOWN = "text/markdown; charset=utf-8"
ROOT_GROUP = "Pages"  # the pages at the top of the content folder
MAX_DESCRIPTION_CHARS = 300


def readable_pages(corpus: Corpus, viewer: Viewer) -> list[Page]:
    """The pages this reader may open, grouped by folder (top-level pages first), each folder in sidebar order."""
    pages = [p for p in corpus.pages if viewer.may_read(p.access)]
    return sorted(pages, key=lambda p: (folder(p, corpus) != "", folder(p, corpus), PurePosixPath(p.source).stem != "index",
                                        _position(p), p.title.lower(), p.slug))


def folder(page: Page, corpus: Corpus) -> str:
    """The page's folder under the content root (a preset's pages folder left out), "" at the top."""
    parent = PurePosixPath(page.source).parent
    subdir = corpus.site.rules.content_subdir
    if subdir and parent.is_relative_to(subdir):
        parent = parent.relative_to(subdir)
    return "" if str(parent) == "." else str(parent)


def _position(page: Page) -> float:
    value = page.front_matter.get("sidebar_position")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else float("inf")


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
        group = folder(page, corpus) or ROOT_GROUP
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
    state = state_of(request)
    viewer = state.viewer(request)
    corpus = await asyncio.to_thread(lambda: state.services.corpus)
    text = llms_txt(corpus, readable_pages(corpus, viewer), origin_of(request))
    return PlainTextResponse(text, media_type=TEXT)


async def llms_full(request: Request) -> Response:
    """`GET /llms-full.txt`: every page the reader may open, as Markdown, one after another (streamed)."""
    state = state_of(request)
    viewer = state.viewer(request)
    corpus = await asyncio.to_thread(lambda: state.services.corpus)
    origin = origin_of(request)

    def texts() -> Iterator[str]:
        yield f"# {corpus.site.name}\n\n"
        for page in readable_pages(corpus, viewer):
            yield markdown_of(page, corpus, origin) + "\n"

    return StreamingResponse(iterate_in_threadpool(texts()), media_type=TEXT)


async def page_md(request: Request) -> Response:
    """`GET /docs/<path>.md`: one page as Markdown, for a reader who may open it (else a 404 like a missing page)."""
    state = state_of(request)
    slug = request.path_params.get("path", "").strip("/") or "index"
    viewer = state.viewer(request)
    corpus = await asyncio.to_thread(lambda: state.services.corpus)
    page = corpus.page(slug)
    if page is None or not viewer.may_read(page.access):
        return PlainTextResponse(f"no page at /docs/{slug}.md; {origin_of(request)}/llms.txt lists the pages",
                                 status_code=404)
    return Response(markdown_of(page, corpus, origin_of(request)), media_type=MARKDOWN)

