"""Recent answers kept in memory, so a follow-up posted without JavaScript can show its whole thread.

Only answers produced for the same viewer are returned: an answer id is not a
capability, and a turn computed for staff must never render for a visitor.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from retrieval.viewer import Viewer

MAX_TURNS = 20


class TurnCache:
    """A bounded, thread-safe map of answer id → Answer (oldest evicted first)."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, answer: Any) -> None:
        with self._lock:
            self._items[answer.id] = answer
            self._items.move_to_end(answer.id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def get(self, answer_id: str) -> Any | None:
        with self._lock:
            return self._items.get(answer_id)

    def thread(self, ids: Iterable[str], viewer: Viewer) -> list[Any]:
        """The earlier turns of a thread that this viewer asked, in the order given (at most MAX_TURNS)."""
        found = [a for a in (self.get(i) for i in dict.fromkeys(ids)) if a is not None and a.retrieval.viewer == viewer]
        return found[-MAX_TURNS:]
