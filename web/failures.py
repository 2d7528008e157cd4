"""What a visitor is told when a request fails: decided once, shown as JSON, a page or a streamed turn.

The page, the stream and the API used to decide this each on their own, and
an outage was reported twice in two ways; now every handler and every
exception handler asks `failure` and only chooses how to show the answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request

from retrieval.errors import IndexMismatchError, QueryError, StoreUnavailableError

from .identity import IdentityError
from .questions import QuestionError
from .thread_ids import ThreadIdError

log = logging.getLogger(__name__)
UNAVAILABLE = "The docs index is unavailable right now. Please try again in a moment."
INTERNAL = "Something went wrong (an internal error); it has been logged."


@dataclass(frozen=True)
class Failure:
    status: int
    message: str
    retry: bool = True  # whether asking the same thing again may work (a bad question will not)


def failure(exc: Exception, where: str) -> Failure:
    """The status and message for an exception; outages and bugs are logged here, once."""
    if isinstance(exc, QuestionError | QueryError | IdentityError | ThreadIdError):
        return Failure(400, str(exc), retry=False)
    if isinstance(exc, StoreUnavailableError | IndexMismatchError):
        log.error("service unavailable: %s", exc)
        return Failure(503, UNAVAILABLE)
    if isinstance(exc, HTTPException):
        return Failure(exc.status_code, exc.detail)
    log.error("unhandled error on %s", where, exc_info=exc)
    return Failure(500, INTERNAL)


def wants_json(request: Request) -> bool:
    """The API and the health check answer in JSON; everything else is a page or a fragment of one."""
    return request.url.path.startswith("/api/") or request.url.path == "/healthz"
