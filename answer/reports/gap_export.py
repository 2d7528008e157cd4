"""The content-gap report as JSON, CSV and plain text, for `python -m answer gaps` and whoever reads its files.

Everything here is built from a `GapReport`, whose questions and reasons are
already redacted; nothing reads the answer log again.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from datetime import UTC, datetime

from .gaps import Gap, GapReport

CSV_COLUMNS = ("rank", "count", "refused", "related", "unverified", "rated_down", "label", "examples", "reasons", "feedback",
               "sections", "answer_ids")


def day(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def report_json(report: GapReport) -> dict[str, object]:
    """The whole report: every group, with its examples, reasons, sections and answer ids."""
    return {"since": day(report.since), "answers": report.answers, "not_yet_grouped": report.pending,
            "gaps": [asdict(gap) | {"reasons": [{"reason": r, "answers": n} for r, n in gap.reasons]} for gap in report.gaps]}


def report_csv(report: GapReport) -> str:
    """One row per group, largest first; lists inside a cell are joined with ' | '."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180; and a \r a visitor typed is then quoted too
    writer.writerow(CSV_COLUMNS)
    for rank, gap in enumerate(report.gaps, start=1):
        writer.writerow([rank, gap.count, gap.refused, gap.related, gap.unverified, gap.rated_down] + [inert(cell) for cell in (
            gap.label, " | ".join(e.question for e in gap.examples), " | ".join(f"{r} (x{n})" for r, n in gap.reasons),
            " | ".join(gap.feedback), " | ".join(s.url for s in gap.sections), " ".join(gap.answer_ids))])
    return out.getvalue()


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def inert(cell: str) -> str:
    """A text cell a spreadsheet shows as text: one starting like a formula gets a leading apostrophe.

    Questions and feedback are what visitors typed; opened in a spreadsheet, `=HYPERLINK(…)` or
    `@SUM(…)` in a cell would run as a formula on the support person's machine (CSV injection).
    """
    return "'" + cell if cell.startswith(FORMULA_START) else cell


def report_text(report: GapReport, limit: int = 30) -> str:
    """The largest groups for a terminal: label and count, then examples, reasons and sections indented."""
    lines = [f"{_count(report.answers, 'answer')} since {day(report.since)}: {_count(len(report.gaps), 'group')}, "
             "largest first"]
    if report.pending:
        lines.append(f"{report.pending} questions not yet grouped (not embedded yet): run `python -m answer gaps` to index them")
    for rank, gap in enumerate(report.gaps[:limit], start=1):
        lines += ["", f"{rank}. {gap.label}  ({_tally(gap)})"]
        lines += [f"   asked: {e.question}  [{e.answer_id}]" for e in gap.examples]
        lines += [f"   why: {r} (x{n})" for r, n in gap.reasons]
        lines += [f"   visitor: {f}" for f in gap.feedback]
        lines += [f"   looked at: {s.title} › {' › '.join(s.heading_path[-1:])}  {s.url}" for s in gap.sections]
    if len(report.gaps) > limit:
        lines += ["", f"{len(report.gaps) - limit} smaller groups not shown (--json or --csv lists them all)"]
    return "\n".join(lines)


def _tally(gap: Gap) -> str:
    parts = [_count(gap.count, "answer")] + [f"{n} {what}" for n, what in ((gap.refused, "refused"),
             (gap.related, "related passages only"), (gap.unverified, "unverified"), (gap.rated_down, "not helpful")) if n]
    return ", ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
