"""Follow-up threads: is an elliptical second turn answered from the right section in its thread, and alone?

Each thread is asked the way the chat server asks it: the first turn is
rewritten with no history (it stands alone), the follow-up is rewritten with
that turn as its history by the condenser the server pairs with the
generator (`answer.services.condenser_for`, as `web/services.py` calls
`answer.followup.rewrite`, a follow-up read two ways settled by `Answerer.likelier`), and the rewritten question goes through the real
pipeline. The same follow-up is also asked alone, as typed. A thread scores
when its answer is shown (answered) and cites one of the follow-up's gold
sections; the gap between the two rates is what the thread buys.

A thread can also cost: a visitor who asks about something new in the same
thread must not have the earlier subject pulled into the search. The set's
own questions, paired in file order where the two have no gold page in
common, measure that (`run_switches`): the second asked after the first, and
alone.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from answer.contract.result import Answer
from answer.followup import Condenser, Prefer, Turn, rewrite
from answer.pipeline import Answerer
from retrieval.viewer import Viewer


@dataclass
class ThreadRow:
    """One thread's outcome: what was searched for the follow-up, and whether each way of asking cited gold."""

    id: str
    turns: list[str]
    searched: str  # the follow-up as rewritten in its thread (what the visitor sees as "Searched for")
    gold: list[str]
    in_thread_state: str
    in_thread_cited: list[str]
    in_thread_correct: bool
    alone_state: str
    alone_cited: list[str]
    alone_correct: bool


def cited_ids(answer: Answer) -> list[str]:
    """Chunk ids a visitor is shown as citations (none unless the answer is answered)."""
    if answer.state != "answered":
        return []
    return [c.chunk_id for claim in answer.claims for c in claim.citations]


def thread_history(turns: Sequence[str], condenser: Condenser, prefer: Prefer | None = None) -> list[Turn]:
    """The earlier turns as the server keeps them: what was typed and the standalone question it searched."""
    history: list[Turn] = []
    for asked in turns:
        history.append(Turn(asked, rewrite(asked, history, condenser, prefer).question))
    return history


def run_threads(answerer: Answerer, condenser: Condenser, threads: Sequence[dict[str, Any]]) -> list[ThreadRow]:
    rows = []
    for t in threads:
        *earlier, follow = t["turns"]
        viewer = Viewer.of(t.get("groups") or [])
        version = t.get("version") or None
        prefer = functools.partial(answerer.likelier, viewer=viewer, version=version)  # as the chat server asks
        searched = rewrite(follow, thread_history(earlier, condenser, prefer), condenser, prefer).question
        gold = list(t["gold"])
        in_thread = answerer.ask(searched, viewer, version=version)
        alone = answerer.ask(follow, viewer, version=version)
        thread_cited, alone_cited = cited_ids(in_thread), cited_ids(alone)
        rows.append(ThreadRow(
            id=t["id"], turns=list(t["turns"]), searched=searched, gold=gold,
            in_thread_state=in_thread.state, in_thread_cited=thread_cited,
            in_thread_correct=bool(set(thread_cited) & set(gold)),
            alone_state=alone.state, alone_cited=alone_cited, alone_correct=bool(set(alone_cited) & set(gold)),
        ))
    return rows


def thread_metrics(rows: Sequence[ThreadRow]) -> dict[str, Any]:
    """Share of threads whose follow-up cites gold in its thread, asked alone, and the difference."""
    if not rows:
        return {"threads": 0, "in_thread": None, "alone": None, "gain": None}
    in_thread = round(sum(r.in_thread_correct for r in rows) / len(rows), 4)
    alone = round(sum(r.alone_correct for r in rows) / len(rows), 4)
    return {"threads": len(rows), "in_thread": in_thread, "alone": alone, "gain": round(in_thread - alone, 4)}


SWITCH_PAIRS = 20  # new-topic pairs per set: enough to see a rule that drags the old subject in, cheap to run


def switch_pairs(questions: Sequence[dict[str, Any]], n: int = SWITCH_PAIRS) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Consecutive answerable questions with no gold page in common: a thread that changes subject."""
    def pages(q: dict[str, Any]) -> set[str]:
        return {g.split("#")[0] for g in q["gold"]}

    answerable = [q for q in questions if q.get("answerable") and not q.get("groups") and q.get("gold")]
    pairs = [(a, b) for a, b in zip(answerable, answerable[1:], strict=False) if not pages(a) & pages(b)]
    return pairs[::2][:n]  # every other pair, so no question is asked twice as the second


def run_switches(answerer: Answerer, condenser: Condenser, questions: Sequence[dict[str, Any]],
                 asked: Mapping[str, Answer] | None = None) -> dict[str, Any]:
    """Share of new-topic questions citing their gold when asked after an unrelated one, and alone.

    `asked` holds the answers the set's own run already gave, by question id: asked alone, a question is not
    asked again.
    """
    pairs = switch_pairs(questions)
    if not pairs:
        return {"pairs": 0, "in_thread": None, "alone": None, "rewritten": 0}
    in_thread = alone = rewritten = 0
    for first, second in pairs:
        version = second.get("version") or None
        prefer = functools.partial(answerer.likelier, viewer=Viewer.of([]), version=version)
        searched = rewrite(second["question"], thread_history([first["question"]], condenser, prefer), condenser,
                           prefer).question
        gold = set(second["gold"])
        answer = (asked or {}).get(second["id"]) or answerer.ask(second["question"], Viewer.of([]), version=version)
        alone += bool(set(cited_ids(answer)) & gold)
        if searched != second["question"]:
            rewritten += 1
            answer = answerer.ask(searched, Viewer.of([]), version=version)
        in_thread += bool(set(cited_ids(answer)) & gold)
    return {"pairs": len(pairs), "in_thread": round(in_thread / len(pairs), 4), "alone": round(alone / len(pairs), 4),
            "rewritten": rewritten}
