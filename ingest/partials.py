"""Partials: MDX files a page imports and renders, whose content a visitor reads on that page.

A file or folder whose name starts with `_` is not a page. When a page does
`import Setup from './_setup.mdx'` and renders `<Setup />` on a line of its
own, the visitor reads the partial's text right there, under the page's
headings, at the page's URL, with the page's access. So the partial's lines
are spliced into the page text at that point (recursively, for partials that
render partials) and every line of the result remembers where it came from:
chunks cite the page, their source span names the partial's own file.

Sites that register partials as global MDX components (no import on the page)
name that folder in `site.toml` (`global_partials = "partials"`); `<FooBar />`
then renders `_foo-bar.mdx` (or `_foo_bar.mdx`, `_foobar.mdx`) from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .mdx import find_fences

PARTIAL_SUFFIXES = (".mdx", ".md")
MAX_DEPTH = 8
_IMPORT = re.compile(r"""^import\s+(?P<name>[A-Za-z_$][\w$]*)\s*(?:,\s*\{[^}]*\}\s*)?"""
                     r"""from\s+(['"])(?P<path>[^'"]+)\2\s*;?\s*$""")
_USE = re.compile(r"^(?P<indent>[ \t]*)<(?P<name>[A-Z][\w]*)(?:\s[^<>]*?)?\s*(?:/>|>\s*</(?P=name)>)\s*$")

Origin = tuple[str, int]  # (source file relative to the content root, 0-based line in it)


@dataclass(frozen=True)
class Expansion:
    """A page's text with its rendered partials spliced in, and where each line came from."""

    text: str
    origins: tuple[Origin, ...] = ()  # one per line of `text`; empty when nothing was included
    files: tuple[tuple[str, str], ...] = ()  # (source, text) of every partial included
    warnings: tuple[str, ...] = field(default=())  # "file:line: reason"


def is_partial(source: str, folders: tuple[str, ...] = ()) -> bool:
    """True for a file that is not a page: its name or a folder on its path starts with `_`, or it sits in one of
    the site's partial `folders` (Mintlify's `snippets/`)."""
    parts = PurePosixPath(source).parts
    return any(part.startswith("_") for part in parts) or (len(parts) > 1 and parts[0] in folders)


def _key(name: str) -> str:
    return re.sub(r"[-_]", "", name.lstrip("_")).lower()


def global_partials(root: Path, folder: str) -> dict[str, str]:
    """{normalized component name: partial source} for the partials a site registers globally."""
    base = (root / folder) if folder else None
    if base is None or not base.is_dir():
        return {}
    found: dict[str, str] = {}
    for path in sorted(base.rglob("*")):
        if path.suffix in PARTIAL_SUFFIXES and path.name.startswith("_"):
            found.setdefault(_key(path.stem), path.relative_to(root).as_posix())
    return found


def expand(text: str, source: str, root: Path, *, skip_lines: int = 0, global_folder: str = "",
           partial_folders: tuple[str, ...] = (), root_imports: bool = False) -> Expansion:
    """Splice every partial the page renders into its text (see the module docstring).

    `partial_folders` and `root_imports` are the preset's: folders of partials, and import paths from `/` being
    from the content root (Mintlify's `import Setup from "/snippets/setup.mdx"`).
    """
    expander = _Expander(root, global_partials(root, global_folder), partial_folders, root_imports)
    lines, origins = expander.run(text.split("\n"), source, skip_lines, ())
    if not expander.files:
        return Expansion(text, warnings=tuple(expander.warnings))
    return Expansion("\n".join(lines), tuple(origins), tuple(expander.files.items()), tuple(expander.warnings))


class _Expander:
    def __init__(self, root: Path, globals_: dict[str, str], folders: tuple[str, ...] = (),
                 root_imports: bool = False) -> None:
        self.root = root.resolve()
        self.globals = globals_
        self.folders = folders
        self.root_imports = root_imports
        self.files: dict[str, str] = {}
        self.warnings: list[str] = []

    def run(self, lines: list[str], source: str, skip: int, stack: tuple[str, ...]) -> tuple[list[str], list[Origin]]:
        in_fence = {i for fence in find_fences(lines) for i in range(fence.start, fence.end)}
        imports: dict[str, str | None] = {}
        for i, line in enumerate(lines):
            match = _IMPORT.match(line) if i >= skip and i not in in_fence else None
            if match and match["path"].endswith(PARTIAL_SUFFIXES):
                imports[match["name"]] = self._resolve(match["path"], source)
        out: list[str] = []
        origins: list[Origin] = []
        for i, line in enumerate(lines):
            use = _USE.match(line) if i >= skip and i not in in_fence else None
            target = self._target(use["name"], imports) if use else None
            if use is None or target is None:
                out.append(line)
                origins.append((source, i))
                continue
            if target in (*stack, source) or len(stack) >= MAX_DEPTH:
                self.warnings.append(f"{source}:{i + 1}: <{use['name']} /> renders {target}, "
                                     "which renders itself; left out")
                out.append("")
                origins.append((source, i))
                continue
            body = self._read(target, source, i)
            if body is None:
                out.append("")
                origins.append((source, i))
                continue
            body_lines = body.split("\n")
            skip_inner = _front_matter_lines(body)
            for k in range(1, max(skip_inner - 1, 1)):
                if re.match(r"access\s*:", body_lines[k]):  # the site shows a partial to whoever opens the page
                    self.warnings.append(f"{target}:{k + 1}: a partial has the access of each page that renders it; "
                                         "this 'access' is ignored (restrict the pages instead)")
            body_lines[:skip_inner] = [""] * skip_inner  # a partial's front matter is never rendered
            inner_lines, inner_origins = self.run(body_lines, target, skip_inner, (*stack, source))
            indent = use["indent"]
            out.extend(["", *(indent + line if line.strip() else line for line in inner_lines), ""])
            origins.extend([(source, i), *inner_origins, (source, i)])
        return out, origins

    def _target(self, name: str, imports: dict[str, str | None]) -> str | None:
        """The partial `<name />` renders: an imported one, else a globally registered one."""
        if name in imports:
            target = imports[name]
            return target if target is not None and is_partial(target, self.folders) else None  # only partials
        return self.globals.get(_key(name))

    def _resolve(self, spec: str, source: str) -> str | None:
        """The content-root-relative path an import names, or None when it is outside the content folder."""
        if spec.startswith(("./", "../")):
            candidates = [self.root / PurePosixPath(source).parent / spec]
        elif spec.startswith("/") and self.root_imports:  # Mintlify: from the site root, the content folder
            candidates = [self.root / spec.lstrip("/")]
        elif spec.startswith("@site/"):  # Docusaurus: the site root; the content folder is its docs folder
            rest = spec[len("@site/"):]
            candidates = [self.root.parent / rest, self.root / rest.split("/", 1)[-1]]
        else:
            return None
        for candidate in candidates:
            path = candidate.resolve()
            if path.is_file() and path.is_relative_to(self.root):
                return path.relative_to(self.root).as_posix()
        if is_partial(spec.lstrip("/"), self.folders):
            self.warnings.append(f"{source}: import of {spec!r}: no such file in the content folder, "
                                 "so its content is not indexed")
        return None

    def _read(self, target: str, source: str, line: int) -> str | None:
        if target not in self.files:
            try:
                text = (self.root / target).read_bytes().decode("utf-8-sig")
            except (OSError, UnicodeDecodeError) as exc:
                self.warnings.append(f"{source}:{line + 1}: cannot read the partial {target}: {exc}")
                return None
            self.files[target] = text.replace("\r\n", "\n").replace("\r", "\n")
        return self.files[target]


def _front_matter_lines(text: str) -> int:
    """Lines taken by a partial's front matter (blanked, never rendered)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return 0
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            return end + 1
    return 0
