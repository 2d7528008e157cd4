"""Who is asking: the groups a reader belongs to decide which chunks exist for them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ingest.documents import PUBLIC


@dataclass(frozen=True)
class Viewer:
    """A reader's groups; every reader is in `public`."""

    groups: frozenset[str] = frozenset({PUBLIC})

    @classmethod
    def anonymous(cls) -> Viewer:
        return cls()

    @classmethod
    def of(cls, groups: Iterable[str]) -> Viewer:
        """A viewer in the given groups (blank names ignored), always including `public`.

        Only ASCII blanks are trimmed: `str.strip()` would also eat U+00A0 or
        U+0085 and turn `staff\xa0` into `staff`.
        """
        return cls(frozenset({PUBLIC, *(g.strip(" \t") for g in groups if g and g.strip(" \t"))}))

    def may_read(self, access: Iterable[str]) -> bool:
        """True when any group of the chunk's access list is one of the viewer's."""
        return any(group in self.groups for group in access)
