"""The answer record: what an answer was, typed, and its one JSON form.

The same record is the body of `POST /api/ask` and `python -m answer --json`
(the public part) and a row of the audit log (everything). Reading goes
through `from_json`, which also reads rows written before findings carried
their claim number, so a log kept across upgrades still opens.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, TypeVar

from .draft import Draft, DraftClaim, Quote
from .findings import Finding
from .support import STATUSES, UNSUPPORTED
from .verify import QUOTE_KINDS, ROLES, Citation, Claim, QuoteCheck
from .written import Written, written_from_json, written_json

State = Literal["answered", "refused", "unverified"]
ANSWERED: State = "answered"
REFUSED: State = "refused"
UNVERIFIED: State = "unverified"
STATES: tuple[State, ...] = (ANSWERED, REFUSED, UNVERIFIED)

# What the visitor was given, in one word: an Answer (the only outcome with the badge), the passages that came
# closest when the gate was not sure they answer, or nothing from the docs (refused, or unverified text only).
Outcome = Literal["answer", "related", "refused"]
ANSWER: Outcome = "answer"
RELATED: Outcome = "related"
NO_ANSWER: Outcome = "refused"
OUTCOMES: tuple[Outcome, ...] = (ANSWER, RELATED, NO_ANSWER)

UnverifiedPolicy = Literal["hide", "refuse"]  # hide: show the state, text behind a toggle; refuse: no answer


def outcome_of(state: State, *, related: bool) -> Outcome:
    """The outcome of an answer in `state` whose shown claims are (`related`) or are not the closest passages only."""
    if state != ANSWERED:
        return NO_ANSWER
    return RELATED if related else ANSWER


# What the visitor is shown: an answer with its proof, one with something removed on the way, quotes that state
# different values (side by side, no badge of proof), a refusal, or unverified text behind a toggle.
Display = Literal["verified", "degraded", "disagree", "related", "refused", "unverified"]
VERIFIED: Display = "verified"
DEGRADED: Display = "degraded"
DISAGREE: Display = "disagree"
RELATED_PASSAGES: Display = "related"


def without_proof(policy: UnverifiedPolicy, *, model_unavailable: bool) -> State:
    """The state of an answer left with no verified claim: unverified (text behind a toggle), or a refusal under
    UNVERIFIED_POLICY=refuse, but never "not in the docs" when the model simply could not be reached."""
    return REFUSED if policy == "refuse" and not model_unavailable else UNVERIFIED


def display(state: State, *, degraded: bool, disagreement: bool, model_unavailable: bool,
            policy: UnverifiedPolicy = "hide", related: bool = False) -> Display:
    """What the visitor sees of an answer in `state`, under the server's policy (a logged answer may predate it)."""
    if state == ANSWERED:
        return DISAGREE if disagreement else RELATED_PASSAGES if related else DEGRADED if degraded else VERIFIED
    if state == UNVERIFIED and without_proof(policy, model_unavailable=model_unavailable) == UNVERIFIED:
        return "unverified"
    return "refused"


@dataclass(frozen=True)
class CheckedQuote:
    """The verifier's verdict on one proposed quote, with the provider's own citation when it sent one."""

    check: QuoteCheck
    provider: Mapping[str, object] | None = None


@dataclass(frozen=True)
class Attempt:
    """One generate + verify round, as the audit replays it."""

    feedback: tuple[Finding, ...] = ()  # the earlier attempt's findings this one was asked to fix
    raw: str = ""  # the generator's output as received
    draft: Draft | None = None  # None: the output could not be used (see `error`)
    error: str = ""
    reasons: tuple[str, ...] = ()  # why the generator refused, when it says
    quotes: tuple[CheckedQuote, ...] = ()  # one per proposed quote, in draft order
    findings: tuple[Finding, ...] | None = None  # None: not recorded (rows written before they were)
    used: bool = False  # the answer was built from this attempt (the best one, not necessarily the last)


@dataclass(frozen=True)
class Source:
    """One retrieved chunk as the answer saw it: its hash tells later readers whether it changed since."""

    handle: str
    id: str
    title: str
    url: str
    heading_path: tuple[str, ...]
    doc_version: str
    hash: str
    text: str = ""  # kept in the audit log only
    score: float = 0.0


@dataclass(frozen=True)
class AnswerRecord:
    answer_id: str
    question: str
    state: State
    claims: tuple[Claim, ...] = ()
    retrieved: tuple[Source, ...] = ()
    viewer_groups: tuple[str, ...] = ()  # sorted
    degraded: bool = False
    model_unavailable: bool = False
    generator: str = ""
    created: float = 0.0
    problems: tuple[Finding, ...] = ()
    hidden: tuple[str, ...] = ()  # unverified claim texts
    attempts: tuple[Attempt, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    quotes_total: int = 0
    quotes_verbatim: int = 0
    phantoms: int = 0
    disagreement: bool = False  # the quoted sources state different values: shown side by side, not as verified
    request_id: str = ""  # the HTTP request that asked, as the server's log lines and response header name it
    related: bool = False  # the claims are the closest passages, not an answer (no badge)
    confidence: float | None = None  # the gate's confidence that its direct answer answers
    written: Written | None = None  # the model's short answer over the shown quotes, checked sentence by sentence
    unmentioned: tuple[str, ...] = ()  # not an Answer: the question's words no section found mentions

    @property
    def outcome(self) -> Outcome:
        return outcome_of(self.state, related=self.related)


# -- to JSON ------------------------------------------------------------------------------------------


def to_json(record: AnswerRecord, *, full: bool = False) -> dict[str, object]:
    """The JSON form; `full` adds what only the audit log keeps (chunk text, drafts, findings, timings)."""
    data: dict[str, object] = {
        "answer_id": record.answer_id,
        "question": record.question,
        "state": record.state,
        "outcome": record.outcome,
        "degraded": record.degraded,
        "model_unavailable": record.model_unavailable,
        "disagreement": record.disagreement,
        "generator": record.generator,
        "claims": [claim_json(c) for c in record.claims],
        "retrieved": [_source_json(s, full=full) for s in record.retrieved],
        "created": record.created,
    }
    if record.unmentioned:
        data["unmentioned"] = list(record.unmentioned)
    if record.written is not None:
        data["written"] = written_json(record.written, full=full)
    if full:
        data |= {
            "problems": [finding_json(f) for f in record.problems],
            "hidden": list(record.hidden),
            "drafts": [attempt_json(a) for a in record.attempts],
            "timings": dict(record.timings),
            "viewer_groups": list(record.viewer_groups),
            "quotes_total": record.quotes_total,
            "quotes_verbatim": record.quotes_verbatim,
            "phantoms": record.phantoms,
            "request_id": record.request_id,
            "confidence": record.confidence,
        }
    return data


def claim_json(claim: Claim) -> dict[str, object]:
    return {"text": claim.text, "status": claim.status, "role": claim.role, "stitched": claim.stitched,
            "reasons": list(claim.reasons),
            "citations": [asdict(c) | {"heading_path": list(c.heading_path)} for c in claim.citations]}


def finding_json(finding: Finding) -> dict[str, object]:
    return {"text": finding.text, "claim": finding.claim}


def attempt_json(attempt: Attempt) -> dict[str, object]:
    """One attempt as stored (and as the audit page shows it raw)."""
    data: dict[str, object] = {"raw": attempt.raw, "feedback": [finding_json(f) for f in attempt.feedback],
                               "used": attempt.used}
    if attempt.draft is not None:
        data["draft"] = attempt.draft.to_dict()
    if attempt.error:
        data["error"] = attempt.error
    if attempt.reasons:
        data["reasons"] = list(attempt.reasons)
    if attempt.draft is not None:
        data["quotes"] = [asdict(q.check) | ({"provider": dict(q.provider)} if q.provider else {}) for q in attempt.quotes]
    if attempt.findings is not None:
        data["problems"] = [finding_json(f) for f in attempt.findings]
    return data


def _source_json(source: Source, *, full: bool) -> dict[str, object]:
    data: dict[str, object] = {"handle": source.handle, "id": source.id, "title": source.title, "url": source.url,
                            "heading_path": list(source.heading_path), "doc_version": source.doc_version,
                            "hash": source.hash}
    return data | ({"text": source.text, "score": round(source.score, 4)} if full else {})


# -- from JSON ----------------------------------------------------------------------------------------

_CITATION_FIELDS = frozenset(f.name for f in fields(Citation))
_CHECK_FIELDS = frozenset(f.name for f in fields(QuoteCheck))
_LEGACY_CLAIM_NO = re.compile(r"^claim (\d+)\b")


def from_json(data: Mapping[str, Any]) -> AnswerRecord:
    """A record from its JSON form, current or as older versions wrote it."""
    return AnswerRecord(
        answer_id=str(data.get("answer_id", "")),
        question=str(data.get("question", "")),
        state=_state(data.get("state")),  # an unknown state shows nothing
        claims=tuple(_claim(c) for c in data.get("claims") or []),
        retrieved=tuple(_source(r) for r in data.get("retrieved") or []),
        viewer_groups=tuple(str(g) for g in data.get("viewer_groups") or ()),
        degraded=bool(data.get("degraded")),
        model_unavailable=bool(data.get("model_unavailable")),
        disagreement=bool(data.get("disagreement")),
        generator=str(data.get("generator", "")),
        created=float(data.get("created") or 0.0),
        problems=_findings(data.get("problems")),
        hidden=tuple(str(t) for t in data.get("hidden") or ()),
        attempts=tuple(_attempt(d) for d in data.get("drafts") or []),
        timings={str(k): float(v) for k, v in (data.get("timings") or {}).items()},
        quotes_total=int(data.get("quotes_total") or 0),
        quotes_verbatim=int(data.get("quotes_verbatim") or 0),
        phantoms=int(data.get("phantoms") or 0),
        request_id=str(data.get("request_id") or ""),
        # Rows written before outcomes were recorded: an answered row was an Answer.
        related=data.get("outcome") == RELATED,
        confidence=float(data["confidence"]) if isinstance(data.get("confidence"), (int, float)) else None,
        written=written_from_json(data.get("written")),
        unmentioned=tuple(str(w) for w in data.get("unmentioned") or () if isinstance(w, str)),
    )


_Word = TypeVar("_Word", bound=str)


def _one_of(value: object, known: tuple[_Word, ...], default: _Word) -> _Word:
    """`value` when it is one of the `known` words, else `default`."""
    return next((word for word in known if word == value), default)


def _state(value: object) -> State:
    return _one_of(value, STATES, REFUSED)  # an unknown state reads as a refusal: it shows nothing


def _claim(data: Mapping[str, Any]) -> Claim:
    # An unknown status reads as unsupported (never shown), an unknown role as not yet judged.
    return Claim(text=str(data["text"]), status=_one_of(data["status"], STATUSES, UNSUPPORTED),
                 stitched=bool(data.get("stitched")), reasons=tuple(data.get("reasons") or ()),
                 role=_one_of(data.get("role", ""), ROLES, ""),
                 citations=tuple(_citation(c) for c in data.get("citations") or []))


def _citation(data: Mapping[str, Any]) -> Citation:
    known = {k: v for k, v in data.items() if k in _CITATION_FIELDS}
    return Citation(**known | {"heading_path": tuple(data.get("heading_path") or ())})


def _source(data: Mapping[str, Any]) -> Source:
    return Source(handle=str(data.get("handle", "")), id=str(data.get("id", "")), title=str(data.get("title", "")),
                  url=str(data.get("url", "")), heading_path=tuple(data.get("heading_path") or ()),
                  doc_version=str(data.get("doc_version", "")), hash=str(data.get("hash", "")),
                  text=str(data.get("text", "")), score=float(data.get("score") or 0.0))


def _findings(items: Any) -> tuple[Finding, ...]:
    return tuple(_finding(item) for item in items or ())


def _finding(item: Any) -> Finding:
    if isinstance(item, Mapping):
        claim = item.get("claim")
        return Finding(str(item.get("text", "")), int(claim) if claim is not None else None)
    # Rows written before findings were typed hold only the sentence; its claim number is its first words.
    text = str(item)
    match = _LEGACY_CLAIM_NO.match(text)
    return Finding(text, int(match.group(1)) if match else None)


def _attempt(data: Mapping[str, Any]) -> Attempt:
    draft_data = data.get("draft")
    draft = None
    if isinstance(draft_data, Mapping):
        draft = Draft(refused=bool(draft_data.get("refused")), raw=str(data.get("raw", "")), claims=tuple(
            DraftClaim(tuple(Quote(str(q.get("handle", "")), str(q.get("quote", ""))) for q in c.get("quotes") or []),
                       str(c.get("claim", "")))
            for c in draft_data.get("claims") or []))
    quotes = tuple(CheckedQuote(_check(q), q.get("provider")) for q in data.get("quotes") or [])
    return Attempt(feedback=_findings(data.get("feedback")), raw=str(data.get("raw", "")), draft=draft,
                   error=str(data.get("error", "")), reasons=tuple(str(r) for r in data.get("reasons") or ()),
                   quotes=quotes, findings=_findings(data["problems"]) if "problems" in data else None,
                   used=bool(data.get("used")))


def _check(data: Mapping[str, Any]) -> QuoteCheck:
    known = {k: v for k, v in data.items() if k in _CHECK_FIELDS}
    return QuoteCheck(**known | {"kind": _one_of(data.get("kind"), QUOTE_KINDS, "verified")})
