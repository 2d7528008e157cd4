"""Answers written straight into an answer log, for the content-gap report's tests and its benchmark.

A refusal here is what the pipeline stores for one: the question, the
retrieval set it looked at (as the asker's groups saw it) and the findings
that say why nothing answered; no generator or retriever runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from answer.contract.findings import Finding
from answer.contract.record import State
from answer.contract.result import Answer
from answer.log.protocol import AnswerLog
from ingest.documents import Chunk
from retrieval.search import Hit, RetrievalSet
from retrieval.viewer import Viewer

DAY = 86_400.0
_NUMBERS = itertools.count(1)


def refusal(question: str, *, created: float, chunks: Sequence[Chunk] = (), groups: Sequence[str] = (),
            state: State = "refused", reasons: Sequence[str] = ("the quote does not address the question closely enough",),
            answer_id: str | None = None, related: bool = False, unmentioned: Sequence[str] = ()) -> Answer:
    """An answer as the log stores it; `reasons` become the findings of a refusal, like the answer gate's.

    `related` (with state "answered"): an answer that showed only Related passages, for the same reasons;
    `unmentioned`: the question's words no section found uses.
    """
    number = next(_NUMBERS)
    viewer = Viewer.of(groups)
    hits = tuple(Hit(f"c{i}", chunk, 0.5) for i, chunk in enumerate(chunks, start=1))
    return Answer(id=answer_id or f"{number:016x}", question=question, state=state, claims=(),
                  retrieval=RetrievalSet(id=f"r{number}", question=question, viewer=viewer, hits=hits),
                  problems=tuple(Finding(f"not an answer: {r}") for r in reasons) if chunks else (),
                  generator="seeded", created=created, related=related, unmentioned=tuple(unmentioned))


def seed(audit: AnswerLog, answers: Sequence[Answer]) -> list[str]:
    """Write the answers into the log; their ids, in the order given."""
    for answer in answers:
        audit.record(answer)
    return [a.id for a in answers]
