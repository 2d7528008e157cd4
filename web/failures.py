"""What a visitor is told when a request fails: decided once, shown as JSON, a page or a streamed turn.

The page, the stream and the API used to decide this each on their own, and
an outage was reported twice in two ways; now every handler and every
exception handler asks `failure` and only chooses how to show the answer.
An outage of a store also says what the operator does about it (`fix`): the
health check and the staff pages show that, the chat does not.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request

from answer.errors import AnswerLogDamagedError, AnswerLogError, AuditUnreachableError
from retrieval.errors import IndexDamagedError, IndexMismatchError, QueryError, SiteMismatchError, StoreUnavailableError

from .identity import IdentityError
from .questions import QuestionError
from .thread_ids import ThreadIdError

log = logging.getLogger(__name__)
UNAVAILABLE = "The docs index is unavailable right now. Please try again in a moment."
INTERNAL = "Something went wrong (an internal error); it has been logged."
LOG_DAMAGED = ("The answer log is damaged: answers are still served but not recorded, and past answers, "
               "threads and feedback cannot be read from it.")
LOG_UNAVAILABLE = "The answer log cannot be read or written right now; answers are still served."
FIX_INDEX_DAMAGED = ("Stop the server and run `make ingest FULL=1`: it moves the damaged index (DATA_DIR/chroma) aside, "
                     "renamed with the time, and rebuilds it from the content folder; then start the server again.")
FIX_INDEX_DOWN = "Check that Chroma (CHROMA_URL, or DATA_DIR/chroma when embedded) is running and reachable."
FIX_INDEX_MISMATCH = "Run `make ingest FULL=1` to rebuild the index with the configured embedding model."
FIX_SITE_MISMATCH = ("Serve each site with its own DATA_DIR (or CHROMA_URL), e.g. `CONTENT_DIR=docs DATA_DIR=.data-docs "
                     "make serve`; to replace this index with the other site on purpose, run `make ingest FULL=1`.")
FIX_LOG_DAMAGED = ("Restart the server: it moves the damaged file (DATA_DIR/answers.sqlite3) aside, renamed with the "
                   "time, and starts a fresh log. Or stop the server and move the file aside yourself.")
FIX_LOG_UNAVAILABLE = ("Check that DATA_DIR is writable and that no other process holds DATA_DIR/answers.sqlite3 locked "
                       "(the server log has the details).")
FIX_LOG_UNREACHABLE = ("Check that the PostgreSQL server DATABASE_URL names is running and reachable from this replica, "
                       "and that the URL's user, password and database are right (the server log has the details).")
FIX_INTERNAL = "See the server log for the error."


@dataclass(frozen=True)
class Failure:
    status: int
    message: str
    retry: bool = True  # whether asking the same thing again may work (a bad question will not)
    fix: str = ""  # what the operator does about it, for the health check and the staff pages


def failure(exc: Exception, where: str) -> Failure:
    """The status and message for an exception; outages and bugs are logged here, once."""
    if isinstance(exc, QuestionError | QueryError | IdentityError | ThreadIdError):
        return Failure(400, str(exc), retry=False)
    if isinstance(exc, StoreUnavailableError | IndexMismatchError):
        log.error("service unavailable: %s", exc)
        return Failure(503, UNAVAILABLE, fix=fix_for(exc))
    if isinstance(exc, AnswerLogDamagedError):  # the log itself reported this once, when it found the damage
        return Failure(503, LOG_DAMAGED, fix=fix_for(exc))
    if isinstance(exc, AnswerLogError):
        log.error("answer log unavailable: %s", exc)
        return Failure(503, LOG_UNAVAILABLE, fix=fix_for(exc))
    if isinstance(exc, HTTPException):
        return Failure(exc.status_code, exc.detail)
    log.error("unhandled error on %s", where, exc_info=exc)
    return Failure(500, INTERNAL, fix=fix_for(exc))


def fix_for(exc: Exception) -> str:
    """What the operator does about a failing store: for the health check, the staff pages and a refused start."""
    if isinstance(exc, IndexDamagedError):
        return FIX_INDEX_DAMAGED
    if isinstance(exc, SiteMismatchError):
        return FIX_SITE_MISMATCH
    if isinstance(exc, IndexMismatchError):
        return FIX_INDEX_MISMATCH
    if isinstance(exc, StoreUnavailableError):
        return FIX_INDEX_DOWN
    if isinstance(exc, AnswerLogDamagedError):
        return FIX_LOG_DAMAGED
    if isinstance(exc, AuditUnreachableError):
        return FIX_LOG_UNREACHABLE
    if isinstance(exc, AnswerLogError):
        return FIX_LOG_UNAVAILABLE
    return FIX_INTERNAL


def wants_json(request: Request) -> bool:
    """The API and the health check answer in JSON; everything else is a page or a fragment of one."""
    return request.url.path.startswith("/api/") or request.url.path == "/healthz"
