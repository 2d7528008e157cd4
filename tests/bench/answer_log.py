"""What the answer log costs on disk: bytes per answer, and the size it settles at under a retention.

Real answers (extractive generator, content/) are written to a fresh log;
then copies of them are written past a small answer cap to show that the
file stops growing once pruning keeps pace, and the default cap's size is
extrapolated from the measured bytes per answer.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any


def _size(path: Path) -> int:
    """The database with its write-ahead log, as the disk holds them."""
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def bench_answer_log(work: Path, store: Any, embedder: Any, questions: list[dict[str, Any]], *,
                     cap: int = 500, writes: int = 2000) -> dict[str, Any]:
    from answer.generate import ExtractiveGenerator
    from answer.log.retention import DEFAULT_RETENTION, Retention
    from answer.log.sqlite import SQLiteAnswerLog
    from answer.pipeline import Answerer
    from retrieval.services import open_retriever
    from retrieval.viewer import Viewer
    from web.settings import Settings

    path = work / "answer-log" / "answers.sqlite3"
    audit = SQLiteAnswerLog(path)
    answerer = Answerer(open_retriever(Settings(), store=store, embedder=embedder), ExtractiveGenerator(embedder), audit=audit)
    answers = [answerer.ask(row["question"], Viewer.anonymous()) for row in questions]
    per_answer = _size(path) / len(answers)

    capped = SQLiteAnswerLog(work / "answer-log-capped" / "answers.sqlite3", retention=Retention(days=None, answers=cap))
    sizes = []
    for n in range(writes):
        capped.record(replace(answers[n % len(answers)], id=f"copy{n:06d}"))
        if (n + 1) % cap == 0:
            sizes.append(_size(capped.path))
    default_cap = DEFAULT_RETENTION.answers or 0
    return {"answers": len(answers), "bytes_per_answer": round(per_answer),
            "capped": {"cap": cap, "writes": writes, "size_mb_every_cap_writes": [round(s / 2**20, 2) for s in sizes],
                       "kept": len(capped.search(limit=writes))},
            "default_retention": str(DEFAULT_RETENTION),
            "default_steady_state_mb": round(default_cap * per_answer / 2**20, 1)}
