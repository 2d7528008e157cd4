"""Question → retrieval → draft → verify (retry once) → Answer → audit log.

The policy of the grounding contract lives here: empty retrieval refuses
without calling a model; a draft with problems is retried once with the
verifier's findings appended; after that, only supported and partial claims
are shown and the answer is marked degraded; with nothing left it is
`unverified` (text kept for the audit, shown only behind an "unverified" toggle) or a refusal.

A generator that streams hands over each claim as soon as it is written
whole; the claim is verified and gated on its own and, if it passes, shown at
once. What is shown is never taken back: later claims (and a retry's) are
judged beside it, after it.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeAlias, get_args

from retrieval.search import RetrievalSet
from retrieval.viewer import Viewer

from .contract.draft import Draft, PartialClaim
from .contract.findings import Finding
from .contract.record import (
    ANSWERED,
    REFUSED,
    Attempt,
    CheckedQuote,
    State,
    UnverifiedPolicy,
    without_proof,
)
from .contract.result import Answer
from .contract.support import SUPPORTED, SupportChecker
from .contract.verify import SUPPORTING, Claim, Verification, verify
from .contract.written import Writer, Written
from .errors import AnswerLogDamagedError, DraftFormatError, GeneratorError
from .gate import AnswerGate
from .generate import Generator as DraftGenerator
from .generate import StreamingGenerator
from .request_id import REQUEST_ID

log = logging.getLogger(__name__)


class Retriever(Protocol):
    def search(
        self, question: str, viewer: Viewer, *, k: int | None = None, version: str | None = None
    ) -> RetrievalSet: ...


class Recorder(Protocol):
    """Where a finished answer is kept (the answer log, log/protocol.py); all the pipeline needs of it."""

    def record(self, answer: Answer) -> None: ...


@dataclass(frozen=True)
class Retrieved:
    """The sections found for the question: their titles can be shown while the answer is written."""

    retrieval: RetrievalSet


@dataclass(frozen=True)
class Shown:
    """A claim verified and on point: shown now, never taken back."""

    claim: Claim


@dataclass(frozen=True)
class Writing:
    """The quotes are all on the page; the model is now wording them (written.py)."""


@dataclass(frozen=True)
class Done:
    """The finished answer, already logged."""

    answer: Answer


# One step of an answer as it is produced, for progressive rendering: retrieved, then each claim, then done.
Event: TypeAlias = Retrieved | Shown | Writing | Done


class Answerer:
    """Wires a retriever, a generator and the verifier into the answer policy."""

    def __init__(
        self,
        retriever: Retriever,
        generator: DraftGenerator,
        *,
        checker: SupportChecker | None = None,
        audit: Recorder | None = None,
        retry: bool = True,
        unverified_policy: UnverifiedPolicy = "hide",
        judge: AnswerGate | None = None,
        stream: bool = True,
        observers: Sequence[Callable[[Answer], None]] = (),
        writer: Writer | None = None,
    ) -> None:
        if unverified_policy not in get_args(UnverifiedPolicy):  # typed, but a library caller may not be checked
            raise ValueError(f"unverified_policy must be 'hide' or 'refuse', got {unverified_policy!r}")
        self.retriever = retriever
        self.generator = generator
        self.checker = checker
        self.audit = audit
        self.retry = retry
        self.unverified_policy = unverified_policy
        self.stream = stream  # a generator that can stream has its claims shown as each is verified
        self.observers = list(observers)  # told of every finished answer after it is logged (metrics); never fail it
        self.writer = writer  # a chat model that words an Answer's shown quotes (written.py); never changes the proof
        # The answer gate applies to every generator; the extractive one brings its own.
        self.judge = judge if judge is not None else getattr(generator, "judge", None)

    def ask(self, question: str, viewer: Viewer, *, version: str | None = None) -> Answer:
        *_, last = self.events(question, viewer, version=version)
        assert isinstance(last, Done)
        return last.answer

    def _search(self, question: str, viewer: Viewer, version: str | None) -> RetrievalSet:
        """This viewer's retrieval; the docs version the reader is browsing is a preference, not a filter."""
        return self.retriever.search(question, viewer, version=version) if version else self.retriever.search(question, viewer)

    def likelier(self, readings: Sequence[str], viewer: Viewer, *, version: str | None = None) -> str:
        """Of a follow-up's readings (followup.rewrite), the one whose search the gate answers most surely.

        Each reading is searched for this viewer and the gate picks from what it found, as the extractive
        generator drafts; nothing is shown or logged. A reading the gate answers beats one it does not, a
        surer answer beats a less sure one, and on a tie (no gate, or no answer at all) the first reading wins.
        """
        judge = self.judge
        if judge is None or len(readings) < 2:
            return readings[0]

        def sureness(reading: str) -> tuple[bool, float]:
            rset = self._search(reading, viewer, version)
            asked = judge.question(rset.question)
            chosen, _ = judge.pick(asked, rset)
            if not chosen:
                return (False, 0.0)
            sure = judge.sure(asked, chosen[0], rset)
            return (sure >= judge.confidence.answer_at, sure)  # below the line it would be Related, not an Answer

        try:
            scored = [sureness(r) for r in readings]
        except Exception:  # choosing is extra: a failed search here costs the choice, never the visitor's turn
            log.exception("weighing the readings of a follow-up failed; searching it as typed")
            return readings[0]
        return readings[max(range(len(readings)), key=lambda i: (scored[i], -i))]

    def events(self, question: str, viewer: Viewer, *, version: str | None = None) -> Iterator[Event]:
        """Retrieved titles first, then each verified claim, then the finished answer."""
        started = time.perf_counter()
        timings: dict[str, float] = {}
        rset = self._search(question, viewer, version)
        timings["retrieve"] = round(time.perf_counter() - started, 4)
        yield Retrieved(rset)
        if not rset:
            answer = self._finish(rset, REFUSED, (), Verification(claims=()), [], timings, started, degraded=False)
            yield Done(answer)
            return

        attempts: list[Attempt] = []
        # With a streaming generator, each claim goes on the page as soon as it is verified and on point;
        # `committed` holds those (across attempts: a retry may add claims, never take one back).
        committed: list[tuple[Claim, int]] | None = [] if self.stream and isinstance(self.generator, StreamingGenerator) else None
        first = yield from self._round(rset, viewer, (), attempts, timings, committed)
        rounds, verification, unreachable = [first], first.verification, first.unreachable
        # One retry with the verifier's findings; a model that is down (already retried at the
        # transport level) gets none, and a clean refusal needs none.
        if self.retry and not unreachable and not verification.clean and not (verification.refused and not verification.claims):
            feedback = verification.problems + kept(verification)
            rounds.append((yield from self._round(rset, viewer, feedback, attempts, timings, committed)))
        # The answer is built from the best draft, not the last: a retry that refuses or does worse never
        # erases what the first draft got verified. A round holding every streamed claim comes first.
        used = max(range(len(rounds)), key=lambda i: (rounds[i].streamed, rounds[i].drafted, rounds[i].score, i))
        verification, shown, off_topic = rounds[used].verification, rounds[used].shown, rounds[used].off_topic
        disagreement, related, sure = rounds[used].disagree, rounds[used].related, rounds[used].confidence
        for n in {used, *(attempt for _, attempt in committed or ())}:
            attempts[n] = replace(attempts[n], used=True)
        for claim in shown[rounds[used].streamed:]:
            yield Shown(claim)

        state: State
        if shown:
            degraded = verification.removed_anything
            state = ANSWERED
        elif verification.shown:  # verified quotes, none of them answering: related sections, not an answer
            state, degraded = REFUSED, False
        elif verification.claims or verification.dropped_claims or unreachable or _unusable(attempts):
            state = without_proof(self.unverified_policy, model_unavailable=unreachable)
            degraded = True
        else:
            state, degraded = REFUSED, False
            # A generator that refused on the evidence says why (the extractive one gives the gate's reasons).
            off_topic += tuple(Finding(f"not an answer: {r}") for r in attempts[used].reasons)
        related = related and bool(shown)
        draft = attempts[used].draft
        # Nothing shown, or only the closest passages: the visitor is told which of their words no section found
        # mentions, if that is why (the gate's test, whichever generator drafted).
        unmentioned: tuple[str, ...] = ()
        if related or not shown:
            unmentioned = draft.unmentioned if draft is not None else ()
            if not unmentioned and self.judge is not None and rset.hits:
                unmentioned = self.judge.unmentioned(self.judge.question(rset.question), rset)
        written = None
        if self.writer is not None and state == ANSWERED and not related:
            # The quotes are on the page already; the written answer comes after them and never changes the
            # outcome (a 1.5B model asked to say when the quotes do not answer said so for 6 answers that held
            # the gold quote out of 7: docs/llm.mdx, Written answers).
            yield Writing()
            began = time.perf_counter()
            try:
                written = self.writer.write(rset.question, shown)
            except Exception as exc:  # a written answer is extra: its failure never costs the visitor the proof
                log.exception("the written answer for retrieval %s failed", rset.id)
                written = Written(error=f"{type(exc).__name__}: {str(exc)[:200]}")
            timings["write"] = round(time.perf_counter() - began, 4)
        answer = self._finish(rset, state, shown, verification, attempts, timings, started, degraded=degraded,
                              unreachable=unreachable, off_topic=off_topic, disagreement=disagreement and bool(shown),
                              related=related, confidence=sure, written=written, unmentioned=unmentioned)
        yield Done(answer)

    def _round(
        self, rset: RetrievalSet, viewer: Viewer, feedback: tuple[Finding, ...], attempts: list[Attempt],
        timings: dict[str, float], committed: list[tuple[Claim, int]] | None,
    ) -> Generator[Event, None, Round]:
        """One attempt through the gate. Streaming (`committed` given), each claim is yielded as soon as it is
        verified and kept beside those already on the page, and appended to `committed`."""
        if committed is None:
            verification, unreachable = self._attempt(rset, viewer, feedback, attempts, timings)
            return replace(self._gate(rset, verification, timings), unreachable=unreachable)
        number, inherited = len(attempts) + 1, len(committed)
        started = time.perf_counter()
        draft, error = yield from self._stream(rset, viewer, feedback, committed, timings, number)
        timings[f"generate_{number}"] = round(time.perf_counter() - started, 4)
        if draft is None:
            assert error is not None
            verification, unreachable = self._unusable_draft(error, feedback, attempts)
        else:
            verification, unreachable = self._verify(draft, rset, viewer, feedback, attempts, timings, number, error), False
        gated = self._gate(rset, verification, timings, [c for c, _ in committed])
        # Claims already on the page and a retry that produced nothing: the retry never wins the tie.
        return replace(gated, unreachable=unreachable, inherited=inherited, drafted=draft is not None or not committed)

    def _stream(
        self, rset: RetrievalSet, viewer: Viewer, feedback: tuple[Finding, ...], committed: list[tuple[Claim, int]],
        timings: dict[str, float], number: int,
    ) -> Generator[Event, None, tuple[Draft | None, DraftFormatError | GeneratorError | None]]:
        """Read a streaming draft, showing each claim that verifies and passes the gate; the draft and any error.

        A stream cut off after some claims leaves those claims as the draft (the error is kept for the audit).
        """
        assert isinstance(self.generator, StreamingGenerator)
        started = time.perf_counter()
        partial: list[PartialClaim] = []
        try:
            for item in self.generator.draft_stream(rset.question, rset, feedback=tuple(f.text for f in feedback)):
                if isinstance(item, Draft):
                    return item, None
                partial.append(item)
                claim = self._commit(rset, viewer, item, [c for c, _ in committed])
                if claim is not None:
                    committed.append((claim, number - 1))
                    if "first_claim" not in timings:  # shown, against when the model had finished writing it
                        timings["first_claim"] = round(time.perf_counter() - started, 4)
                        timings["first_claim_written"] = item.written
                    yield Shown(claim)
        except (DraftFormatError, GeneratorError) as exc:
            log.warning("draft %d for retrieval %s broke off: %s", number, rset.id, exc)
            if not partial:
                return None, exc
            return Draft(refused=False, claims=tuple(p.claim for p in partial), raw=exc.raw, shown=partial[0].shown), exc
        return None, GeneratorError(f"{getattr(self.generator, 'name', 'the generator')} ended its stream without a draft")

    def _commit(self, rset: RetrievalSet, viewer: Viewer, item: PartialClaim, shown: list[Claim]) -> Claim | None:
        """A streamed claim as it goes on the page: verified, new, and kept by the gate beside those already there."""
        single = verify(Draft(refused=False, claims=(item.claim,), shown=item.shown), rset, viewer, checker=self.checker)
        if not single.shown or _repeats(single.shown[0], shown):
            return None
        if self.judge is None:
            return single.shown[0]
        judgement = self.judge.judge(rset.question, [*shown, single.shown[0]], rset, committed=len(shown))
        if not judgement.answered:
            # Only an answer streams: the closest passages are shown when the draft is whole, as Related passages.
            # Committed, one would be judged later as an answer already on the page (the gate judges what follows).
            return None
        return judgement.claims[-1] if len(judgement.claims) > len(shown) else None

    def _gate(self, rset: RetrievalSet, verification: Verification, timings: dict[str, float],
              shown: list[Claim] | None = None) -> Round:
        """The answer gate on one attempt's verified claims: verified is not enough, they must answer the question.

        `shown`: claims already on the page; they stay first, and the attempt's other claims are judged after them.
        """
        on_page = shown or []
        claims = (*on_page, *(c for c in verification.shown if not _repeats(c, on_page)))
        if not claims or self.judge is None:
            return Round(verification, claims, streamed=len(on_page))
        started = time.perf_counter()
        judgement = self.judge.judge(rset.question, claims, rset, committed=len(on_page))
        timings["judge"] = round(timings.get("judge", 0.0) + time.perf_counter() - started, 4)
        if verification.closest and judgement.claims:  # the generator found no answer: what it offers is related
            judgement = replace(judgement, claims=tuple(replace(c, role=SUPPORTING) for c in judgement.claims),
                                related=True, confidence=None)
        return Round(verification, judgement.claims,
                     judgement.set_aside + tuple(Finding(f"not an answer: {r}") for r in judgement.reasons),
                     disagree=judgement.disagree, streamed=len(on_page), related=judgement.related,
                     confidence=judgement.confidence)

    def _attempt(
        self, rset: RetrievalSet, viewer: Viewer, feedback: tuple[Finding, ...], attempts: list[Attempt],
        timings: dict[str, float],
    ) -> tuple[Verification, bool]:
        """One generate + verify round; True when the model could not be reached at all."""
        started = time.perf_counter()
        number = len(attempts) + 1
        try:
            draft = self.generator.draft(rset.question, rset, feedback=tuple(f.text for f in feedback))
        except (DraftFormatError, GeneratorError) as exc:
            timings[f"generate_{number}"] = round(time.perf_counter() - started, 4)
            log.warning("draft %d for retrieval %s unusable: %s", number, rset.id, exc)
            return self._unusable_draft(exc, feedback, attempts)
        timings[f"generate_{number}"] = round(time.perf_counter() - started, 4)
        return self._verify(draft, rset, viewer, feedback, attempts, timings, number), False

    def _unusable_draft(self, exc: DraftFormatError | GeneratorError, feedback: tuple[Finding, ...],
                        attempts: list[Attempt]) -> tuple[Verification, bool]:
        """No draft to verify: the attempt is recorded with its error; True when the model could not be reached."""
        attempts.append(Attempt(feedback=feedback, raw=getattr(exc, "raw", ""), error=str(exc)))
        return (Verification(claims=(), problems=(Finding(f"the draft could not be used: {exc}"),)),
                isinstance(exc, GeneratorError))

    def _verify(self, draft: Draft, rset: RetrievalSet, viewer: Viewer, feedback: tuple[Finding, ...],
                attempts: list[Attempt], timings: dict[str, float], number: int,
                error: Exception | None = None) -> Verification:
        """Verify one draft and record the attempt (with the error a stream broke off with, if it did)."""
        started = time.perf_counter()
        verification = verify(draft, rset, viewer, checker=self.checker)
        timings[f"verify_{number}"] = round(time.perf_counter() - started, 4)
        # One check per proposed quote, in draft order: a provider's own citation is kept beside our verdict on it.
        sources = [q.provider for c in draft.claims for q in c.quotes]
        attempts.append(Attempt(
            feedback=feedback, raw=draft.raw, draft=draft, reasons=draft.reasons, error=str(error) if error else "",
            quotes=tuple(CheckedQuote(check, src) for check, src in zip(verification.checks, sources, strict=True)),
            findings=verification.problems))
        return verification

    def _finish(
        self,
        rset: RetrievalSet,
        state: State,
        shown: tuple[Claim, ...],
        verification: Verification,
        attempts: list[Attempt],
        timings: dict[str, float],
        started: float,
        *,
        degraded: bool,
        unreachable: bool = False,
        off_topic: tuple[Finding, ...] = (),
        disagreement: bool = False,
        related: bool = False,
        confidence: float | None = None,
        written: Written | None = None,
        unmentioned: tuple[str, ...] = (),
    ) -> Answer:
        # Hidden = claims that failed verification; verified but off-topic claims are problems, not unverified text.
        verified = {c.text for c in verification.shown}
        hidden = tuple(c.text for c in verification.claims if c.text not in verified) + verification.dropped_claims
        checks = [q.check for a in attempts for q in a.quotes]
        timings["total"] = round(time.perf_counter() - started, 4)
        answer = Answer(
            id=uuid.uuid4().hex[:16],
            question=rset.question,
            state=state,
            claims=shown,
            retrieval=rset,
            degraded=degraded,
            problems=verification.problems + off_topic,
            hidden=hidden,
            generator=getattr(self.generator, "name", type(self.generator).__name__),
            attempts=tuple(attempts),
            timings=timings,
            created=time.time(),
            # Counted over every attempt: how truthfully the generator quoted, before anything was dropped.
            quotes_total=len(checks),
            quotes_verbatim=sum(c.verified for c in checks),
            phantoms=sum(c.kind == "phantom" for c in checks),
            model_unavailable=unreachable,
            disagreement=disagreement,
            request_id=REQUEST_ID.get(),
            related=related,
            confidence=confidence,
            written=written,
            unmentioned=unmentioned,
        )
        if self.audit is not None:
            try:
                self.audit.record(answer)
            except AnswerLogDamagedError:
                pass  # the log reported its damage once, when it found it; logging it per answer would bury it
            except Exception:  # the visitor still gets the answer; the failure is logged
                log.exception("could not write answer %s to the audit log", answer.id)
        for observe in self.observers:
            try:
                observe(answer)
            except Exception:  # counting an answer must never cost the visitor the answer
                log.exception("an answer observer failed on answer %s", answer.id)
        return answer


def _repeats(claim: Claim, shown: list[Claim]) -> bool:
    """True when a claim says nothing new beside those on the page: the same text, or only quotes already cited."""
    cited = {(c.chunk_id, c.start, c.end) for other in shown for c in other.citations}
    return any(claim.text == other.text for other in shown) or all((c.chunk_id, c.start, c.end) in cited for c in claim.citations)


def _unusable(attempts: list[Attempt]) -> bool:
    """Every attempt failed to produce a draft: that is not evidence the docs lack the answer."""
    return bool(attempts) and all(a.draft is None for a in attempts)


@dataclass(frozen=True)
class Round:
    """One attempt's verification and what of it passed the answer gate."""

    verification: Verification
    shown: tuple[Claim, ...]  # verified, shown-worthy and on point
    off_topic: tuple[Finding, ...] = ()
    disagree: bool = False  # the gate found two of its sources stating different values
    streamed: int = 0  # the first `streamed` claims of `shown` are already on the page
    unreachable: bool = False  # the model could not be reached at all
    drafted: bool = True  # the attempt produced a draft (a retry that did not never wins a tie)
    inherited: int = 0  # the first claims of `shown` were streamed by an earlier attempt, not verified by this one
    related: bool = False  # `shown` are the closest passages, not an answer
    confidence: float | None = None  # the gate's confidence in the direct answer

    @property
    def score(self) -> tuple[int, int, int]:
        """On-point supported claims, then on-point claims, then fewer rejected quotes; ties go to the retry.

        Only this attempt's own claims count: a retry is not credited with the claims an earlier one streamed.
        """
        own = self.shown[self.inherited:]
        rejected = sum(not check.verified for check in self.verification.checks)
        return (sum(c.status == SUPPORTED for c in own), len(own), -rejected)


def kept(verification: Verification) -> tuple[Finding, ...]:
    """What the retry is told to keep: each claim whose quotes verified and that the checker found supported."""
    return tuple(
        Finding(f"claim {n} passed verification; keep it and its quotes unchanged: "
                + "; ".join(f'{c.handle} "{c.quote}"' for c in claim.citations), n)
        for n, claim in enumerate(verification.claims, start=1) if claim.status == SUPPORTED
    )
