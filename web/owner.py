"""Which browser is asking, for thread ownership: the chat page's cookie, or the token the widget or an API client keeps.

The chat page gets an HttpOnly, SameSite=Strict cookie the first time it asks
(a script on the page cannot read it, and no other site's form can send it).
The widget calls this server cross-origin without cookies, so it is handed
its token once (an `owner` stream event; `owner_token` in the API's JSON) and
sends it back (`owner=` on the stream, `owner_token` in the API body). A
browser that keeps neither is a stranger to its own threads: each follow-up
forks. An owner token is the browser's proof that it started a thread; only its hash is stored with the
thread's turns.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from .thread_ids import ThreadIdError

COOKIE = "docs_chat_owner"
COOKIE_MAX_AGE = 180 * 24 * 3600
_OWNER_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)


def new_owner_token() -> str:
    return secrets.token_urlsafe(32)


def owner_token(value: object) -> str | None:
    """A client-sent owner token, only when it has the shape this server mints."""
    return value if isinstance(value, str) and _OWNER_TOKEN.fullmatch(value) else None


def owner_hash(token: str) -> str:
    """What is stored with a thread's turns: a leaked log never lets anyone write into the thread."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class Owner:
    token: str
    minted: bool  # new for this request: the response must hand it over


def read_owner(request: Request, sent: object = None) -> Owner:
    """The owner token sent explicitly, else the cookie's, else a new one; raises ThreadIdError for a malformed one sent."""
    if sent is not None and sent != "":
        token = owner_token(sent)
        if token is None:
            shown = repr(sent[:50]) if isinstance(sent, str) else type(sent).__name__
            raise ThreadIdError(f"owner token {shown} was not minted by this server (43 URL-safe characters, exactly as "
                                "returned); leave it out and the follow-up starts a thread of its own")
        return Owner(token, minted=False)
    cookie = owner_token(request.cookies.get(COOKIE))
    return Owner(cookie, minted=False) if cookie else Owner(new_owner_token(), minted=True)


def remember(response: Response, owner: Owner, request: Request) -> None:
    """Set the chat page's owner cookie when this request minted the token."""
    if owner.minted:
        response.set_cookie(COOKIE, owner.token, max_age=COOKIE_MAX_AGE, path="/", httponly=True, samesite="strict",
                            secure=over_https(request))


def over_https(request: Request) -> bool:
    """Whether the visitor reached this server over HTTPS: its own TLS, or a TLS-terminating proxy the operator
    trusts (TRUSTED_PROXY_HEADER set) saying so in X-Forwarded-Proto. A client's own claim counts for nothing."""
    if request.url.scheme == "https":
        return True
    from .state import state_of

    trusted = state_of(request).settings.trusted_proxy_header
    proto = request.headers.getlist("x-forwarded-proto")
    return bool(trusted) and bool(proto) and proto[-1].split(",")[-1].strip().lower() == "https"
