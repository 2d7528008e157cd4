"""How sure the gate is that its direct answer answers: the line between an Answer and Related passages.

A span that passes every test of `stage.direct_verdict` is verbatim, supported
and near the question, and still often beside the point on a site nobody tuned
the gate on: the right section's wrong sentence, another section that
restates part of the question. What tells those apart is not a word list but
how the pick stands among the alternatives the gate weighed: how far it is
above the best span of another section, whether the section it comes from is
the one retrieval put first, how much of what the question asks it covers.

`signals` names those figures for one pick; `confidence` weighs them
(`weights.Confidence`, fitted on the labelled sets pooled and validated by
leaving each site out, see docs/performance.mdx) into the probability that
the pick carries the answer. Below `Confidence.answer_at` the gate still shows
the verified spans, as Related passages, never as an Answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from retrieval.search import RetrievalSet

from .features import Scored, readable_hits
from .question import Question
from .weights import Confidence

NO_RIVAL = 0.3  # the margin counted when no span of another section was scored at all


def signals(question: Question, chosen: Sequence[Scored], ranked: Sequence[Scored], rset: RetrievalSet) -> dict[str, float]:
    """The figures the confidence is weighed from, for a pick whose direct answer is `chosen[0]`."""
    direct = chosen[0]
    others = [s.order for s in ranked if s.span.handle != direct.span.handle]
    same = [s.order for s in ranked if s.span.handle == direct.span.handle and s is not direct]
    hits = readable_hits(rset)
    features = direct.features
    return {
        "score": direct.score,
        "meaning": features.get("meaning", 0.0),
        "section": features.get("section", 0.0),
        "terms": features.get("terms", 0.0),
        "asks": features.get("asks", 0.0),
        "identifiers": features.get("identifiers", 0.0),
        "type": features.get("type", 0.0),
        "margin": round(direct.order - max(others), 4) if others else NO_RIVAL,
        "margin_same": round(direct.order - max(same), 4) if same else NO_RIVAL,
        "hit_rank": float(direct.span.rank),
        "top_hit": 1.0 if direct.span.rank == 0 else 0.0,
        "hits": float(len(hits)),
        "wants_number": 1.0 if question.wants_number else 0.0,
        "has_identifiers": 1.0 if question.identifiers else 0.0,
    }


def confidence(values: Mapping[str, float], weights: Confidence) -> float:
    """The probability, by the fitted weights, that a pick with these signals carries the answer."""
    z = weights.bias + sum(weight * values.get(name, 0.0) for name, weight in weights.coefficients)
    return 1.0 / (1.0 + math.exp(-z))
