"""Which client a request counts against: the socket's peer, or the address a trusted proxy says it saw.

Behind a reverse proxy every request comes from the proxy's own address, so
the proxy's forwarding header (TRUSTED_PROXY_HEADER, e.g. X-Forwarded-For)
names the client instead. Only its right-most entry is used: that is the
address the proxy itself appended, while anything left of it arrived from
the client and can be forged. IPv6 clients are counted per /64, the block one
subscriber is usually given, so rotating addresses inside it buys nothing.
"""

from __future__ import annotations

import ipaddress
from typing import Any

IPV6_PREFIX = 64


def client_address(scope: Any, trusted_header: str = "") -> str:
    """The client to count this request against (an address, an IPv6 /64, or "unknown")."""
    if trusted_header:
        name = trusted_header.lower().encode("latin-1")
        values = [value for key, value in scope.get("headers") or [] if key.lower() == name]
        entries = [e.strip() for value in values for e in value.decode("latin-1").split(",") if e.strip()]
        if entries:  # several copies of the header read as one list, in order (RFC 9110 field lines)
            return _bucket(entries[-1])
    client = scope.get("client")
    return _bucket(str(client[0])) if client else "unknown"


def _bucket(address: str) -> str:
    try:
        parsed = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return address[:64]  # a socket path or a proxy's own label: count it as it is
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, IPV6_PREFIX), strict=False))
    return str(parsed)
