"""What the audit page shows beyond the stored record: each drafted claim's outcome and why.

The record keeps every draft and the findings of the attempt that was used;
the findings of an earlier attempt are the feedback its retry was given, so
every attempt can say what happened to each of its claims.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from answer.contract.draft import Draft, DraftClaim, Quote
from answer.contract.findings import Finding
from answer.contract.record import AnswerRecord, Attempt, Source
from answer.contract.verify import Citation


@dataclass(frozen=True)
class Outcome:
    number: int
    text: str
    quotes: tuple[tuple[str, str], ...]  # (handle, quote) as the generator proposed them
    outcome: str  # supported / partial / not shown
    why: tuple[str, ...]


@dataclass(frozen=True)
class AttemptView:
    number: int
    error: str
    feedback: tuple[str, ...]
    outcomes: tuple[Outcome, ...]
    findings_known: bool
    used: bool = False  # the answer was built from this attempt
    refused_because: tuple[str, ...] = ()  # the generator's own reasons for refusing, when it gave any


@dataclass(frozen=True)
class Explanation:
    """Why the visitor got this outcome, in words a support person reads without the internals."""

    headline: str
    reasons: tuple[str, ...]  # the gate's findings, each with its figure in parentheses
    closest: tuple[str, ...]  # the best-scored sections found, "title › heading (score 1.05)"


CLOSEST_SHOWN = 3
_NOT_AN_ANSWER = "not an answer: "
HEADLINES = {
    "answer": "Shown as an Answer: the quoted passages were judged to answer the question.",
    "related": "Shown as Related passages: sections close to the question were found, but none was judged to "
               "answer it directly.",
    "refused": "Not in the docs: no section found answers the question.",
}
NOTHING_FOUND = "Not in the docs: no section of the docs matched the question."


def explain(record: AnswerRecord) -> Explanation:
    """The outcome in plain words, the reasons the gate gave, and the closest sections found with their scores."""
    reasons = [f.text.removeprefix(_NOT_AN_ANSWER) for f in record.problems]
    for attempt in record.attempts:
        if attempt.used:
            reasons += [r for r in attempt.reasons if r not in reasons]
    readable = [r for r in record.retrieved if r.id not in (RESTRICTED, DELETED)]
    ranked = sorted(readable, key=lambda r: -r.score)[:CLOSEST_SHOWN]
    closest = tuple(f"{_place(r)} (score {r.score:.2f})" for r in ranked)
    headline = NOTHING_FOUND if record.outcome == "refused" and not record.retrieved else HEADLINES[record.outcome]
    return Explanation(headline, tuple(dict.fromkeys(reasons)), closest)


def attempts(record: AnswerRecord) -> list[AttemptView]:
    """One entry per generator attempt, each claim with its verification outcome and the findings about it."""
    shown = {c.text: c for c in record.claims}
    out: list[AttemptView] = []
    for i, attempt in enumerate(record.attempts):
        findings, known = _findings_of(record, i)
        outcomes = []
        for n, claim in enumerate(attempt.draft.claims if attempt.draft is not None else (), start=1):
            final = shown.get(claim.text)
            why = tuple(f.text for f in findings if f.claim == n) if known else ()
            if final is not None:
                why += final.reasons
            outcomes.append(Outcome(n, claim.text, tuple((q.handle, q.text) for q in claim.quotes),
                                    final.status if final is not None else "not shown", why))
        out.append(AttemptView(i + 1, attempt.error, tuple(f.text for f in attempt.feedback), tuple(outcomes), known,
                               attempt.used, attempt.reasons))
    return out


def _findings_of(record: AnswerRecord, i: int) -> tuple[tuple[Finding, ...], bool]:
    """The findings about attempt `i`, and whether they are known (old records did not store them per attempt)."""
    attempt = record.attempts[i]
    if attempt.findings is not None:  # recorded per attempt by the pipeline: exact, nothing to infer
        return attempt.findings, True
    if i + 1 < len(record.attempts):  # the retry was given them as feedback
        return record.attempts[i + 1].feedback, True
    # a retry whose stored findings equal its own feedback means the first attempt was kept
    return record.problems, not (i and record.problems == attempt.feedback)


def _place(source: Source) -> str:
    heading = source.heading_path[-1] if source.heading_path else ""
    return source.title if heading in ("", source.title) else f"{source.title} › {heading}"


# -- what a staff reader may see of an answer given to someone else (which sources: `answer.reports.readable`) ------

RESTRICTED = "restricted source"
RESTRICTED_WHY = "Your groups may not read this source."
DELETED = "deleted source"
DELETED_WHY = "Deleted from the docs since this answer; what it said is no longer shown."
WITHHELD = "withheld: this attempt saw sources your groups may not read"
WITHHELD_DELETED = "withheld: this attempt saw sources deleted from the docs since"
WITHHELD_QUESTION = "withheld: this answer used sources your groups may not read"
WITHHELD_DELETED_QUESTION = "withheld: this answer used sources deleted from the docs since"


def redact(record: AnswerRecord, readable: set[str], deleted: set[str] | frozenset[str] = frozenset()) -> AnswerRecord:
    """The record with everything drawn from unreadable sources replaced by a placeholder, same shape.

    A source in `deleted` (in the index for no group any more) says so: it is
    withheld like a restricted one (a page taken down is taken out of past
    answers too), but support staff are not told it is restricted when it is gone.

    Retrieved chunks and citations the reader may not read lose id, title, URL
    and text. A generator that saw such a chunk may have put its words
    anywhere, so when one was retrieved, only shown claims whose every
    citation is readable keep their text, proposed quotes are kept only when
    they are verbatim in a readable chunk, and the question, raw output,
    findings, feedback and unverified text are withheld (the answer lists and
    the gap report do not show such an answer at all).
    """
    if all(r.handle in readable for r in record.retrieved):
        return record
    texts = [r.text for r in record.retrieved if r.handle in readable]
    gone = {r.handle for r in record.retrieved if r.handle not in readable} <= deleted
    note = WITHHELD_DELETED if gone else WITHHELD

    def label(handle: str) -> str:
        return DELETED if handle in deleted else RESTRICTED

    claims = tuple(claim if all(c.handle in readable for c in claim.citations) else
                   replace(claim, text=DELETED if {c.handle for c in claim.citations} - readable <= deleted
                           else RESTRICTED, reasons=(),
                           citations=tuple(_withheld_citation(c, label(c.handle)) for c in claim.citations))
                   for claim in record.claims)
    allowed = {c.text for c in claims if c.text not in (RESTRICTED, DELETED)}
    return replace(
        record,
        # the lists hide this answer whole: its question may name what it found
        question=WITHHELD_DELETED_QUESTION if gone else WITHHELD_QUESTION,
        retrieved=tuple(r if r.handle in readable else _withheld_source(r.handle, r.handle in deleted)
                        for r in record.retrieved),
        claims=claims,
        written=None,  # the model's words about sources the reader may not read: withheld with the question
        attempts=tuple(_redact_attempt(a, readable, texts, allowed, deleted, gone) for a in record.attempts),
        problems=_withheld(record.problems, note),  # findings quote the generator's text
        hidden=(note,) if record.hidden else (),
    )


def _withheld(findings: tuple[Finding, ...], note: str) -> tuple[Finding, ...]:
    return (Finding(note),) if findings else ()


def _withheld_source(handle: str, deleted: bool) -> Source:
    label, why = (DELETED, DELETED_WHY) if deleted else (RESTRICTED, RESTRICTED_WHY)
    return Source(handle, label, label, "", (), "", "", why)


def _withheld_citation(citation: Citation, label: str) -> Citation:
    return Citation(handle=citation.handle, chunk_id=label, quote=label, start=0, end=0, url="", page_url="",
                    title=label, heading_path=(), doc_version="", hash="")


def _redact_attempt(attempt: Attempt, readable: set[str], texts: list[str], allowed: set[str],
                    deleted: set[str] | frozenset[str], gone: bool) -> Attempt:
    def quoted(q: Quote) -> str:
        if q.handle in readable and any(q.text in t for t in texts):
            return q.text
        return DELETED if q.handle in deleted else RESTRICTED

    draft = None
    if attempt.draft is not None:
        draft = Draft(refused=attempt.draft.refused, claims=tuple(
            DraftClaim(tuple(Quote(q.handle, quoted(q)) for q in claim.quotes),
                       claim.text if claim.text in allowed else DELETED if gone else RESTRICTED)
            for claim in attempt.draft.claims))
    note = WITHHELD_DELETED if gone else WITHHELD
    return Attempt(feedback=_withheld(attempt.feedback, note), draft=draft, error=note if attempt.error else "",
                   findings=None if attempt.findings is None else _withheld(attempt.findings, note))
