"""Grounding metrics for one generator over the question set.

Each question is asked through the real pipeline (retrieval → generator →
verifier) as its viewer; the metrics are computed from what a visitor would
be shown, so a system cannot score by copying the top passage: an answer is
only *correct* when one of its verified quotes overlaps the gold quote.
"""

from __future__ import annotations

import random
import re
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from answer.contract.result import Answer
from answer.contract.support import DeterministicChecker
from answer.pipeline import Answerer, Done, Shown
from ingest.mdx import FENCE_LINE
from ingest.normalize import normalize
from retrieval.viewer import Viewer


@dataclass
class Row:
    """One question's outcome, for the per-question table."""

    id: str
    question: str
    kind: str
    groups: list[str]
    answerable: bool
    state: str
    correct: bool | None  # an Answer (the outcome with the badge) carrying the gold fact
    retrieved: list[str]
    gold: list[str]
    rank: int | None  # 1-based rank of the first gold chunk, None if not retrieved
    direct_correct: bool | None = None  # the first (direct) claim alone carries the gold fact
    quoted_chars: int = 0  # how much text the answer quotes: a long answer must not buy correctness
    claims: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0  # the whole answer, question to finished record
    first_quote: float | None = None  # question to the first verified quote on the page; None when none was shown
    outcome: str = "refused"  # answer / related / refused, as the visitor was told
    gold_shown: bool | None = None  # the gold fact is quoted, in an Answer or in Related passages
    # With a writer (LLM_ROLE=write): the written sentences shown, and whether one of them rests on the gold quote.
    written: list[dict[str, Any]] = field(default_factory=list)
    written_dropped: list[dict[str, Any]] = field(default_factory=list)  # each with the checker's reasons
    written_gold: bool | None = None


def _within(part: str, whole: str) -> bool:
    """`part` in `whole`, starting and ending at word edges."""
    return bool(part) and re.search(rf"(?<!\w){re.escape(part)}(?!\w)", whole) is not None


def _overlap(a: str, b: str) -> bool:
    """True when two quotes share the gold fact: one contains the other (whole words: "Starter | 5" is not in
    "Starter | 50 | 100"), or most words overlap."""
    x, y = normalize(a).text, normalize(b).text
    if _within(x, y) or _within(y, x):
        return True
    wx, wy = set(re.findall(r"\w+", x)), set(re.findall(r"\w+", y))
    return bool(wx and wy) and len(wx & wy) / min(len(wx), len(wy)) >= 0.6


def run_questions(answerer: Answerer, questions: list[dict[str, Any]]) -> tuple[list[Row], list[Answer]]:
    rows, answers = [], []
    for q in questions:
        viewer = Viewer.of(q.get("groups") or [])
        started, first, answer = time.perf_counter(), None, None
        for event in answerer.events(q["question"], viewer, version=q.get("version") or None):  # the version browsed
            if isinstance(event, Shown) and first is None:
                first = time.perf_counter() - started
            if isinstance(event, Done):
                answer = event.answer
        assert answer is not None
        seconds = time.perf_counter() - started
        retrieved = [h.chunk.id for h in answer.retrieval.hits]
        gold = list(q.get("gold") or [])
        rank = next((i for i, cid in enumerate(retrieved, start=1) if cid in gold), None)
        cited = [c.quote for claim in answer.claims for c in claim.citations]
        correct = direct = shown = None
        if q.get("answerable"):
            shown = answer.state == "answered" and any(_overlap(q["answer_quote"], quote) for quote in cited)
            correct = shown and answer.outcome == "answer"
            direct = correct and any(_overlap(q["answer_quote"], c.quote) for c in answer.claims[0].citations)
        written = answer.written
        on_gold = None
        if written is not None and q.get("answerable"):
            resting = {n for sentence in written.sentences for n in sentence.passages}
            on_gold = written.shown and answer.outcome == "answer" and any(
                _overlap(q["answer_quote"], p.quote) for p in written.passages if p.number in resting)
        rows.append(Row(
            id=q["id"], question=q["question"], kind=q.get("kind", ""), groups=list(q.get("groups") or []),
            answerable=bool(q.get("answerable")), state=answer.state, correct=correct, retrieved=retrieved,
            gold=gold, rank=rank, direct_correct=direct, quoted_chars=sum(len(quote) for quote in cited),
            timings=dict(answer.timings), seconds=seconds, first_quote=first, outcome=answer.outcome, gold_shown=shown,
            claims=[{"text": c.text, "status": c.status, "citations": [
                {"handle": x.handle, "chunk_id": x.chunk_id, "quote": x.quote, "url": x.url} for x in c.citations]}
                for c in answer.claims],
            written=[{"text": w.text, "passages": list(w.passages), "code": w.code, "instead_of": w.instead_of}
                     for w in (written.sentences if written is not None and written.shown else ())],
            written_dropped=[{"text": w.text, "passages": list(w.passages), "status": w.status, "reasons": list(w.reasons)}
                             for w in (written.dropped if written is not None else ())],
            written_gold=on_gold,
        ))
        answers.append(answer)
    return rows, answers


def _share(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def _percentiles(seconds: list[float]) -> dict[str, float]:
    return {"p50": round(_p(seconds, 0.5) * 1000, 1), "p95": round(_p(seconds, 0.95) * 1000, 1)}


def _at_its_offsets(answer: Answer, citation: Any) -> bool:
    """A shown quote is exactly the text of its retrieved chunk at the offsets it claims (independent of the verifier)."""
    hit = answer.retrieval.get(citation.handle)
    return hit is not None and hit.chunk.id == citation.chunk_id and hit.chunk.text[citation.start:citation.end] == citation.quote


# Where a quote may begin: the chunk's start, a line's start after Markdown's own markers (a list item, a table
# cell, a quote, a heading), or right after a sentence's end.
_LINE_MARKERS = re.compile(r"^[\s>#*+\-|]*(?:\d{1,3}[.)][\s|]*)?$")
_SENTENCE_END = re.compile(r"""[.!?:;]["')\]*_`]*$""")
_ABBREVIATION = re.compile(r"(?:\b(?:[A-Za-z]\.){2,}|\b(?:etc|vs|cf|approx|incl|Mr|Ms|Dr)\.)$")  # "a.k.a.", "e.g."


def starts_mid_sentence(text: str, start: int) -> bool:
    """A quote that begins inside a sentence ("Gull, uses the new runner" of "Tern 2+, a.k.a. Gull, uses …").

    Read from the chunk's characters alone, not from the segmenter that cut the quote, so a segmenter's mistake
    shows here instead of being agreed with."""
    before = text[:start]
    line = before[before.rfind("\n") + 1:]
    if _LINE_MARKERS.match(line):
        return False
    before = before.rstrip()
    return not _SENTENCE_END.search(before) or bool(_ABBREVIATION.search(before))


_FENCE_IN_A_LINE = re.compile(r"^[ \t]*[^\s`][^\n]*?`{3,}[\w+-]*\n", re.MULTILINE)  # words, then a fence opening


def cuts_a_code_block(text: str, start: int, end: int) -> bool:
    """A quote that begins or ends inside a fenced code block: a block is quoted whole or not at all.

    Fences are read where Markdown opens them, at a line's start; a line of words ending in a fence's opening
    ("1. Install it: ```sh", the command on the next line, as list items once held them) counts too: text read as
    one line with its command, never a block quoted whole. Backticks a sentence mentions mid-line ("three backticks
    ``` at the start") open nothing; a sentence ending its line on them is counted, which errs towards a cut."""
    def inside(lines: list[str]) -> bool:
        open_fence = ""
        for line in lines:
            fence = FENCE_LINE.match(line)
            if fence and (not open_fence or fence.group(1).startswith(open_fence)):
                open_fence = "" if open_fence else fence.group(1)
        return bool(open_fence)

    # a quote may begin on a fence line and end right after one: the lines before its start, all lines to its end
    return (inside(text[:start].split("\n")[:-1]) or inside(text[:end].split("\n"))
            or bool(_FENCE_IN_A_LINE.search(text[start:end])))


def quote_edges(answers: list[Answer]) -> dict[str, int]:
    """Shown quotes cut in the wrong place, counted over every shown quote of every answer."""
    quotes = mid = code = 0
    for answer in answers:
        for claim in answer.claims:
            for citation in claim.citations:
                hit = answer.retrieval.get(citation.handle)
                if hit is None:
                    continue
                quotes += 1
                mid += starts_mid_sentence(hit.chunk.text, citation.start)
                code += cuts_a_code_block(hit.chunk.text, citation.start, citation.end)
    return {"quotes": quotes, "start_mid_sentence": mid, "cut_a_code_block": code}


def metrics(rows: list[Row], answers: list[Answer], anchor_ok: dict[str, bool]) -> dict[str, Any]:
    """All headline numbers for one generator."""
    answerable = [r for r in rows if r.answerable]
    unanswerable = [r for r in rows if not r.answerable]
    quotes_total = sum(a.quotes_total for a in answers)
    quotes_ok = sum(a.quotes_verbatim for a in answers)
    phantoms = sum(a.phantoms for a in answers)
    shown = [c for a in answers for c in a.claims]
    citations = [(c, x) for c in shown for x in c.citations]
    checker = DeterministicChecker()
    precise = sum(checker.check(c.text, [x.quote]).status == "supported" for c, x in citations)
    urls = [x.url for _, x in citations]
    stages: dict[str, list[float]] = {}
    for r in rows:
        for stage, seconds in r.timings.items():
            stages.setdefault(re.sub(r"_\d+$", "", stage), []).append(seconds)
    return {
        "questions": len(rows),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "retrieval_in_answer": {  # any gold section among the hits the generator saw
            "hit_at_1": _share(sum(r.rank == 1 for r in answerable), len(answerable)),
            "hit_at_5": _share(sum(r.rank is not None and r.rank <= 5 for r in answerable), len(answerable)),
            "mrr": _share(sum(1 / r.rank for r in answerable if r.rank), len(answerable)),
        },
        "quote_correctness": _share(quotes_ok, quotes_total),  # of every quote proposed, over all attempts
        "shown_quote_correctness": _share(sum(_at_its_offsets(a, x) for a in answers for c in a.claims for x in c.citations),
                                          len(citations)),  # re-checked here against the chunk text: must be 1.0
        "quote_edges": quote_edges(answers),
        "attribution_coverage": _share(sum(bool(c.citations) for c in shown), len(shown)),
        "citation_precision_auto": _share(precise, len(citations)),
        # Unanswerable for this viewer and not shown as an Answer: refused, or the closest passages labelled as such.
        "refusal_accuracy": _share(sum(r.outcome != "answer" for r in unanswerable), len(unanswerable)),
        "refused_outright": _share(sum(r.outcome == "refused" for r in unanswerable), len(unanswerable)),
        "answer_rate": _share(sum(r.outcome == "answer" for r in answerable), len(answerable)),
        "answer_correctness": _share(sum(bool(r.correct) for r in answerable), len(answerable)),
        # Of every Answer (the badge), how many carry the gold fact: an Answer to an unanswerable question is wrong.
        "answer_precision": _share(sum(bool(r.correct) for r in answerable), sum(r.outcome == "answer" for r in rows)),
        "related_rate": _share(sum(r.outcome == "related" for r in answerable), len(answerable)),
        "related_with_gold": _share(sum(bool(r.gold_shown) for r in answerable if r.outcome == "related"),
                                    sum(r.outcome == "related" for r in answerable)),
        "gold_shown": _share(sum(bool(r.gold_shown) for r in answerable), len(answerable)),
        "outcomes": dict(Counter(r.outcome for r in rows)),
        "direct_answer_correctness": _share(sum(bool(r.direct_correct) for r in answerable), len(answerable)),
        "quoted_chars_per_answer_p50": _p([r.quoted_chars for r in rows if r.state == "answered"], 0.5),
        "phantom_rate": _share(phantoms, quotes_total),
        "anchor_validity": _share(sum(anchor_ok.get(u, False) for u in urls), len(urls)),
        "states": dict(Counter(r.state for r in rows)),
        "claim_statuses": dict(Counter(c.status for c in shown)),
        # What a visitor waits: per answer, and until the first verified quote is on the page (answered only).
        "latency_per_answer_ms": _percentiles([r.seconds for r in rows]),
        "first_verified_quote_ms": _percentiles([r.first_quote for r in rows if r.first_quote is not None]),
        "latency_ms": {stage: {"p50": round(_p(v, 0.5) * 1000, 1), "p95": round(_p(v, 0.95) * 1000, 1)}
                       for stage, v in sorted(stages.items())},
        "mean_claims_per_answer": round(statistics.mean([len(a.claims) for a in answers if a.state == "answered"] or [0]), 2),
    } | written_metrics(rows, answers)


def written_metrics(rows: list[Row], answers: list[Answer]) -> dict[str, Any]:
    """With a writer: how many Answers got a written answer, how many state the gold fact, what was dropped, how long.

    A shown sentence passed the support checker against the quotes it names (answer/contract/written.py), so "supported"
    is not measured again here; "gold" is a shown sentence resting on the quote that holds the gold fact.
    """
    asked = [(r, a) for r, a in zip(rows, answers, strict=True) if a.written is not None]
    if not asked:
        return {}
    answerable = [r for r in rows if r.answerable]
    records = [a.written for _, a in asked if a.written is not None]
    return {"written": {
        "asked": len(asked),
        "shown": sum(w.shown for w in records),
        "declined": sum(w.declined for w in records),
        "failed": sum(bool(w.error) for w in records),
        "sentences_shown": sum(len(w.sentences) for w in records if w.shown),
        "sentences_dropped": sum(len(w.dropped) for w in records),
        "gold_stated": _share(sum(bool(r.written_gold) for r in answerable), len(answerable)),
        "write_ms": _percentiles([r.timings["write"] for r, _ in asked if "write" in r.timings]),
    }}


def sample_for_grading(rows: list[Row], answers: list[Answer], size: int, seed: int = 13) -> list[dict[str, str]]:
    """A random sample of (question, claim, quote, chunk) for human grading of citation precision."""
    items = []
    for row, answer in zip(rows, answers, strict=True):
        texts = {h.handle: h.chunk.text for h in answer.retrieval.hits}
        for claim in answer.claims:
            for c in claim.citations:
                items.append({"question": row.question, "claim": claim.text, "quote": c.quote,
                              "chunk_id": c.chunk_id, "chunk_text": texts.get(c.handle, ""), "supports (yes/no)": ""})
    random.Random(seed).shuffle(items)
    return items[:size]
