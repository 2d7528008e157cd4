"""The content-gap report: what visitors asked that the docs did not answer, grouped by topic, largest first.

Every refusal is a question the docs did not answer, every answer of Related
passages only one they came close to without answering (the docs seem to cover
it: a section scored high), every unverified answer one they could not back, and
every thumbs-down an answer that did not help.
The report takes those of a period from the answer log, keeps only answers
whose every retrieved section the reader may read (`answer.reports.readable`, the
audit view's rule), groups their questions by meaning (`answer.reports.clusters`)
and says, per group, how often it was asked, a few of the questions, why no
answer was given, and which sections were looked at: where a new section
would go. Questions and reasons are redacted (`answer.reports.redaction`) before
anything is grouped, embedded or shown.

Embedding the questions is the expensive part (10k questions take minutes on
two cores), so each question's vector is kept in the answer log beside its
answer, written with the answer itself (`answer.reports.gap_index`) or, for answers
from before that or written without the model, by the first report that
needs it. A report can be told to embed at most `limit` of those: the staff
page must answer in seconds however large the backlog, so it groups what it
has and counts the rest as `pending`, which the CLI (no limit) indexes.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from retrieval.embedder import Embedder
from retrieval.protocols import StoreReader

from ..contract.record import REFUSED, RELATED, UNVERIFIED
from ..errors import AnswerLogError
from ..language import other_language
from ..log.protocol import AnswerLog, GapRow
from .clusters import THRESHOLD, central, cluster
from .readable import fully_readable, live_hashes, needs_lookup
from .redaction import redact

log = logging.getLogger(__name__)
EXAMPLES = 5  # questions shown per group, newest first
SECTIONS = 5  # sections looked at, per group
REASONS = 5
EMBED_BATCH = 256  # questions embedded (and their vectors cached) at a time
NOTHING_RETRIEVED = "no section of the docs matched the question"
ASKED_IN = "asked in {language}: the docs are searched in English"  # a language, not a topic, the docs lack


@dataclass(frozen=True)
class Example:
    """One answer of a group: its (redacted) question, when, how it ended and its thumbs-down count."""

    answer_id: str
    question: str
    created: float
    state: str  # the answer's state, or "related" for one that showed only Related passages
    down: int


@dataclass(frozen=True)
class Section:
    """A section the group's answers looked at, and how many of them did."""

    title: str
    heading_path: tuple[str, ...]
    url: str  # page#anchor as the index built it
    answers: int


@dataclass(frozen=True)
class Gap:
    """One topic: its most central question, how often and how it went unanswered, and where an answer would go."""

    label: str
    count: int
    refused: int
    unverified: int
    rated_down: int  # answers with at least one thumbs-down
    examples: tuple[Example, ...]
    reasons: tuple[tuple[str, int], ...]  # why no answer was given, most frequent first
    feedback: tuple[str, ...]  # visitors' reasons for a thumbs-down, newest answer first
    sections: tuple[Section, ...]
    answer_ids: tuple[str, ...]  # every answer of the group, newest first
    related: int = 0  # answers that showed only Related passages: no direct answer was given
    worded: int = 0  # … of them, those naming the visitor's words no section found uses (a wording or a missing topic)

    @property
    def covered(self) -> bool:
        """The docs seem to cover this topic (most of its answers showed the closest passages, in the sections' own
        words), but gave no answer."""
        near = self.related - self.worded
        return near > 0 and 2 * near >= self.count


@dataclass(frozen=True)
class GapReport:
    since: float
    answers: int  # answers the report is built from (readable by its reader)
    gaps: tuple[Gap, ...]  # largest first; a question asked once is a group of one
    pending: int = 0  # readable answers left out because their question was not embedded yet (over `limit`)


def gap_report(audit: AnswerLog, store: StoreReader, embedder: Embedder, groups: frozenset[str], *,
               since: float, site_name: str = "", threshold: float = THRESHOLD, limit: int | None = None) -> GapReport:
    """The report of answers since `since` that `groups` may read in full, from the log and the live index.

    At most `limit` questions missing from the log's vector cache are embedded (the newest first);
    the answers of the others are left out and counted as `pending`. None embeds them all.
    """
    rows = audit.gap_rows(since)
    live = live_hashes(store, groups, (i for row in rows for i in needs_lookup(row.record)))
    rows = [row for row in rows if fully_readable(row.record, groups, live)]
    texts = [gap_text(row.record.question, site_name) for row in rows]
    found = question_vectors(audit, embedder, [row.record.answer_id for row in rows], texts, limit=limit)
    kept = [i for i, v in enumerate(found) if v is not None]
    pending = len(rows) - len(kept)
    rows, texts = [rows[i] for i in kept], [texts[i] for i in kept]
    vectors = [v for v in found if v is not None]
    members: dict[str, list[int]] = {}  # distinct text → its rows, newest first (so ties go to the newest question)
    for i, text in enumerate(texts):
        members.setdefault(text, []).append(i)
    distinct = list(members)
    matrix = np.stack([vectors[members[t][0]] for t in distinct]) if distinct else np.zeros((0, 1), np.float32)
    weights = [len(members[t]) for t in distinct]
    gaps = []
    for group in cluster(matrix, weights, threshold):
        label = redact(rows[members[distinct[central(matrix, group, weights)]][0]].record.question)
        chosen = sorted((rows[i] for g in group for i in members[distinct[g]]),
                        key=lambda r: (-r.record.created, r.record.answer_id))
        gaps.append(_gap(label, chosen))
    gaps.sort(key=lambda g: (-g.count, -g.examples[0].created, g.label))
    return GapReport(since=since, answers=len(rows), gaps=tuple(gaps), pending=pending)


def gap_text(question: str, site_name: str = "") -> str:
    """Exactly what is embedded for a question, wherever it is embedded: redacted, without the site's name."""
    return topic_text(redact(question), site_name)


def text_hash(text: str) -> str:
    """The key a cached vector is kept under beside its answer: a vector of other text is not reused."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def topic_text(question: str, site_name: str = "") -> str:
    """What is embedded for grouping: the question without the site's own name.

    Every question on a product's docs names the product; with all-MiniLM-L6-v2 that shared name
    and the question's phrasing ("Is there a … for Ferrydeck?") outweigh the topic.
    """
    words = re.findall(r"[A-Za-z0-9]{3,}", site_name)
    if not words:
        return " ".join(question.split())
    name = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")(?:['’]s)?\b", re.IGNORECASE)
    return " ".join(name.sub(" ", question).split()) or question


def question_vectors(audit: AnswerLog, embedder: Embedder, ids: Sequence[str], texts: Sequence[str], *,
                     limit: int | None = None) -> list[np.ndarray | None]:
    """One unit vector per answer, from the log's cache when it holds one of this text, else embedded and cached.

    Only the first `limit` distinct texts missing from the cache are embedded (all with None);
    the answers of the others get None.
    """
    hashes = [text_hash(t) for t in texts]
    cached = audit.question_vectors(embedder.id, ids)
    out: list[np.ndarray | None] = []
    for answer_id, digest in zip(ids, hashes, strict=True):
        held = cached.get(answer_id)
        out.append(np.frombuffer(held[1], dtype=np.float32) if held and held[0] == digest else None)
    missing = [i for i, v in enumerate(out) if v is None]
    wanted = list(dict.fromkeys(texts[i] for i in missing))[:limit]
    for start in range(0, len(wanted), EMBED_BATCH):
        batch = wanted[start:start + EMBED_BATCH]
        made = dict(zip(batch, (np.asarray(v, dtype=np.float32) for v in embedder.embed(batch)), strict=True))
        fresh = [i for i in missing if texts[i] in made]
        for i in fresh:
            out[i] = made[texts[i]]
        _keep(audit, embedder.id, [(ids[i], hashes[i], made[texts[i]].tobytes()) for i in fresh])
    return out


def _keep(audit: AnswerLog, model: str, rows: list[tuple[str, str, bytes]]) -> None:
    """Cache vectors; a log that cannot take them (locked, read-only) costs the next report time, never this one."""
    try:
        audit.keep_question_vectors(model, rows)
    except AnswerLogError as exc:
        log.warning("question vectors not cached: %s", exc)


def _gap(label: str, rows: list[GapRow]) -> Gap:
    reasons: Counter[str] = Counter()
    sections: dict[str, Section] = {}
    seen: Counter[str] = Counter()
    for row in rows:
        record = row.record
        if record.state in (REFUSED, UNVERIFIED) or record.outcome == RELATED:
            language = other_language(record.question)
            reasons.update({ASKED_IN.format(language=language)} if language else
                           {reason_text(p.text) for p in record.problems} or
                           ({NOTHING_RETRIEVED} if not record.retrieved else set()))
        once: dict[str, Section] = {}  # a section split in parts counts once per answer, under its first part
        for source in record.retrieved:
            once.setdefault(source.url or source.id, Section(source.title, source.heading_path, source.url, 0))
        for key, section in once.items():
            sections.setdefault(key, section)
            seen[key] += 1
    ranked = sorted(sections, key=lambda k: -seen[k])[:SECTIONS]  # stable: ties keep the newest answer's rank order
    return Gap(
        label=label, count=len(rows),
        refused=sum(r.record.state == REFUSED for r in rows), unverified=sum(r.record.state == UNVERIFIED for r in rows),
        rated_down=sum(r.down > 0 for r in rows), related=sum(r.record.outcome == RELATED for r in rows),
        worded=sum(r.record.outcome == RELATED and bool(r.record.unmentioned) for r in rows),
        examples=tuple(Example(r.record.answer_id, redact(r.record.question), r.record.created,
                               "related" if r.record.outcome == RELATED else r.record.state, r.down)
                       for r in rows[:EXAMPLES]),
        reasons=tuple((redact(text), n) for text, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:REASONS]),
        feedback=tuple(redact(reason) for r in rows for reason in r.reasons)[:EXAMPLES],
        sections=tuple(Section(sections[k].title, sections[k].heading_path, sections[k].url, seen[k]) for k in ranked),
        answer_ids=tuple(r.record.answer_id for r in rows))


def parse_since(text: str, now: float, default_days: float) -> float:
    """The start of the report's period: a date (`2025-06-01`, midnight UTC) or an ISO time; blank is `default_days` ago."""
    value = text.strip()
    if not value:
        return now - default_days * 86_400
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"since must be a date like 2025-06-01 or an ISO time like 2025-06-01T09:00, got {value[:40]!r}") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


_PREFIX = re.compile(r"^(?:not an answer: |claim \d+ does not answer the question: )")
_SCORES = re.compile(r"\s*\((?:score|best|\d+% of what)[^)]*\)")


def reason_text(finding: str) -> str:
    """A finding as a reason to count: without the claim number, and without the figures that differ every time."""
    return _SCORES.sub("", _PREFIX.sub("", finding)).strip()
