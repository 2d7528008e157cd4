"""Units of measure: the one table of what "30 s", "5 MB" or "4 retries" measure, in which base.

Three readers compare amounts: the claim checker (a claim's "90 hours" is not
its quote's "90 days"), the gate's conflict finder ("30 s" in one section and
"60 seconds" in another state different values of one thing) and question
shape ("how many?" is not answered by "within 30 days", which measures). Each
had its own list; a unit added to one was missing from the others. It sits in
the lowest layer beside `text.py` so all of them import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

TIME, SIZE, RATE, SHARE, COUNT = "time", "size", "rate", "share", "count"
MEASURING = frozenset({TIME, SIZE})  # families that say how long or how big, never how many of a thing

_TABLE: tuple[tuple[str, float, str], ...] = (  # family, factor to the family's base, every spelling
    (TIME, 0.001, "ms millisecond milliseconds"),
    (TIME, 1, "s sec secs second seconds"),
    (TIME, 60, "min mins minute minutes"),
    (TIME, 3600, "h hr hrs hour hours"),
    (TIME, 86400, "d day days"),
    (TIME, 604800, "week weeks"),
    (TIME, 2592000, "month months"),
    (TIME, 31536000, "year years"),
    (SIZE, 1, "b byte bytes"),
    (SIZE, 1024, "kb kib"),
    (SIZE, 1024**2, "mb mib"),
    (SIZE, 1024**3, "gb gib"),
    (SIZE, 1024**4, "tb"),
    (RATE, 1, "rps qps"),
    (SHARE, 1, "% percent"),
    (COUNT, 1, "times attempts retries"),
)

UNITS: Mapping[str, tuple[str, float]] = MappingProxyType(
    {name: (family, factor) for family, factor, names in _TABLE for name in names.split()})


def spellings(*families: str) -> tuple[str, ...]:
    """Every spelling of the units of these families (all families when none is named), longest first."""
    wanted = set(families) or {family for family, _, _ in _TABLE}
    return tuple(sorted((n for n, (f, _) in UNITS.items() if f in wanted), key=lambda n: (-len(n), n)))
