"""Public pages an author then breaks, each in one way that leaves its access unreadable (issue 26, items 2 and 3).

Each page is first indexed public; `break_all` rewrites its front matter into
one bad form, `fix_all` restores it. `LINES` is where ingest must point.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Broken:
    source: str
    title: str
    question: str
    fact: str
    mark: str  # the part of `fact` an answer quoting it must contain
    bad: str  # the front matter lines that replace `title: <title>`
    line: int  # the line ingest names

    @property
    def slug(self) -> str:
        return self.source.removesuffix(".mdx")

    @property
    def text(self) -> str:
        return f"---\ntitle: {self.title}\n---\n\n# {self.title}\n\n## Limits\n\n{self.fact}\n"


PAGES = (
    Broken("guides/quokka.mdx", "Quokka uploads", "How large may a quokka upload be?",
           "Quokka uploads may be at most 41 megabytes each.", "41 megabytes",
           "title: Quokka uploads\naccess: [team-x]\naccess: [public]", 4),  # a repeated key
    Broken("guides/narwhal.mdx", "Narwhal tokens", "When do narwhal tokens expire?",
           "Narwhal tokens expire after 19 minutes of inactivity.", "19 minutes",
           "title: Narwhal tokens\nAccess: [team-x]", 3),  # the wrong case
    Broken("guides/tapir.mdx", "Tapir reports", "When are tapir reports emailed?",
           "Tapir reports are emailed every Monday at 06:40 UTC.", "06:40 UTC",
           "title: Tapir reports\nacess: [team-x]", 3),  # a misspelling
    Broken("guides/gecko.mdx", "Gecko keys", "How often is the gecko signing key rotated?",
           "Gecko webhooks are signed with a key rotated every 73 days.", "73 days",
           "title: Gecko keys\naccess: {team-x: true}", 3),  # not a list of group names
    Broken("guides/ibis.mdx", "Ibis archives", "How are ibis archives compressed?",
           "Ibis archives are compressed with zstd at level 9.", "zstd at level 9",
           "title: [Ibis archives\naccess: [team-x]", 2),  # YAML that does not parse
)


def pages() -> dict[str, str]:
    """The pages as first published: public, parseable."""
    return {page.source: page.text for page in PAGES}


def break_all(site: Path) -> None:
    for page in PAGES:
        _replace(site / page.source, f"title: {page.title}", page.bad)


def fix_all(site: Path) -> None:
    for page in PAGES:
        _replace(site / page.source, page.bad, f"title: {page.title}")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise AssertionError(f"{old!r} not in {path}")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
