"""Site presets: the rules a site generator applies between a content file and the page a visitor reads.

Each generator turns a file into a URL and a heading into an id a little
differently, and a deep link is only proof when it follows the generator the
site really uses. A preset names those rules so `site.toml` can say
`preset = "docusaurus"` instead of re-describing them:

- `rehype-slug` (the default; remark/rehype MDX sites, Next.js): file path is
  the URL, `index` names its folder, front-matter `slug` replaces the path;
  heading text is slugged exactly as rendered, untrimmed.
- `docusaurus`: heading text is trimmed before slugging (`### <Icon/> Title`
  gives `title`, not `-title`); a front-matter `slug` without a leading `/` is
  relative to the file's folder, `id` renames the file part; `index.mdx`,
  `README.md` and a file named like its folder name the folder; number
  prefixes (`01-intro.mdx`) are dropped from the URL.
- `starlight` (Astro): pages live under `src/content/docs` when that folder
  exists; each path segment is slugged by github-slugger (`Getting Started.mdx`
  gives `getting-started`); heading ids are rehype-slug's (Astro's
  `rehypeHeadingIds` runs github-slugger over the heading text, untrimmed); a
  page a translation lacks is served at `/<locale>/<path>` with the default
  locale's content, so links there land.
- `mintlify`: the path without `.mdx` is the URL (`index` names its folder);
  heading ids by Mintlify's own rules (`slugger.mintlify_slug`: `.` becomes
  `-`, `'` becomes `’`, `/` and `&` stay; repeats numbered `-2`, `-3` across
  the page), trimmed; files under `snippets/` are partials, imported by their
  path from the site root (`/snippets/…`), never pages; a component's title,
  label, field name, type and default are text on the page (`<Step title>`,
  `<ParamField path type default>`, a `<CodeGroup>` block's label); `docs.json`
  names the navigation group each page sits under.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

from .slugger import Slugger
from .slugger import slug as github_slug

# ECMAScript WhiteSpace + LineTerminator: what JavaScript's String.prototype.trim() removes. Python's
# str.strip() differs (it also strips U+001C..U+001F and U+0085, and keeps U+FEFF), so it is spelled out.
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                "\u2028\u2029\u202f\u205f\u3000\ufeff"

_NUMBER_PREFIX = re.compile(r"^\d+\s*[-_.]+\s*(?=[^-_.\s])")


def js_trim(text: str) -> str:
    """`text.trim()` as JavaScript does it."""
    return text.strip(JS_WHITESPACE)


@dataclass(frozen=True)
class Preset:
    """The rules of one site generator (see the module docstring for each)."""

    name: str
    trim_headings: bool = False
    relative_slugs: bool = False  # front-matter slug without "/" is relative to the file's folder
    doc_ids: bool = False  # front-matter `id` replaces the file part of the URL
    folder_index: bool = False  # `README` and a file named like its folder also name the folder
    number_prefixes: bool = False  # `01-intro` is served as `intro`
    slug_segments: bool = False  # every path segment goes through github-slugger
    content_subdir: str = ""  # where pages live inside the content folder, when it exists
    locale_fallback: bool = False  # an untranslated page is served under each locale with the default content
    slugger: str = ""  # the heading-id rules the generator uses, when site.toml names none ("" = github-slugger)
    partial_folders: tuple[str, ...] = ()  # top-level folders of partials (files there are never pages)
    root_imports: bool = False  # an import path starting with `/` is from the content root
    component_text: bool = False  # components' titles, labels and field attributes are shown as text

    def heading_text(self, text: str) -> str:
        """The text the slugger sees for a heading whose rendered text is `text`."""
        return js_trim(text) if self.trim_headings else text

    def heading_id(self, slugger: Slugger, text: str) -> str:
        """The id the site gives a heading with this rendered text (duplicates numbered by `slugger`)."""
        return slugger.slug(self.heading_text(text))

    def page_slug(self, source: str, front_matter: Mapping[str, Any] | None = None) -> str:
        """The page's path on the site (no base URL, no leading or trailing slash); `index` for the root."""
        meta = front_matter or {}
        path = PurePosixPath(source).with_suffix("")
        parts = [p for p in path.parts if p not in ("", ".")]
        folder, name = parts[:-1], parts[-1] if parts else "index"
        if self.number_prefixes:
            folder = [_NUMBER_PREFIX.sub("", p) for p in folder]
            name = _NUMBER_PREFIX.sub("", name)
        override = meta.get("slug")
        if isinstance(override, (str, int, float)) and str(override).strip():
            text = str(override).strip()
            if text.startswith("/") or not self.relative_slugs:
                return _clean(text)
            return _clean("/".join([*folder, text]))
        doc_id = meta.get("id")
        if self.slug_segments:
            folder, name = [github_slug(p) for p in folder], github_slug(name)
        if self.doc_ids and isinstance(doc_id, (str, int)) and str(doc_id).strip() and "/" not in str(doc_id):
            name = str(doc_id).strip()
        elif name == "index" or (self.folder_index and (name.lower() in ("index", "readme")
                                                        or (folder and name.lower() == folder[-1].lower()))):
            name = ""
        return _clean("/".join([*folder, name] if name else folder))


def _clean(path: str) -> str:
    path = "/".join(p for p in path.strip().split("/") if p not in ("", "."))
    return path or "index"


PRESETS: Mapping[str, Preset] = MappingProxyType({
    "rehype-slug": Preset("rehype-slug"),
    "docusaurus": Preset("docusaurus", trim_headings=True, relative_slugs=True, doc_ids=True, folder_index=True,
                         number_prefixes=True),
    "starlight": Preset("starlight", slug_segments=True, content_subdir="src/content/docs", locale_fallback=True),
    "mintlify": Preset("mintlify", trim_headings=True, slugger="mintlify", partial_folders=("snippets",),
                       root_imports=True, component_text=True),
})

DEFAULT_PRESET = "rehype-slug"
