"""`Answer`: what the pipeline produced for one question, and its record for the log and the API.

Its own module so that what keeps answers (the answer log) and what shows them (web/) name the type without
importing the pipeline that makes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from retrieval.search import RetrievalSet

from .findings import Finding
from .record import AnswerRecord, Attempt, Outcome, Source, State, outcome_of, to_json
from .verify import Claim
from .written import Written


@dataclass(frozen=True)
class Answer:
    """A verified answer: only claims that survived verification are in `claims`."""

    id: str
    question: str
    state: State
    claims: tuple[Claim, ...]
    retrieval: RetrievalSet
    degraded: bool = False  # something was removed or downgraded on the way
    problems: tuple[Finding, ...] = ()
    hidden: tuple[str, ...] = ()  # unverified claim texts: for the audit and behind a toggle, never shown as fact
    generator: str = ""
    attempts: tuple[Attempt, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    created: float = 0.0
    quotes_total: int = 0
    quotes_verbatim: int = 0
    phantoms: int = 0
    model_unavailable: bool = False  # the generator could not be reached at all (not a verdict on the docs)
    disagreement: bool = False  # the quoted sources state different values for the same thing: neither is verified
    request_id: str = ""  # the HTTP request that asked (its id is in the server's logs and its response header)
    related: bool = False  # the claims are the closest passages, not an answer: shown as Related passages, no badge
    confidence: float | None = None  # the gate's confidence that its direct answer answers (None: nothing passed)
    written: Written | None = None  # the model's short answer over the shown quotes (None: no writer, or not asked)
    unmentioned: tuple[str, ...] = ()  # not an Answer: the question's words no section found mentions

    @property
    def outcome(self) -> Outcome:
        """What the visitor was given: an Answer, Related passages, or nothing from the docs."""
        return outcome_of(self.state, related=self.related)

    def record(self) -> AnswerRecord:
        """What the answer was, detached from the live retrieval set: for the audit log and the JSON API."""
        return AnswerRecord(
            answer_id=self.id, question=self.question, state=self.state, claims=self.claims,
            retrieved=tuple(Source(h.handle, h.chunk.id, h.chunk.title, h.chunk.url, h.chunk.heading_path,
                                   h.chunk.doc_version, h.chunk.hash, h.chunk.text, round(h.score, 4)) for h in self.retrieval.hits),
            viewer_groups=tuple(sorted(self.retrieval.viewer.groups)), degraded=self.degraded,
            model_unavailable=self.model_unavailable, disagreement=self.disagreement, generator=self.generator,
            created=self.created, request_id=self.request_id, related=self.related, confidence=self.confidence,
            written=self.written, unmentioned=self.unmentioned,
            problems=self.problems, hidden=self.hidden, attempts=self.attempts, timings=self.timings,
            quotes_total=self.quotes_total, quotes_verbatim=self.quotes_verbatim, phantoms=self.phantoms)

    def to_dict(self, *, include_chunks: bool = False) -> dict[str, object]:
        """The JSON shape of `POST /api/ask` and `python -m answer --json` (the audit log's with `include_chunks`)."""
        return to_json(self.record(), full=include_chunks)
