"""Moving a damaged store out of the way: renamed with a timestamp, never deleted, so it can still be salvaged."""

from __future__ import annotations

import time
from pathlib import Path


def set_aside(path: Path, *, companions: tuple[str, ...] = ()) -> Path:
    """Rename `path` (and `path` + each companion suffix, e.g. SQLite's -wal) to `<name>.damaged-<time>`; the new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    for suffix in companions:  # the companions first: a crash halfway leaves the main file where it was
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    path.rename(target)
    return target
