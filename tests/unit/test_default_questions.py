"""A question about what happens when nothing is given is answered by the sentence that says so.

"What port does the dev server use when I don't pass --port?" was answered on
a site nobody here tuned on with where the option is available; the section's
"If not specified, …" sentence, the default itself, was not quoted, because
only the word "default" counted as stating one.
"""

from __future__ import annotations

import pytest

from answer.gate import AnswerGate
from answer.gate.features import AnswerExtractor
from answer.gate.question import DEFAULT
from answer.gate.shape import shape_fit
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import make_chunk


@pytest.mark.parametrize("sentence", ["If not specified, the dev server listens on port 4321.",
                                      "When omitted, Ferry uses the first adapter it finds.",
                                      "Ferry falls back to the Node adapter.",
                                      "Unless you set `base`, pages are served from the site root."])
def test_a_sentence_saying_what_happens_when_nothing_is_given_states_a_default(sentence: str):
    assert shape_fit(DEFAULT, sentence) == 1
    assert shape_fit(DEFAULT, "The --port option is available on every command.") == 0


def test_the_default_sentence_is_scored_as_the_shape_a_default_question_asks_for():
    question = "What port does the dev server listen on when I don't pass --port?"
    gate = AnswerGate(AnswerExtractor())
    asked = gate.question(question)
    assert asked.kind == DEFAULT
    stated = make_chunk("guide/dev", "ports", "If not specified, the dev server listens on port 4321.", heading="Ports")
    rset = renumber(question, Viewer.anonymous(), [(stated, 1.0)])
    [scored] = gate.extractor.rank(asked, rset)
    assert scored.features.get("type", 0.0) > 0
