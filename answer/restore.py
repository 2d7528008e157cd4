"""A stored answer rebuilt for a reader from the live index: what a reloaded or shared thread shows.

It belongs to no log implementation: both logs hand back an `AnswerRecord`, and what may be shown from it
depends only on the live index and the reader.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.documents import Chunk
from retrieval.search import Hit, RetrievalSet
from retrieval.viewer import Viewer

from .contract.record import AnswerRecord
from .contract.result import Answer


def restore(record: AnswerRecord, viewer: Viewer, live: Sequence[Chunk]) -> Answer:
    """A stored answer rebuilt for `viewer` from the live index, for a reloaded or shared thread.

    Only chunks the live index still holds, readable by this viewer and with the
    hash the answer saw, come back as hits; citations are kept as recorded, so
    the web layer's resolve gate drops every one whose chunk did not come back
    (or whose quote no longer sits at its offsets): what the opener may not
    read, or what changed since, is never shown from the old record. The
    unverified text behind the toggle, the findings and the written answer are
    a model's own words about its sources, so they come back only when every
    source did.
    """
    current = {c.id: c for c in live if viewer.may_read(c.access)}
    hits = tuple(Hit(r.handle, current[r.id], 0.0) for r in record.retrieved
                 if r.id in current and current[r.id].hash == r.hash)
    whole = len(hits) == len(record.retrieved)
    rset = RetrievalSet(id=record.answer_id, question=record.question, viewer=viewer, hits=hits)
    return Answer(id=record.answer_id, question=record.question, state=record.state, claims=record.claims,
                  retrieval=rset, degraded=record.degraded, model_unavailable=record.model_unavailable,
                  generator=record.generator, created=record.created, disagreement=record.disagreement,
                  related=record.related, confidence=record.confidence, hidden=record.hidden if whole else (),
                  problems=record.problems if whole else (), written=record.written if whole else None,
                  unmentioned=record.unmentioned if whole else ())
