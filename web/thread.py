"""Conversation threads: which answers belong together, for follow-ups, reloads and shared links.

A thread is a list of turns (answer id, what the visitor typed, what was
searched, the asker's groups, the hash of the asking browser's owner token),
kept in the answer log's database when there is one and in memory otherwise
(or once that database is found damaged).
A thread id is signed by this server (`thread_ids`): one it did not mint is
refused, never made into a thread. An id is shareable as a link, but never a
capability: every reader sees each turn rebuilt for *their* groups, and only
the browser that started a thread (same owner token, same groups) extends it;
anyone else's follow-up forks it into a thread of their own. A turn whose
retrieval the reader could not have made (sources they may not read, or that
changed since) is withheld whole, question included, and never feeds the
reader's follow-up rewriting. There is no shortcut for the asker: a re-ingest
may have restricted, changed or deleted a source since, so every turn, the
asker's own reload included, is rebuilt from the live index (one lookup for
the whole thread). With no answer log, recent answers are kept in memory only
as the records to rebuild from.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from answer.contract.record import AnswerRecord
from answer.contract.result import Answer
from answer.errors import AnswerLogDamagedError, AnswerLogError
from answer.followup import Turn
from answer.log.protocol import AnswerLog, TurnRow
from answer.restore import restore
from ingest.documents import Chunk
from retrieval.protocols import StoreReader
from retrieval.viewer import Viewer

from .owner import owner_hash
from .thread_ids import LEGACY_THREAD_ID, ThreadIds, refused

log = logging.getLogger(__name__)
MAX_TURNS = 20


@dataclass(frozen=True)
class ThreadTurn:
    """One turn as a reader may see it: the answer rebuilt for them, or withheld."""

    answer_id: str
    asked: str
    question: str
    answer: Answer | None  # None: withheld from this reader
    stale: bool = False  # withheld only because its sources changed since: the reader may see the question and re-ask


class TurnCache:
    """Recent answers by id (bounded, oldest evicted first, thread-safe): records to rebuild from, never to serve."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._items: OrderedDict[str, Answer] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, answer: Answer) -> None:
        with self._lock:
            self._items[answer.id] = answer
            self._items.move_to_end(answer.id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def get(self, answer_id: str) -> Answer | None:
        with self._lock:
            return self._items.get(answer_id)


class Threads:
    """Threads over the answer log (durable) or memory (no log configured), read per viewer."""

    def __init__(self, audit: Callable[[], AnswerLog | None], store: Callable[[], StoreReader],
                 secret: Callable[[], bytes]) -> None:
        self._audit = audit  # callables: the answerer (and so its log), the store and the secret are built lazily
        self._store = store
        self._secret = secret
        self._ids: ThreadIds | None = None
        self.cache = TurnCache()
        self._memory: dict[str, list[TurnRow]] = {}
        self._lock = threading.Lock()

    @property
    def ids(self) -> ThreadIds:
        with self._lock:
            if self._ids is None:
                self._ids = ThreadIds(self._secret())
            return self._ids

    def new_id(self) -> str:
        return self.ids.new()

    def resolve(self, value: object) -> str:
        """The thread a client named, when this server minted it; raises ThreadIdError (a 400) for any other value."""
        if isinstance(value, str) and self.ids.signed(value):
            return value
        if isinstance(value, str) and LEGACY_THREAD_ID.fullmatch(value) and self.rows(value):
            return value  # minted, unsigned, by the previous version: it opens, but it is owned by nobody
        raise refused(value)

    def named(self, given: object, *, may_start: bool = False) -> str | None:
        """The thread a request names, checked: None when it names none; with `may_start`, "new" starts one.

        The one reading of a client's thread parameter, for pages, the stream and the API alike; any id this
        server did not mint raises ThreadIdError (a 400).
        """
        if given is None or given == "":
            return None
        if may_start and given == "new":
            return self.new_id()
        return self.resolve(given)

    def follow(self, given: object, viewer: Viewer, owner: str) -> str:
        """The thread a new turn goes to: a new one when none is named, else the named one (checked) or its fork."""
        thread_id = self.named(given)
        return self.new_id() if thread_id is None else self.fork(thread_id, viewer, owner)

    def _log(self) -> AnswerLog | None:
        """The answer log, or None when there is none or it is damaged (reported once, by the log itself)."""
        audit = self._audit()
        return None if audit is None or audit.damaged else audit

    def rows(self, thread_id: str) -> list[TurnRow]:
        audit = self._log()
        if audit is not None:
            try:
                return audit.thread(thread_id)[-MAX_TURNS:]
            except AnswerLogDamagedError:
                pass  # found damaged just now: threads carry on in memory
            except AnswerLogError as exc:  # an unreadable log costs the thread, never the answer
                log.error("could not read thread %s: %s", thread_id, exc)
                return []
        with self._lock:
            return list(self._memory.get(thread_id, []))[-MAX_TURNS:]

    def add(self, thread_id: str, answer: Answer, asked: str, owner: str) -> None:
        """Append a finished answer to a thread, as a turn of the browser holding the owner token."""
        self.cache.put(answer)
        groups, mine = answer.retrieval.viewer.groups, owner_hash(owner)
        audit = self._log()
        if audit is not None:
            try:
                audit.add_turn(thread_id, answer.id, asked, answer.question, groups, mine)
                return
            except AnswerLogDamagedError:
                pass  # found damaged just now: the turn is kept in memory instead
            except AnswerLogError:  # the visitor still gets the answer; only its place in the thread is lost
                log.exception("could not add answer %s to thread %s", answer.id, thread_id)
                return
        with self._lock:
            self._memory.setdefault(thread_id, []).append(TurnRow(answer.id, asked, answer.question, groups, mine))

    def fork(self, thread_id: str, viewer: Viewer, owner: str) -> str:
        """The thread a follow-up goes to: the same one when this owner asked all of it with these groups, else a copy.

        The copy holds the turns the viewer may see and belongs to them. A thread
        from a log written before owners were stored is owned by nobody: every
        follow-up forks it. A thread holding MAX_TURNS turns takes no more: the
        follow-up starts a new thread (so one thread id cannot grow the log
        without bound, and every turn of a thread stays one a reader is shown).
        """
        rows, mine = self.rows(thread_id), owner_hash(owner)
        if len(rows) >= MAX_TURNS:
            return self.new_id()
        if not rows or all(r.owner == mine and r.groups == viewer.groups for r in rows):
            return thread_id
        copy = self.new_id()
        for turn in self.turns(thread_id, viewer):
            if turn.answer is not None:
                self.add(copy, turn.answer, turn.asked, owner)
        return copy

    def turns(self, thread_id: str, viewer: Viewer) -> list[ThreadTurn]:
        """The thread as `viewer` may see it: each answer rebuilt for their groups from the live index, or withheld."""
        rows = self.rows(thread_id)
        records = {row.answer_id: self._record(row.answer_id) for row in rows}
        ids = sorted({r.id for record in records.values() if record is not None for r in record.retrieved if r.id})
        live = self._store().chunks(groups=sorted(viewer.groups), ids=ids) if ids else []
        out = []
        for row in rows:
            record = records[row.answer_id]
            answer = _rebuilt(record, viewer, live) if record is not None else None
            stale = answer is None and row.groups <= viewer.groups  # they could have asked it themselves
            out.append(ThreadTurn(row.answer_id, row.asked, row.question, answer, stale))
        return out

    def history(self, thread_id: str, viewer: Viewer) -> list[Turn]:
        """The earlier questions a follow-up may borrow from: only turns this viewer may see."""
        return [Turn(t.asked, t.question) for t in self.turns(thread_id, viewer) if t.answer is not None]

    def _record(self, answer_id: str) -> AnswerRecord | None:
        """What was answered, from the log, else from memory (no log, or its write failed): never shown as is."""
        audit = self._log()
        try:
            record = audit.get(answer_id) if audit is not None else None
        except AnswerLogDamagedError:
            record = None
        if record is None:
            cached = self.cache.get(answer_id)
            record = cached.record() if cached is not None else None
        return record


def _rebuilt(record: AnswerRecord, viewer: Viewer, live: Sequence[Chunk]) -> Answer | None:
    """The stored answer for `viewer` over the live chunks, or None when any source is unreadable or changed since."""
    answer = restore(record, viewer, live)
    if len(answer.retrieval.hits) != len(record.retrieved):
        return None  # the whole turn is withheld: never a partial rebuild of what someone else was shown
    return answer
