"""Which parts of a stored answer a reader may see now: the one rule the audit view and the gap report share.

An answer was given to someone else, under their groups, from the index as it
was then; what it retrieved may since have been restricted, deleted or
changed. The rule below decides, per retrieved chunk, from the live index as
the reader may read it now. The audit view redacts what fails it; lists of
answers (the audit search, the content-gap report) show only answers whose
every retrieved chunk passes it.
"""

from __future__ import annotations

from collections.abc import Iterable

from retrieval.protocols import StoreReader

from ..contract.record import AnswerRecord


def readable_handles(record: AnswerRecord, groups: frozenset[str], live: dict[str, str]) -> set[str]:
    """Handles of the record's retrieved chunks the reader may read now.

    `live` maps id → hash of what the live index lets the reader read. A chunk
    is readable only when the live index still holds it for the reader: a
    re-ingest that restricted or deleted a page takes it out of every past
    answer too, even one asked by a subset of the reader's groups. An answer
    given to other groups also needs the hash it saw (its text may predate an
    access change); anything else is unknown, and unknown is restricted.
    """
    asked_within = set(record.viewer_groups) <= groups  # the reader could read everything it saw, then
    return {r.handle for r in record.retrieved if r.id in live and (asked_within or live[r.id] == r.hash)}


def needs_lookup(record: AnswerRecord) -> list[str]:
    """Chunk ids whose live access decides what the reader sees: all of them, whoever asked."""
    return [r.id for r in record.retrieved if r.id]


def live_hashes(store: StoreReader, groups: frozenset[str], ids: Iterable[str]) -> dict[str, str]:
    """id → hash of the given chunks the reader may read in the live index (one lookup for many answers)."""
    wanted = sorted(set(ids))
    return {c.id: c.hash for c in store.chunks(groups=sorted(groups), ids=wanted)} if wanted else {}


def deleted_handles(store: StoreReader, record: AnswerRecord) -> set[str]:
    """Handles of the record's retrieved chunks no longer in the index for any group: deleted since, not restricted."""
    ids = needs_lookup(record)
    present = {c.id for c in store.chunks(ids=sorted(set(ids)))} if ids else set()
    return {r.handle for r in record.retrieved if r.id and r.id not in present}


def fully_readable(record: AnswerRecord, groups: frozenset[str], live: dict[str, str]) -> bool:
    """True when the reader may read every chunk the answer retrieved: the answer may be listed for them."""
    return len(readable_handles(record, groups, live)) == len(record.retrieved)
