"""docs/design.mdx's folder map is checked against the tree: a new module left out, or one moved or deleted, fails.

The map is what a newcomer reads first to find where a thing lives; it drifted
(twelve modules missing, one that had moved) while nothing checked it.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO

PACKAGES = ("ingest", "retrieval", "answer", "web")
_SECTION = re.compile(r"^([a-z]+)/\s", re.M)
_MODULE = re.compile(r"(?<![\w/.])([a-z_][a-z0-9_]*\.py)\b")


def folder_map() -> dict[str, str]:
    """{top-level folder: its part of the map} from the ```text block under "## Folder map"."""
    text = (REPO / "docs" / "design.mdx").read_text(encoding="utf-8")
    block = text.split("## Folder map", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    starts = [(m.start(), m.group(1)) for m in _SECTION.finditer(block)]
    return {name: block[at:(starts[i + 1][0] if i + 1 < len(starts) else len(block))]
            for i, (at, name) in enumerate(starts)}


def modules(package: str) -> set[str]:
    """Every module file of a package, its subpackages' included (by file name)."""
    return {p.name for p in (REPO / package).rglob("*.py")
            if p.name not in ("__init__.py", "__main__.py") and "__pycache__" not in p.parts}


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_is_on_the_map_and_every_module_on_the_map_exists(package: str):
    section = folder_map()[package]
    named = set(_MODULE.findall(section))
    assert sorted(modules(package) - named) == [], f"modules of {package}/ missing from docs/design.mdx's folder map"
    assert sorted(named - modules(package)) == [], f"the folder map names {package}/ modules that do not exist"


def test_the_map_has_every_top_level_folder_of_the_design():
    assert set(PACKAGES) | {"content", "docs", "tests"} <= set(folder_map())
