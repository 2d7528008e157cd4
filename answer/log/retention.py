"""How long the answer log keeps answers: by age and by count, so anonymous traffic cannot fill the disk.

Every answer costs ~10 KB in the log (its whole retrieval set is kept for the
audit view). The log prunes itself as it is written, every few writes, and a
pruned answer takes its thread turns, feedback and cached question vector
with it in the same transaction, so nothing ever points at an answer that is gone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DAY = 86_400.0
PRUNE_EVERY = 100  # answer writes between two prunes: a prune is a few indexed deletes
_TERM = re.compile(r"^(\d+)(d?)$")


@dataclass(frozen=True)
class Retention:
    """Keep answers at most `days` old and at most `answers` of them (None: no bound of that kind)."""

    days: float | None = 90.0
    answers: int | None = 20_000

    def __str__(self) -> str:
        terms = ([f"{self.days:g}d"] if self.days is not None else []) + ([str(self.answers)] if self.answers else [])
        return ",".join(terms) or "off"


DEFAULT_RETENTION = Retention()
NO_RETENTION = Retention(days=None, answers=None)


def parse_retention(text: str) -> Retention:
    """`90d,20000` (days and a number of answers, either may be left out) or `off`."""
    value = text.strip().lower()
    if value in ("off", "none"):
        return NO_RETENTION
    days: float | None = None
    answers: int | None = None
    for term in filter(None, re.split(r"[\s,]+", value)):
        match = _TERM.match(term)
        if match is None or int(match.group(1)) == 0:
            raise ValueError(f"LOG_RETENTION must be days and/or a number of answers like '90d,20000', or 'off'; "
                             f"got {text!r} (the term {term!r} is not a positive 'Nd' or 'N')")
        if match.group(2):
            days = float(match.group(1))
        else:
            answers = int(match.group(1))
    if days is None and answers is None:
        raise ValueError(f"LOG_RETENTION must be days and/or a number of answers like '90d,20000', or 'off'; got {text!r}")
    return Retention(days=days, answers=answers)
