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


# -- what a staff reader may see of an answer given to someone else ------------------------------------

RESTRICTED = "restricted source"
WITHHELD = "withheld: this attempt saw sources your groups may not read"


def readable_handles(record: dict[str, Any], groups: frozenset[str], live: dict[str, str]) -> set[str]:
    """Handles of the record's retrieved chunks the reader may read.

    An answer given to a subset of the reader's groups could only retrieve what
    the reader may read. Otherwise a chunk counts as readable only when the
    live index still holds it, readable by the reader, with the hash the
    answer saw (`live`: id → hash of what the reader may read now); anything
    else is unknown, and unknown is restricted.
    """
    retrieved = record.get("retrieved") or []
    if set(record.get("viewer_groups") or ()) <= groups:
        return {r["handle"] for r in retrieved}
    return {r["handle"] for r in retrieved if live.get(r.get("id", "")) == r.get("hash")}


def needs_lookup(record: dict[str, Any], groups: frozenset[str]) -> list[str]:
    """Chunk ids whose live access decides what the reader sees ([] when the asker's groups are the reader's)."""
    if set(record.get("viewer_groups") or ()) <= groups:
        return []
    return [r["id"] for r in record.get("retrieved") or [] if r.get("id")]


def redact(record: dict[str, Any], readable: set[str]) -> dict[str, Any]:
    """The record with everything drawn from unreadable sources replaced by a placeholder, same shape.

    Retrieved chunks and citations the reader may not read lose id, title, URL
    and text. A generator that saw such a chunk may have put its words
    anywhere, so when one was retrieved, only shown claims whose every
    citation is readable keep their text, proposed quotes are kept only when
    they are verbatim in a readable chunk, and raw output, findings, feedback
    and unverified text are withheld.
    """
    retrieved = record.get("retrieved") or []
    if all(r["handle"] in readable for r in retrieved):
        return record
    texts = [r.get("text", "") for r in retrieved if r["handle"] in readable]
    out = dict(record)
    out["retrieved"] = [r if r["handle"] in readable else _restricted_chunk(r["handle"]) for r in retrieved]
    claims = []
    for claim in record.get("claims") or []:
        if all(c.get("handle") in readable for c in claim.get("citations") or []):
            claims.append(claim)
        else:
            claims.append(claim | {"text": RESTRICTED, "reasons": [], "citations": [
                _restricted_citation(c) for c in claim.get("citations") or []]})
    out["claims"] = claims
    allowed = {c["text"] for c in claims if c["text"] != RESTRICTED}
    out["drafts"] = [_redact_draft(d, readable, texts, allowed) for d in record.get("drafts") or []]
    out["problems"] = [WITHHELD] if record.get("problems") else []  # findings quote the generator's text
    out["hidden"] = [WITHHELD] if record.get("hidden") else []
    return out


def _restricted_chunk(handle: str) -> dict[str, Any]:
    return {"handle": handle, "id": RESTRICTED, "title": RESTRICTED, "url": "", "heading_path": [],
            "doc_version": "", "hash": "", "text": "Your groups may not read this source."}


def _restricted_citation(citation: dict[str, Any]) -> dict[str, Any]:
    return {"handle": citation.get("handle", ""), "chunk_id": RESTRICTED, "doc_version": "", "hash": "",
            "quote": RESTRICTED, "title": RESTRICTED, "url": "", "heading_path": []}


def _redact_draft(entry: dict[str, Any], readable: set[str], texts: list[str], allowed: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"feedback": [WITHHELD] if entry.get("feedback") else []}
    if "error" in entry:
        out["error"] = WITHHELD
    if "problems" in entry:
        out["problems"] = [WITHHELD] if entry["problems"] else []
    draft = entry.get("draft")
    if isinstance(draft, dict):
        claims = []
        for claim in draft.get("claims") or []:
            quotes = [{"handle": q.get("handle", ""), "quote": q.get("quote", "")
                       if q.get("handle") in readable and any(q.get("quote", "") in t for t in texts) else RESTRICTED}
                      for q in claim.get("quotes") or []]
            claims.append({"quotes": quotes, "claim": claim.get("claim", "") if claim.get("claim") in allowed else RESTRICTED})
        out["draft"] = {"refused": draft.get("refused", False), "claims": claims}
    return out

