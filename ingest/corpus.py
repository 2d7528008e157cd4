"""Load a whole content folder: every page that parses, and a report for every one that does not.

A bad file never aborts a run. Authors get `file:line: reason` for each
failure while everything else is processed. A failure says who may read the
page when its front matter could be read (`PageError.access`); the indexer
keeps a failed page's old chunks only for those groups, and withholds a page
whose access is unknown.

A re-ingest reads every file but parses only what changed: given the corpus
it last published (`previous`), a page whose bytes are unchanged is taken
over with its chunks, as long as nothing else a parse reads changed (the
site config, any partial under the content folder; a site with `built_dir`
is always parsed whole, its built pages being outside the folder). At 100k
chunks this is what keeps a 1 % edit from re-parsing 16,666 pages in the
serving process (docs/performance.mdx).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .built import adopt_built_ids
from .dedupe import DuplicateMemo, find_duplicates
from .documents import Chunk, Page
from .errors import PageError, SiteConfigError
from .ids import doc_id
from .links import BrokenLink, check_links
from .navigation import Navigation, read_navigation
from .parser import parse_page
from .partials import is_partial
from .site import SiteConfig, load_site_config
from .splitter import split_page

CONTENT_SUFFIXES = (".mdx", ".md")


@dataclass(frozen=True)
class Corpus:
    """The parsed state of a content folder."""

    root: Path
    site: SiteConfig
    pages: tuple[Page, ...]
    failures: tuple[PageError, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())  # warnings about the folder as a whole (a preset's layout missing)
    # What the next load may take over unparsed (see the module docstring): the digest of each page file's bytes,
    # the digest of everything else a parse reads, and the chunks of pages taken over from the corpus before.
    digests: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    context: bytes = field(default=b"", repr=False, compare=False)
    _kept_chunks: dict[str, tuple[Chunk, ...]] = field(default_factory=dict, repr=False, compare=False)
    _duplicate_memo: DuplicateMemo | None = field(default=None, repr=False, compare=False)

    def chunks(self) -> list[Chunk]:
        """Every chunk to index: near-duplicates (see dedupe.py) are left out in favour of their canonical chunk."""
        return [chunk for chunk in self.all_chunks() if chunk.id not in self.duplicates]

    def all_chunks(self) -> list[Chunk]:
        """Every chunk of every page, duplicates included (what `outline` shows)."""
        return list(self._split)

    @functools.cached_property
    def _split(self) -> tuple[Chunk, ...]:
        return tuple(chunk for chunks in self.page_chunks.values() for chunk in chunks)

    @functools.cached_property
    def page_chunks(self) -> dict[str, tuple[Chunk, ...]]:
        """{page source: its chunks in order}; a page taken over from the corpus before keeps its chunks.

        A kept page whose navigation groups changed (docs.json edited) is split again: they are in its chunks.
        """
        found: dict[str, tuple[Chunk, ...]] = {}
        for page in self.pages:
            groups = self.navigation.declared_groups(page.source)
            kept = self._kept_chunks.get(page.source)
            found[page.source] = kept if kept and kept[0].groups == groups else tuple(split_page(page, groups=groups))
        return found

    @functools.cached_property
    def duplicates(self) -> dict[str, str]:
        """{duplicate chunk id: canonical chunk id}, so a claim is always cited to one place."""
        versions = {doc_id(page.slug): page.front_matter.get("version") for page in self.pages}
        memo = self._duplicate_memo or DuplicateMemo()
        found = find_duplicates(self._split, {s: None if v is None else str(v) for s, v in versions.items()}, memo=memo)
        object.__setattr__(self, "_duplicate_memo", memo)  # the next load starts from this one's blocks
        return found

    @functools.cached_property
    def broken_links(self) -> list[BrokenLink]:
        """Internal links that land on no page or no heading anchor (warnings, the run goes on)."""
        return check_links(self.pages, self.site, unparsed=[failure.source for failure in self.failures])

    @property
    def warnings(self) -> list[str]:
        """Everything worth an author's look that did not stop a page from being used, as `file:line: reason`."""
        found = [*self.notes, *self.navigation.notes, *(w for page in self.pages for w in page.warnings),
                 *(str(link) for link in self.broken_links)]
        return list(dict.fromkeys(found))  # a partial rendered by several pages is reported once

    @functools.cached_property
    def navigation(self) -> Navigation:
        """Each page's place in the site's sidebar (navigation.py): its group path and order."""
        return read_navigation(self.root, ((p.source, p.slug, p.front_matter) for p in self.pages),
                               self.site.rules.name, self.site.rules.content_subdir)

    @functools.cached_property
    def versions(self) -> frozenset[str]:
        """The docs versions the site declares: `default_version` and front-matter `version`s.

        A page without a declared version carries its content hash as `version`
        (so the copies of a page stay apart); that is no version a reader knows,
        and nothing shows it as one.
        """
        declared = {str(p.front_matter["version"]) for p in self.pages if p.front_matter.get("version")}
        return frozenset(declared | ({self.site.default_version} if self.site.default_version else set()))

    def page(self, slug: str) -> Page | None:
        return next((p for p in self.pages if p.slug == slug), None)


def content_files(root: Path, partial_folders: tuple[str, ...] = ()) -> list[Path]:
    """Content files under root, sorted; symlinked folders are not followed (no loops).

    `partial_folders`: top-level folders the site keeps partials in (Mintlify's `snippets/`): never pages.
    """
    found: list[Path] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        top = Path(folder) == root
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")) and not (top and d in partial_folders))
        for name in sorted(files):
            if name.endswith(CONTENT_SUFFIXES) and not name.startswith((".", "_")):
                found.append(Path(folder) / name)
    return found


def pages_folder(root: Path, site: SiteConfig) -> Path:
    """Where the pages live: the preset's folder (Starlight's `src/content/docs`) when it exists, else `root`."""
    subdir = site.rules.content_subdir
    return root / subdir if subdir and (root / subdir).is_dir() else root


def layout_notes(root: Path, site: SiteConfig) -> tuple[str, ...]:
    """A warning when the preset expects its pages in a folder this content folder lacks.

    Pointing `CONTENT_DIR` at the docs folder itself is fine, but pointing it at
    the wrong folder used to index whatever was there without a word; the one
    line says which folder was used, so an author can tell the two apart.
    """
    subdir = site.rules.content_subdir
    if not subdir or (root / subdir).is_dir():
        return ()
    return (f"{root / 'site.toml'}: preset {site.preset!r} expects its pages under {subdir}/, which {root} does not "
            f"have; reading pages from {root} itself",)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def parse_context(pages_root: Path, site: SiteConfig) -> bytes:
    """A digest of everything besides a page's own file that its parse may read: the site config and every partial.

    Partials are the files under the content folder with a `_` file or folder name (partials.py); their
    names are in it too, so a partial appearing or disappearing changes it like an edit does.
    """
    digest = hashlib.blake2b(repr(site).encode(), digest_size=16)
    for folder, dirs, files in os.walk(pages_root, followlinks=False):
        dirs.sort()
        relative = os.path.relpath(folder, pages_root).replace(os.sep, "/")
        for name in sorted(files):
            source = name if relative == "." else f"{relative}/{name}"
            if is_partial(source, site.rules.partial_folders):
                try:
                    data = (Path(folder) / name).read_bytes()
                except OSError:
                    data = b"\0unreadable"
                digest.update(source.encode() + b"\0" + _digest(data))
    return digest.digest()


def load_corpus(root: Path, site: SiteConfig | None = None, *,
                progress: Callable[[int], Callable[[int], object]] | None = None,
                previous: Corpus | None = None) -> Corpus:
    """Parse every page under `root`; failures are collected, not raised.

    `progress(total)` may return a callback told of each parsed file (a progress bar on long runs).
    `previous`, the corpus last loaded from the same folder, lends the pages whose bytes are unchanged
    when nothing else a parse reads changed (module docstring); the result is the same either way.
    """
    root = root.resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"content folder not found: {root}")
    site = site or load_site_config(root)
    if site.built_dir and not Path(site.built_dir).is_dir():
        raise SiteConfigError(f"built_dir {site.built_dir} is not a folder: build the site first, or remove built_dir")
    pages_root = pages_folder(root, site)
    pages: list[Page] = []
    failures: list[PageError] = []
    seen: dict[str, str] = {}
    digests: dict[str, bytes] = {}
    context = parse_context(pages_root, site)
    lender = previous if previous is not None and previous.root == root and previous.context == context \
        and not site.built_dir else None
    lent = {page.source: page for page in lender.pages} if lender is not None else {}
    kept: dict[str, tuple[Chunk, ...]] = {}
    files = content_files(pages_root, site.rules.partial_folders)
    tick = progress(len(files)) if progress else None
    for path in files:
        if tick:
            tick(1)
        source = path.relative_to(pages_root).as_posix()
        with contextlib.suppress(OSError):  # an unreadable file is parsed below, which reports it
            digests[source] = _digest(path.read_bytes())
        before = lent.get(source)
        if before is not None and before.slug not in seen and source in digests \
                and lender is not None and lender.digests.get(source) == digests[source]:
            seen[before.slug] = source
            pages.append(before)
            kept[source] = lender.page_chunks[source]
            continue
        try:
            page = parse_page(path, pages_root, site)
        except PageError as exc:
            failures.append(exc)
            continue
        except OSError as exc:
            failures.append(PageError(source, None, f"cannot read file: {exc.strerror or exc}"))
            continue
        except Exception as exc:  # a parser bug must cost one page, never the run
            failures.append(PageError(source, None, f"could not be parsed ({type(exc).__name__}: {exc})"))
            continue
        if site.built_dir:
            page = adopt_built_ids(page, Path(site.built_dir), site)
        if page.slug in seen:
            failures.append(PageError(source, 1, f"slug {page.slug!r} is already used by {seen[page.slug]}",
                                      access=page.access))
            continue
        seen[page.slug] = source
        pages.append(page)
    return Corpus(root=root, site=site, pages=tuple(pages), failures=tuple(failures), notes=layout_notes(root, site),
                  digests=digests, context=context, _kept_chunks=kept,
                  _duplicate_memo=lender._duplicate_memo if lender is not None else None)
