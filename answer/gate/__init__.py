"""The answer gate: which verified spans answer the question, in what order, or why nothing does.

The grounding contract (`draft`, `verify`, `pipeline`, `record`) decides what
may be shown: verbatim quotes of this request's readable sections. This stage
decides what *answers*: the direct answer first, supporting spans after it,
rival values from sources that disagree beside it, a refusal with its reasons
when nothing is to the point. It only orders and drops what the verifier
passed, so no heuristic here can make a citation less true.

Read it in this order: `question` (what is asked), `features` (how a span is
scored, by named features), `shape` and `conflicts` (signals of a sentence's
own form; navigation and history are `ingest.context_sentences`, which retrieval reads
too), `vocabulary` (term rarity over public docs), `stage` (the tests and the
two calls), `weights` (every number they use).
"""

from .question import Question, analyze
from .stage import AnswerGate, Judgement, Verdict
from .weights import Thresholds, Weights

__all__ = ["AnswerGate", "Judgement", "Question", "Thresholds", "Verdict", "Weights", "analyze"]
