"""The serving process's long-lived heap, kept out of the cyclic garbage collector's scans.

A replica holds the embedding model, its libraries and the served chunk table
for hours. CPython's full collection walks every tracked object each time, and
it stops every thread while it does: measured on a 10k-chunk replica, 574k
tracked objects and 0.34–0.46 s per full collection, growing with the index
(at 100k chunks the pauses reach seconds, the shape of the slowest queries
during a publish). None of those objects is ever garbage while the replica
serves, so walking them finds nothing.

`freeze_long_lived` moves every object alive now into the permanent
generation (`gc.freeze`), which collections skip. A frozen object is still
freed by reference counting the moment nothing refers to it, so a table
swapped out is released as before (a chunk, its headings and readers hold no
reference cycle); only a frozen object inside a reference cycle would stay.
So that nothing garbage is frozen, a collection runs first: a full one, but
over only what is not frozen yet (the permanent generation is never scanned),
so at a swap it walks the new table and what the ingest left behind, not the
model and its libraries again; an ingest's leftover reference cycles (parse
trees) are freed there instead of being frozen for the life of the process.
Called once the process is warm and again after each table swap
(`IndexSnapshot.on_swap`), so each new table leaves the scans too; request-time
garbage is collected as always.
"""

from __future__ import annotations

import gc
import sys

# How long a thread holding the interpreter runs before a waiting thread may take it (CPython's default: 5 ms).
SWITCH_INTERVAL = 0.0005


def freeze_long_lived() -> None:
    """Collect what is not frozen yet, then move every object still alive into the permanent generation."""
    gc.collect()
    gc.freeze()


def share_the_interpreter() -> None:
    """Let a query take the interpreter back within 0.5 ms while an ingest or a table refresh runs beside it.

    A query hands the interpreter lock back and forth many times (every numpy and torch call releases it)
    while a publish's work (parsing, the next table, its BM25 index) runs in pure Python in another thread.
    Each time the query wants the lock back it waits for the other thread's switch interval, 5 ms by
    default, so a query of many such calls is stretched many times over. Measured at 100k chunks during a
    1 % re-ingest, one run each: p95 5.1x -> 1.65x steady, queries over 1 s 4 -> 0 (docs/performance.mdx).
    """
    sys.setswitchinterval(SWITCH_INTERVAL)
