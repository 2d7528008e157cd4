"""Site config: how the docs site turns a file into a URL and a heading into an id.

A deep link is only proof if it lands where the real site put the heading, so
the URL scheme and the slugger are configuration of the site, kept beside the
content (`content/site.toml`), not assumptions in code.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .errors import SiteConfigError
from .presets import DEFAULT_PRESET, PRESETS, Preset
from .slugger import DEFAULT_SLUGGER, SLUGGERS

SITE_FILE = "site.toml"


@dataclass(frozen=True)
class SiteConfig:
    name: str = "Docs"
    base_url: str = "/docs"
    trailing_slash: bool = False
    slugger: str = DEFAULT_SLUGGER
    search_url: str = ""
    default_version: str = ""
    preset: str = DEFAULT_PRESET  # the site generator's rules: rehype-slug, docusaurus, starlight (presets.py)
    maintain_case: bool = False  # heading ids keep letter case (a site that patches its generator so)
    global_partials: str = ""  # folder of partials the site registers as global components (<Name /> without import)
    built_dir: str = ""  # the built site (HTML); heading ids are taken from it where a heading matches
    fingerprint: str = ""  # hash of the config file; the index records what built it

    @property
    def rules(self) -> Preset:
        """The preset's rules (URL and heading-id details of the site generator)."""
        return PRESETS[self.preset]

    @property
    def slugger_name(self) -> str:
        """The slugger rule headings use: `maintain_case` asks for the case-keeping one."""
        return "github-case" if self.maintain_case else self.slugger

    @property
    def is_external(self) -> bool:
        """True when pages live on another host, so links must leave this app."""
        return self.base_url.startswith(("http://", "https://"))

    def page_url(self, slug: str) -> str:
        """The URL of a page on the site, without a fragment."""
        base = self.base_url.rstrip("/")
        path = "" if slug in ("", "index") else slug.strip("/")
        url = f"{base}/{path}" if path else f"{base}/"
        if self.trailing_slash and not url.endswith("/"):
            url += "/"
        return url

    def search_link(self, query: str) -> str:
        """Where a visitor can search the site when the bot has no answer."""
        from urllib.parse import quote

        return self.search_url.replace("{query}", quote(query)) if self.search_url else ""


MINTLIFY = "mintlify"


def is_mintlify(content_dir: Path) -> bool:
    """True for a folder whose `docs.json` is Mintlify's (its `$schema` names mintlify.com): the preset is implied."""
    import json

    try:
        data = json.loads((content_dir / "docs.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "mintlify" in str(data.get("$schema", "")).lower()


def slug_for(source: str, override: str | None = None) -> str:
    """The page slug: its path without `.mdx`, `index` files name their folder.

    A front-matter `slug` overrides the path (leading `/` = from the site root).
    """
    if override:
        return override.strip().strip("/") or "index"
    path = PurePosixPath(source).with_suffix("")
    if path.name == "index":
        path = path.parent
    text = str(path)
    return "index" if text in ("", ".") else text


def load_site_config(content_dir: Path) -> SiteConfig:
    """Read `<content_dir>/site.toml`; a missing file means the defaults (a Mintlify site's when `docs.json` says so)."""
    path = content_dir / SITE_FILE
    if not path.exists():
        return SiteConfig(preset="mintlify", slugger="mintlify") if is_mintlify(content_dir) else SiteConfig()
    raw = path.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8")).get("site", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SiteConfigError(f"{path}: {exc}") from exc
    known = {f for f in SiteConfig.__dataclass_fields__ if f != "fingerprint"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SiteConfigError(f"{path}: unknown [site] keys {unknown}; known keys are {sorted(known)}")
    if data.get("slugger", DEFAULT_SLUGGER) not in SLUGGERS:
        raise SiteConfigError(
            f"{path}: slugger {data['slugger']!r} is not one of {sorted(SLUGGERS)}"
        )
    if data.get("preset", DEFAULT_PRESET) not in PRESETS:
        raise SiteConfigError(f"{path}: preset {data['preset']!r} is not one of {sorted(PRESETS)}")
    for key in ("trailing_slash", "maintain_case"):
        if not isinstance(data.get(key, False), bool):
            raise SiteConfigError(f"{path}: {key} must be true or false, got {data[key]!r}")
    for key in ("built_dir", "global_partials"):
        if not isinstance(data.get(key, ""), str):
            raise SiteConfigError(f"{path}: {key} must be a path string, got {data[key]!r}")
    preset = PRESETS[data.get("preset") or (MINTLIFY if is_mintlify(content_dir) else DEFAULT_PRESET)]
    data.setdefault("preset", preset.name)
    if preset.slugger:
        data.setdefault("slugger", preset.slugger)  # the generator's own ids unless site.toml says otherwise
    if data.get("built_dir"):  # relative to the folder holding site.toml, so the config travels with the site
        data["built_dir"] = str((path.parent / data["built_dir"]).resolve())
    return SiteConfig(**data, fingerprint=hashlib.sha256(raw).hexdigest()[:16])
