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

Between the two, a publish builds what is not frozen yet: the changed pages'
parse and the next table, millions of new objects at 100k chunks. Each time
they grow by a quarter, CPython runs a full collection over all of them (the
frozen heap no longer counts towards the quarter, so it comes often), and every
query waits for it: six of 0.3-0.5 s each in one 1 % re-ingest at 100k chunks.
`building()` holds full collections back while a publish builds; young
collections go on, so a request's short-lived garbage is freed as always, and
the one full collection at the swap walks it all once.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# How long a thread holding the interpreter runs before a waiting thread may take it (CPython's default: 5 ms).
SWITCH_INTERVAL = 0.0005


def freeze_long_lived() -> None:
    """Collect what is not frozen yet, then move every object still alive into the permanent generation."""
    gc.collect()
    gc.freeze()


# The oldest generation's threshold while a publish builds: full collections wait for the swap's own.
HELD_BACK = 1_000_000
_building = 0
_saved_threshold: tuple[int, int, int] = gc.get_threshold()
_building_lock = threading.Lock()


@contextmanager
def building() -> Iterator[None]:
    """Hold automatic full collections back while a publish builds objects that will live as long as the table.

    Nests and may be entered from several threads at once (an ingest's parse and the table refresh it wakes);
    the threshold is restored when the last one leaves, and `freeze_long_lived` at the swap collects once.
    """
    global _building, _saved_threshold
    with _building_lock:
        if _building == 0:
            _saved_threshold = gc.get_threshold()
            young, middle, _ = _saved_threshold
            gc.set_threshold(young, middle, HELD_BACK)
        _building += 1
    try:
        yield
    finally:
        with _building_lock:
            _building -= 1
            if _building == 0:
                gc.set_threshold(*_saved_threshold)


def share_the_interpreter() -> None:
    """Let a query take the interpreter back within 0.5 ms while an ingest or a table refresh runs beside it.

    A query hands the interpreter lock back and forth many times (every numpy and torch call releases it)
    while a publish's work (parsing, the next table, its BM25 index) runs in pure Python in another thread.
    Each time the query wants the lock back it waits for the other thread's switch interval, 5 ms by
    default, so a query of many such calls is stretched many times over. Measured at 100k chunks during a
    1 % re-ingest, one run each: p95 5.1x -> 1.65x steady, queries over 1 s 4 -> 0 (docs/performance.mdx).
    """
    sys.setswitchinterval(SWITCH_INTERVAL)
