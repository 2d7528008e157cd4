"""Cross-site writes refused: only this site's pages and the widget's origins may ask or rate.

A form on another site can POST to `/ask` with the visitor's browser, and an
`<img>` there can GET `/ask/stream`; either would create an answer in the log
under whatever identity the visitor's proxy attaches. Browsers say where a
request comes from: `Origin` (CORS requests and every POST) and
`Sec-Fetch-Site` (every request of a current browser). A request whose Origin
is neither this site (its Host) nor a CORS_ORIGINS entry, or which has no
Origin and is marked `same-site` or `cross-site`, is refused with a 403. A
request with neither header (curl, a server-side client) is not a browser
acting for someone else and goes ahead.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from .failures import Failure
from .guarded import guarded, refusal

_DEFAULT_PORTS = {"http": 80, "https": 443}
_ALLOWED_SITES = (b"same-origin", b"none")  # none: the visitor typed the address or used a bookmark


def cross_site(headers: dict[bytes, bytes], allowed: frozenset[str]) -> str | None:
    """Why a request comes from a site that may not write here, or None when it may."""
    origin = headers.get(b"origin")
    if origin is not None:
        text = origin.decode("latin-1").strip().rstrip("/")
        if text in allowed or _same_host(text, headers.get(b"host", b"").decode("latin-1")):
            return None
        return (f"A page on {text[:100]} may not ask this assistant: only this site and the origins in "
                "CORS_ORIGINS may.")
    site = headers.get(b"sec-fetch-site")
    if site is not None and site.strip().lower() not in _ALLOWED_SITES:
        return (f"A request another site made (Sec-Fetch-Site: {site.decode('latin-1')[:20]}) may not ask this "
                "assistant: ask from this site or from a page whose origin is in CORS_ORIGINS.")
    return None


def _same_host(origin: str, host: str) -> bool:
    """Whether an Origin names the host this request was sent to (default ports ignored, any scheme)."""
    parts = urlsplit(origin)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or not host:
        return False  # "null", file:, or no Host to compare with
    try:
        port = parts.port or _DEFAULT_PORTS[parts.scheme]
        target = urlsplit(f"{parts.scheme}://{host}")
        target_port = target.port or _DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return False
    return (parts.hostname, port) == (target.hostname, target_port)


class SameOrigin:
    """Refuse answer- and feedback-creating requests that a page on another site made (403)."""

    def __init__(self, app: Any, *, origins: frozenset[str]) -> None:
        self.app = app
        self.origins = origins

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and guarded(scope) is not None:
            why = cross_site({k.lower(): v for k, v in scope.get("headers") or []}, self.origins)
            if why is not None:
                await refusal(scope, Failure(403, why, retry=False))(scope, receive, send)
                return
        await self.app(scope, receive, send)
