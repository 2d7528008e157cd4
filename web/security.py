"""Response headers that cost nothing and close whole classes of attack: no sniffing, no Referer, a CSP.

The Content-Security-Policy fits the UI as it is: scripts, styles and
connections only from this origin (the vendored htmx and app.js; no inline
script, no eval — the composer's reset lives in app.js, not an hx-on
attribute; no inline style — htmx is told not to inject its indicator
`<style>`, which the UI does not use: base.html's htmx-config), and
`frame-ancestors` naming this origin, the docs site's origin when it is
another one (the widget frames the chat there) and FRAME_ANCESTORS.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit


def frame_ancestors(configured: str, base_url: str) -> list[str]:
    """Who may frame the UI: this origin, the docs site when it lives on another origin, and FRAME_ANCESTORS."""
    sources = ["'self'"]
    if base_url.startswith(("https://", "http://")):
        parts = urlsplit(base_url)
        sources.append(f"{parts.scheme}://{parts.netloc}")
    sources.extend(o for o in configured.split() if o not in sources)
    return sources


def content_security_policy(ancestors: list[str]) -> str:
    """Scripts, styles and connections from this origin only (the vendored htmx, no eval, no inline script)."""
    return "; ".join([
        "default-src 'self'", "script-src 'self'", "style-src 'self'",
        "img-src 'self' data: https:", "connect-src 'self'", "font-src 'self'", "object-src 'none'",
        "base-uri 'none'", "form-action 'self'", "frame-ancestors " + " ".join(ancestors),
    ])


SHARED = ("/static/", "/widget.js", "/favicon")  # the same bytes for every reader: caches may keep them


class SecurityHeaders:
    """Cheap defence in depth on every response: no MIME sniffing, no question text leaked in Referer, a CSP.

    And no shared cache keeps what one reader was shown: answers, docs pages and search depend on the reader's
    groups (the identity header) and threads on their owner cookie, so every response but the static assets
    says `Cache-Control: private, no-store` and varies on both.
    """

    HEADERS = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]

    def __init__(self, app: Any, *, csp: Callable[[], str] | None = None, identity_header: str = "") -> None:
        self.app = app
        self._csp = csp
        self._headers: list[tuple[bytes, bytes]] | None = None
        self._vary = ", ".join([*([identity_header] if identity_header else []), "Cookie"]).encode()

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        if self._headers is None:
            policy = self._csp() if self._csp else ""
            self._headers = self.HEADERS + ([(b"content-security-policy", policy.encode())] if policy else [])
        return self._headers

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        personal = not str(scope.get("path", "")).startswith(SHARED)

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + self.headers
                message["headers"] = self._private(headers) if personal else headers
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _private(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        """`headers` with Cache-Control private, no-store and the reader's headers added to any Vary already set."""
        vary = [value for name, value in headers if name.lower() == b"vary"]
        kept = [(n, v) for n, v in headers if n.lower() not in (b"cache-control", b"vary")]
        return kept + [(b"cache-control", b"private, no-store"), (b"vary", b", ".join([*vary, self._vary]))]
