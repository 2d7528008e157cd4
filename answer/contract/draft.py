"""What a generator proposes: claims, each listing its quotes *before* its text.

Quote-first is the contract: the model must commit to evidence before it
writes a sentence about it. A draft is only a proposal; nothing in it is shown
until the verifier has checked it against this request's retrieval set.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import DraftFormatError

DRAFT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    # Claims before the verdict: under grammar-constrained decoding the model writes in this order, so it
    # looks for quotes before it decides to refuse, instead of committing to a refusal first.
    "required": ["claims", "refused"],
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["quotes", "claim"],
                "properties": {
                    "quotes": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["handle", "quote"],
                            "properties": {
                                "handle": {"type": "string", "description": "a passage handle such as c1"},
                                "quote": {"type": "string", "description": "copied verbatim from that passage"},
                            },
                        },
                    },
                    "claim": {"type": "string", "description": "one sentence the quotes support"},
                },
            },
        },
        "refused": {"type": "boolean", "description": "true when the passages do not answer the question"},
    },
}


@dataclass(frozen=True)
class Quote:
    handle: str
    text: str
    # A provider-native citation as received (with our range check), kept for the audit beside the verdict.
    provider: dict[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DraftClaim:
    quotes: tuple[Quote, ...]
    text: str


@dataclass(frozen=True)
class PartialClaim:
    """One claim of a draft still being written, complete in itself: what a streaming generator yields first."""

    claim: DraftClaim
    shown: tuple[str, ...] | None = None  # the handles the generator was shown, as on the finished draft
    written: float = 0.0  # seconds from the request to the model finishing this claim (to compare with it shown)


@dataclass(frozen=True)
class Draft:
    refused: bool
    claims: tuple[DraftClaim, ...]
    raw: str = field(default="", compare=False)  # the generator's output as received, for the audit
    shown: tuple[str, ...] | None = None  # handles the generator was shown; None = the whole retrieval set
    reasons: tuple[str, ...] = field(default=(), compare=False)  # why it refused, when the generator can say
    closest: bool = False  # it found no answer: the claims are the closest passages, never to be shown as an Answer
    unmentioned: tuple[str, ...] = field(default=(), compare=False)  # a refusal: the question's words no section names

    def to_dict(self) -> dict[str, Any]:
        return {
            "refused": self.refused,
            "claims": [
                {"quotes": [{"handle": q.handle, "quote": q.text} for q in c.quotes], "claim": c.text}
                for c in self.claims
            ],
        }


def draft_from_dict(data: Any, raw: str = "") -> Draft:
    """Validate a decoded draft; every shape problem is a DraftFormatError naming where it is."""
    if not isinstance(data, dict):
        raise DraftFormatError(f"draft must be a JSON object, got {type(data).__name__}")
    refused = data.get("refused", False)
    claims_in = data.get("claims", [])
    if not isinstance(refused, bool):
        raise DraftFormatError(f"'refused' must be true or false, got {refused!r}")
    if not isinstance(claims_in, list):
        raise DraftFormatError(f"'claims' must be a list, got {type(claims_in).__name__}")
    claims: list[DraftClaim] = []
    for n, item in enumerate(claims_in):
        if not isinstance(item, dict):
            raise DraftFormatError(f"claims[{n}] must be an object")
        text = item.get("claim")
        quotes_in = item.get("quotes")
        if not isinstance(text, str) or not isinstance(quotes_in, list):
            raise DraftFormatError(f"claims[{n}] needs a 'claim' string and a 'quotes' list")
        quotes: list[Quote] = []
        for m, quote in enumerate(quotes_in):
            if not isinstance(quote, dict) or not isinstance(quote.get("handle"), str) or not isinstance(quote.get("quote"), str):
                raise DraftFormatError(f"claims[{n}].quotes[{m}] needs 'handle' and 'quote' strings")
            quotes.append(Quote(quote["handle"].strip(), quote["quote"]))
        claims.append(DraftClaim(tuple(quotes), text.strip()))
    return Draft(refused=refused, claims=tuple(claims), raw=raw)


_FENCED_JSON = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


def parse_draft(text: str) -> Draft:
    """Parse a model reply that should be a JSON draft (bare, or in a ```json fence)."""
    try:
        return draft_from_dict(decode_reply(text), raw=text)
    except DraftFormatError as exc:
        exc.raw = exc.raw or text  # the audit keeps what the model actually said
        raise


def decode_reply(text: str) -> Any:
    """The JSON value of a model reply: bare, in a ```json fence, or the outermost {...} of prose around it."""
    if not text or not text.strip():
        raise DraftFormatError("the model returned an empty reply")
    candidate = text.strip()
    fenced = _FENCED_JSON.search(candidate)
    if fenced:
        candidate = fenced.group(1)
    elif not candidate.startswith("{"):
        start, end = candidate.find("{"), candidate.rfind("}")
        if start == -1 or end <= start:
            raise DraftFormatError(f"the reply is not JSON: {text[:80]!r}")
        candidate = candidate[start : end + 1]
    try:
        return json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise DraftFormatError(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})") from exc
