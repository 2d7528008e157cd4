"""What the audit page shows beyond the stored record: each drafted claim's outcome and why.

The record keeps every draft and the findings of the attempt that was used;
the findings of an earlier attempt are the feedback its retry was given, so
every attempt can say what happened to each of its claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_CLAIM_NO = re.compile(r"^claim (\d+)\b")


@dataclass(frozen=True)
class Outcome:
    number: int
    text: str
    quotes: tuple[tuple[str, str], ...]  # (handle, quote) as the generator proposed them
    outcome: str  # supported / partial / not shown
    why: tuple[str, ...]


@dataclass(frozen=True)
class Attempt:
    number: int
    error: str
    feedback: tuple[str, ...]
    outcomes: tuple[Outcome, ...]
    findings_known: bool


def attempts(record: dict[str, Any]) -> list[Attempt]:
    """One entry per generator attempt, each claim with its verification outcome and the findings about it."""
    drafts = record.get("drafts") or []
    shown = {c["text"]: c for c in record.get("claims", [])}
    out: list[Attempt] = []
    for i, draft in enumerate(drafts):
        if "problems" in draft:  # recorded per attempt by the pipeline: exact, nothing to infer
            findings, known = list(draft["problems"]), True
        elif i + 1 < len(drafts):
            findings, known = list(drafts[i + 1].get("feedback") or []), True
        else:
            findings = list(record.get("problems") or [])
            # a retry whose stored findings equal its own feedback means the first attempt was kept
            known = not (i and findings == list(draft.get("feedback") or []))
        outcomes = []
        for n, claim in enumerate((draft.get("draft") or {}).get("claims", []), start=1):
            text = claim.get("claim", "")
            final = shown.get(text)
            why = tuple(p for p in findings if _claim_number(p) == n) if known else ()
            if final is not None:
                why += tuple(final.get("reasons") or ())
            outcomes.append(Outcome(n, text, tuple((q.get("handle", ""), q.get("quote", "")) for q in claim.get("quotes", [])),
                                    final["status"] if final is not None else "not shown", why))
        out.append(Attempt(i + 1, draft.get("error", ""), tuple(draft.get("feedback") or ()), tuple(outcomes), known))
    return out


def _claim_number(problem: str) -> int | None:
    match = _CLAIM_NO.match(problem)
    return int(match.group(1)) if match else None
