"""Cross-origin access for the embeddable widget: an allowlist of docs-site origins, never credentials.

The widget runs on the docs site's own pages and calls this server from
there. Only the few endpoints it needs answer cross-origin, only for origins
listed in CORS_ORIGINS, and never with `Access-Control-Allow-Credentials`: a
cross-origin caller is an anonymous visitor, whatever cookies or proxy
identity the browser might otherwise carry.
"""

from __future__ import annotations

import re
from typing import Any

# What the widget uses: its own files, the answer stream, its thread so far, the JSON API and feedback.
_PATHS = re.compile(r"^/(?:widget\.js|static/widget\.(?:js|css)|ask/stream|ask/thread|api/ask|api/answers/[0-9a-f]{1,40}/feedback)$")
MAX_AGE = b"600"


def allowed_origins(configured: str) -> frozenset[str]:
    """The configured origins, normalised to scheme://host[:port] without a trailing slash."""
    return frozenset(o.rstrip("/") for o in configured.split() if o.startswith(("http://", "https://")))


class CORS:
    """Adds CORS headers for allowlisted origins on the widget's endpoints and answers their preflights."""

    def __init__(self, app: Any, *, origins: frozenset[str]) -> None:
        self.app = app
        self.origins = origins

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.origins or not _PATHS.match(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        origin = headers.get(b"origin", b"").decode("latin-1")
        if origin not in self.origins:
            await self.app(scope, receive, send)
            return
        allow = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
        if scope["method"] == "OPTIONS" and b"access-control-request-method" in headers:
            await send({"type": "http.response.start", "status": 204, "headers": allow + [
                (b"access-control-allow-methods", b"GET, POST"), (b"access-control-allow-headers", b"content-type"),
                (b"access-control-max-age", MAX_AGE)]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_cors(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + allow
            await send(message)

        await self.app(scope, receive, send_with_cors)
