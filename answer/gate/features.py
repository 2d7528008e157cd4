"""Span features: which spans of the retrieved sections answer the question, best first.

A stage of its own, used by the offline generator to propose quotes and by the
answer gate to judge any generator's quotes. Candidates are runs of whole
units (`spans.py`): one to three sentences of a paragraph, a list item or a
table row. Each is scored with named features, so the audit and the tests can
say *why* a span won:

- `meaning`: embedding similarity of the question and the span (the mean of its units' embeddings);
- `section`: similarity of the question and the section's title and headings
  (a section whose heading asks the question answers it in its lead);
- `terms`: how much of the question's focus the span and its headings cover;
- `asks`: how much of what the question asks *beyond its subject* the span covers: the focus terms
  most retrieved sections do not use (every section found for "why does cy.task fail when my handler
  returns nothing?" names cy.task; which one answers is told by "fail", "return", "nothing");
- `identifiers`: the code-like tokens the question names (`FD-4292`, `--dry-run`);
- `type`: a quantity question wants a stated number, a default question the
  default, a how-to question the steps;
- `rank`, `length` and `version`: retrieval order, a small cost per extra
  sentence, and the wanted docs version (named in the question, else browsed,
  else the site's current one).

How much each counts is `weights.Weights`.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ingest.blocks import table_cells
from ingest.context_sentences import asks_history, is_history, is_navigation, leans_back, sends_elsewhere
from ingest.text import key_terms, lexical_terms
from retrieval.embedder import Embedder
from retrieval.search import Hit, RetrievalSet

from ..contract.spans import ITEM, ROW, SENTENCE, blocks, introduced_block, sentence_starts, table_header, units
from .question import DEFAULT, NAME, Question, same_release
from .shape import shape_fit
from .vocabulary import EMPTY, Vocabulary
from .weights import MAX_UNITS, SUBJECT_SHARE, TOP_HITS, Weights


@dataclass(frozen=True)
class Span:
    """A candidate quote: one to three consecutive units of one retrieved chunk."""

    handle: str
    rank: int  # 0 = the top hit
    start: int
    end: int
    text: str
    kind: str  # sentence / item / row
    header: str  # a table row's header row
    context: str  # page title and heading path
    version: str
    lead: bool  # starts with the first unit of the section
    parts: tuple[str, ...] = ()  # the units' texts (embedded one by one; a span's meaning is their mean)
    introduces: str = ""  # the block (code / list / table) its last sentence introduces and the quote includes
    shows: int = 0  # where that block starts in `text`: what precedes it is the statement, what follows is shown

    @property
    def statement(self) -> str:
        """What the span says, without the block it shows (a command's numbers are no version and no rival value)."""
        return self.text[: self.shows] if self.introduces else self.text


@dataclass(frozen=True)
class Scored:
    """A span, the score the gate's thresholds judge it by, and the named features that sum to it.

    `asks` is the one feature outside `score`: it orders spans that pass (which of the sections that all
    name the question's subject says what was asked), never lifts a span over a threshold.
    """

    span: Span
    score: float
    features: Mapping[str, float] = field(default_factory=dict)

    @property
    def order(self) -> float:
        """What spans are ranked by: the score and what the span says beyond the question's subject."""
        return self.score + self.features.get("asks", 0.0)


class AnswerExtractor:
    """Scores every span of the top hits against the question."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        top_hits: int = TOP_HITS,
        current_version: str = "",
        vocabulary: Callable[[], Vocabulary] | None = None,
        weights: Weights | None = None,
        cache_size: int = 20_000,
    ) -> None:
        self.embedder = embedder
        self.top_hits = top_hits
        self.current_version = current_version
        self.vocabulary = vocabulary or (lambda: EMPTY)
        self.weights = weights or Weights()
        self._vectors: OrderedDict[str, Sequence[float]] = OrderedDict()  # text -> embedding, most recent last
        self._lock = threading.Lock()
        self.cache_size = cache_size

    def candidates(self, rset: RetrievalSet) -> list[Span]:
        return [span for rank, hit in enumerate(readable_hits(rset)[: self.top_hits]) for span in spans_of(hit, rank)]

    def rank(self, question: Question, rset: RetrievalSet) -> list[Scored]:
        """Every candidate span, best first."""
        asks = distinctive(question, readable_hits(rset)[: self.top_hits])
        return self._rank(question, self.candidates(rset), rset.version, asks)

    def score_quotes(self, question: Question, rset: RetrievalSet, quotes: Sequence[tuple[str, int, int]]) -> list[Scored]:
        """Score quotes (handle, start, end) exactly as the same span is scored among candidates, in order.

        This is the gate's view of any generator's citations: an LLM's quote and the extractor's own
        proposal of the same text get the same score.
        """
        order = {h.handle: rank for rank, h in enumerate(readable_hits(rset))}
        spans = []
        for handle, start, end in quotes:
            hit = rset.get(handle)
            if hit is None or handle not in order:
                raise KeyError(f"{handle} is not a readable hit of this retrieval set")
            spans.append(quote_span(hit, order[handle], start, end))
        meaning, section = self._similarities(question, spans)
        vocabulary = self.vocabulary()
        asks = distinctive(question, readable_hits(rset)[: self.top_hits])
        return [self._score(question, s, m, c, vocabulary, rset.version, asks)
                for s, m, c in zip(spans, meaning, section, strict=True)]

    def _rank(self, question: Question, spans: Sequence[Span], preferred: str, asks: frozenset[str] = frozenset()) -> list[Scored]:
        if not spans:
            return []
        meaning, section = self._similarities(question, spans)
        vocabulary = self.vocabulary()
        scored = [self._score(question, s, m, c, vocabulary, preferred, asks)
                  for s, m, c in zip(spans, meaning, section, strict=True)]
        return sorted(scored, key=lambda s: (-s.order, s.span.rank, s.span.start))

    def _similarities(self, question: Question, spans: Sequence[Span]) -> tuple[list[float], list[float]]:
        if self.embedder is None or not spans:  # no model (unit tests, tools): word overlap stands in for meaning
            return [_overlap(question, s.text) for s in spans], [_overlap(question, s.context) for s in spans]
        contexts = sorted({s.context for s in spans})
        parts = sorted({p for s in spans for p in s.parts})
        q, *vectors = self._embed([question.text, *contexts, *parts])  # the gate re-scores: the question is cached too
        context_sim = {c: cosine(q, v) for c, v in zip(contexts, vectors[: len(contexts)], strict=True)}
        part_vec = dict(zip(parts, vectors[len(contexts):], strict=True))
        meaning = [cosine(q, _mean([part_vec[p] for p in s.parts])) for s in spans]
        return meaning, [context_sim[s.context] for s in spans]

    def _embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        """Embeddings, cached by text: the same sections come back question after question."""
        assert self.embedder is not None
        with self._lock:
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
            for text in known:
                self._vectors.move_to_end(text)
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(zip(missing, self.embedder.embed(missing), strict=True))
            with self._lock:
                for text in missing:
                    self._vectors[text] = known[text]
                while len(self._vectors) > self.cache_size:
                    self._vectors.popitem(last=False)
        return [known[t] for t in texts]

    def _score(self, question: Question, span: Span, meaning: float, section: float, vocabulary: Vocabulary,
               preferred: str = "", asks: frozenset[str] = frozenset()) -> Scored:
        w = self.weights
        features: dict[str, float] = {
            "meaning": round(w.meaning * meaning, 4),
            "section": round(w.section * section, 4),
            "terms": round(w.terms * coverage(question, span, vocabulary), 4),
        }
        other_version = self._other_version(question, span, preferred, vocabulary)
        if asks and not other_version:  # another version's sentence is context, never a rival for the lead
            features["asks"] = round(w.asks * coverage(question, span, vocabulary, asks), 4)
        if question.identifiers:
            named = sum(_uses_identifier(i, span) for i in question.identifiers)
            features["identifiers"] = round(w.identifiers * named / len(question.identifiers), 4)
        fit = type_fit(question, span)
        if fit:
            features["type"] = w.type_match if fit > 0 else -w.type_miss
        if span.lead:
            features["lead"] = w.lead
        if span.rank:
            features["rank"] = -w.rank * span.rank
        if len(span.parts) > 1:
            features["length"] = -w.length * (len(span.parts) - 1)
        if other_version:
            features["version"] = -w.other_version
        if is_history(span.statement, span.context) and not asks_history(question.text):
            features["history"] = -w.history  # how it was, beside how it is: context unless nothing current competes
        return Scored(span, round(sum(v for k, v in features.items() if k != "asks"), 4), features)

    def _other_version(self, question: Question, span: Span, preferred: str, vocabulary: Vocabulary) -> bool:
        """True for a span from another docs version than the one wanted.

        Wanted: a docs release the question names, else the one the reader browses, else the current one. A
        question names releases as people say them ("v2"), which covers every release of that line ("2.4"); a
        number naming no release of these docs ("TLS 1.2", "Node 18.0") is about something else and wants nothing.
        """
        named = docs_releases(question.versions, vocabulary.releases)
        wanted = named or ({preferred} if preferred else {self.current_version} if self.current_version else set())
        return bool(span.version and wanted and not any(same_release(span.version, w) for w in wanted))


def docs_releases(versions: frozenset[str], releases: frozenset[str]) -> frozenset[str]:
    """The versions a question names that are releases of these docs (all of them when the releases are unknown)."""
    if not releases:
        return versions
    return frozenset(v for v in versions if any(same_release(v, r) for r in releases))


def spans_of(hit: Hit, rank: int) -> list[Span]:
    """Candidate spans of one hit: one to three consecutive units of the same paragraph or list (a table row alone).

    A span never crosses a block, a list item or a table row: the docs page renders each as its own element,
    and a quote must be highlightable where it stands.
    """
    chunk = hit.chunk
    context = section_context(hit)
    found = units(chunk.text)
    layout = blocks(chunk.text)
    out: list[Span] = []
    for i, unit in enumerate(found):
        if is_navigation(unit.text) or (unit.kind == ROW and _row_points_elsewhere(unit.text)):
            continue  # "See Pagination." points elsewhere and states nothing
        if i and leans_back(unit.text) and found[i - 1].block == unit.block and found[i - 1].kind == unit.kind == SENTENCE:
            continue  # "On other plans, limits cannot be raised." is quoted with the sentence it answers
        run = [unit]
        for follower in found[i + 1 : i + MAX_UNITS] if unit.kind == SENTENCE else ():  # items and rows stand alone
            if follower.block != unit.block or follower.kind != unit.kind or is_navigation(follower.text):
                break
            run.append(follower)
        for size in range(1, len(run) + 1):
            start, end = run[0].start, run[size - 1].end
            block = introduced_block(chunk.text, run[size - 1], layout)
            if block is not None:
                end = block[1]  # the command, the steps or the table the sentence announces, quoted with it
            elif says_nothing_alone(chunk.text[start:end]):
                continue
            out.append(Span(hit.handle, rank, start, end, chunk.text[start:end], unit.kind, unit.header, context,
                            chunk.doc_version, lead=unit is found[0],
                            parts=tuple(_embedding_text(u.text, u.header) for u in run[:size]),
                            introduces=block[2] if block else "", shows=block[0] - start if block else 0))
    return out


def says_nothing_alone(quote: str) -> bool:
    """A quote that claims nothing where it stands: it asks ("How can I wait for my requests to be complete?", an
    FAQ's own question), or it announces what it does not show. A sentence ending in a colon is only a candidate
    with the block it introduces (`introduced_block`); without it, whether that block opens the next part of a
    long section ("…consumed in this order:"), is too long to quote, or is a picture the page shows ("The
    configuration above generates the following sidebar:"), the visitor would read a colon and nothing after it."""
    last = quote.rstrip()
    return last.endswith(("?", ":"))


def _row_points_elsewhere(row: str) -> bool:
    """A table row that names a thing and only sends the reader elsewhere for it ("`limit`, `cursor` |  | See
    Pagination."): quoted for "how do I paginate?", it answers nothing. A row stating a value beside the pointer
    ("Starter | 50 | See Upgrading.") says something."""
    cells = [row[a:b].strip() for a, b in table_cells(row)]
    last = cells[-1] if cells else ""
    return (len(cells) >= 2 and not any(cells[1:-1]) and sends_elsewhere(last)
            and not sentence_starts(last)[1:])


def readable_hits(rset: RetrievalSet) -> list[Hit]:
    """The hits this request's viewer may read, in rank order: the only ones a span may come from."""
    return [h for h in rset.hits if rset.viewer.may_read(h.chunk.access)]


def section_context(hit: Hit) -> str:
    """The page title and heading path a span sits under, as one line."""
    chunk = hit.chunk
    return " ".join(dict.fromkeys((chunk.title, *chunk.heading_path)))


def quote_span(hit: Hit, rank: int, start: int, end: int) -> Span:
    """The span a quote at [start, end) of a hit is: its parts are the units it covers, like a candidate's.

    A quote reaching into the block its sentence introduces is read as that candidate is: the sentence
    carries the meaning, the command or rows after it are what it shows.
    """
    chunk = hit.chunk
    found = units(chunk.text)
    layout = blocks(chunk.text)
    inside = [u for u in found if u.end > start and u.start < end]
    introduces, shows = "", 0
    for k, unit in enumerate(inside):
        block = introduced_block(chunk.text, unit, layout)
        if block is not None and end > block[0]:
            inside, introduces, shows = inside[: k + 1], block[2], block[0] - start
            break
    header = "" if introduces else table_header(chunk.text, start)
    parts = tuple(_embedding_text(u.text, u.header) for u in inside) or (_embedding_text(chunk.text[start:end], header),)
    kind = inside[0].kind if inside else (ROW if header else SENTENCE)
    lead = bool(inside) and inside[0] == found[0]
    return Span(hit.handle, rank, start, end, chunk.text[start:end], kind, header, section_context(hit),
                chunk.doc_version, lead=lead, parts=parts, introduces=introduces, shows=shows)


def _embedding_text(text: str, header: str) -> str:
    """A table row is read with its header ("Plan: Starter, Requests per second: 50"), the way a visitor reads it."""
    if header:
        names = [c.strip() for c in header.split("|")]
        cells = [c.strip() for c in text.split("|")]
        return ", ".join(f"{n}: {c}" for n, c in zip(names, cells, strict=False))
    return text


def _overlap(question: Question, text: str) -> float:
    return len(question.terms & key_terms(text)) / len(question.terms) if question.terms else 0.0


def _mean(vectors: Sequence[Sequence[float]]) -> list[float]:
    return [sum(values) / len(vectors) for values in zip(*vectors, strict=True)]


def _uses_identifier(identifier: str, span: Span) -> bool:
    """True when the span or its headings use the identifier as a whole token (`3` is not in `30`)."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(identifier)}(?![\w-]|[.,]\d)")
    return bool(pattern.search(span.text.lower()) or pattern.search(span.context.lower()))


def coverage(question: Question, span: Span, vocabulary: Vocabulary = EMPTY, terms: frozenset[str] | None = None) -> float:
    """Rarity-weighted share of the question's focus terms (or of `terms`) in the span, its table header or its headings."""
    focus = question.focus if terms is None else terms
    if not focus:
        return 0.0
    found = lexical_terms(" ".join((span.text, span.header, span.context)))
    total = sum(vocabulary.weight(t) for t in focus)
    return sum(vocabulary.weight(t) for t in focus & found) / total if total else 0.0


def distinctive(question: Question, hits: Sequence[Hit]) -> frozenset[str]:
    """The focus terms that tell the retrieved sections apart: those at most `SUBJECT_SHARE` of them use.

    A term nearly every retrieved section uses is what the search found them by (the question's subject);
    which section answers is decided by the rest of what the question asks. Empty when fewer than two
    sections were retrieved (one has nothing to be told apart from) or when the sections share no focus
    term (then the focus itself tells them apart, and `coverage` counts it already).
    """
    if len(hits) < 2 or not question.focus:
        return frozenset()
    used = [lexical_terms(" ".join((h.chunk.text, section_context(h)))) for h in hits]
    asks = frozenset(t for t in question.focus if sum(t in terms for terms in used) <= SUBJECT_SHARE * len(used))
    return asks if asks != question.focus else frozenset()  # no shared subject: `terms` already says it all


def type_fit(question: Question, span: Span) -> int:
    """+1 when the span is the kind of thing the question asks for, -1 when it clearly is not, 0 when neutral."""
    # The statement's own shape decides ("…is suspended:" states no condition even when a list item after it does);
    # the block it introduces makes it steps, and names the default when the block does ("- `note` (the default)").
    # A "which command …?" question is answered by the command the sentence introduces, so the block counts too.
    text = span.text if question.kind in (DEFAULT, NAME) else span.statement
    return shape_fit(question.kind, text, item=span.kind == ITEM or bool(span.introduces), header=span.header,
                     heading=span.context if span.lead else "", named=question.named)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
