"""What counts as a question: checked at the edge, so bad input gets a clear 4xx, not a stack trace."""

from __future__ import annotations

import unicodedata
from typing import Any

from retrieval.search import MAX_QUESTION_CHARS


class QuestionError(ValueError):
    """The submitted question cannot be answered as given."""


def read_question(value: Any) -> str:
    """A cleaned question, or QuestionError saying what is wrong with it."""
    if value is None:
        raise QuestionError("please type a question")
    if not isinstance(value, str):
        raise QuestionError("the question must be text")
    if "\x00" in value or any(unicodedata.category(ch) == "Cs" for ch in value):
        raise QuestionError("the question contains characters that are not text")
    text = " ".join(unicodedata.normalize("NFC", value).split())
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf") or ch == " ")
    if not text:
        raise QuestionError("please type a question")
    if len(text) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question is {len(text):,} characters long; the limit is {MAX_QUESTION_CHARS:,}")
    return text
