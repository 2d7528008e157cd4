"""The content-gap report's vector of one question, made when its answer is written.

A report over a log whose vectors were written with the answers embeds
nothing: one question costs ~15 ms as it is answered, where a backlog of 10k
costs minutes on the staff page. The text embedded and its hash are the
report's own (`answer.reports.gaps.gap_text`, `text_hash`), so the report finds these
vectors in its cache; a site renamed since makes other text, which the next
report embeds again, as it does for any answer written without this index.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from retrieval.embedder import Embedder

from .gaps import gap_text, text_hash


class QuestionIndex:
    """Embeds questions the way the content-gap report does; the answer log calls it (`AnswerLog.index_gaps`)."""

    def __init__(self, embedder: Embedder, site_name: Callable[[], str]) -> None:
        self.embedder = embedder
        self.site_name = site_name  # asked each time: the web server's site follows what the index publishes

    @property
    def model(self) -> str:
        return self.embedder.id

    def digest(self, question: str) -> str:
        """The hash the report's vector of `question` is kept under (nothing is embedded)."""
        return text_hash(gap_text(question, self.site_name()))

    def vector(self, question: str) -> tuple[str, bytes]:
        """(text hash, float32 vector bytes) of `question`, as the report would embed and cache it."""
        text = gap_text(question, self.site_name())
        (vector,) = self.embedder.embed([text])
        return text_hash(text), np.asarray(vector, dtype=np.float32).tobytes()
