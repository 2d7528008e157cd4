"""Who is asking, read from the one trusted proxy header, exactly.

The header is parsed as bytes, not as text to be tidied: group names are
ASCII tokens from the group alphabet separated by commas, with only ASCII
blanks around them. Anything else — a non-breaking space, a C1 control,
a second copy of the header, more than MAX_GROUPS named groups (`public` is not counted) — is refused
with a 400 instead of being trimmed into a name that grants something.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.documents import GROUP_RULE, PUBLIC, is_group_name
from retrieval.records import MAX_GROUPS
from retrieval.viewer import Viewer


class IdentityError(ValueError):
    """The identity header cannot be trusted as sent (the request gets a 400)."""


def read_viewer(header: str, raw_headers: Iterable[tuple[bytes, bytes]]) -> Viewer:
    """The viewer named by `header` among the request's raw headers; anonymous when it is absent."""
    name = header.lower().encode("latin-1")
    values = [value for key, value in raw_headers if key.lower() == name]
    if len(values) > 1:
        # A client-sent copy ahead of the proxy's would otherwise be the one read.
        raise IdentityError(f"the identity header {header} appears {len(values)} times; send it once")
    if not values:
        return Viewer.anonymous()
    return Viewer.of(parse_groups(values[0], header))


def parse_groups(value: bytes, header: str = "identity header") -> list[str]:
    """Comma-separated group names, each exactly in the group alphabet; blank entries are skipped."""
    try:
        text = value.decode("ascii")
    except UnicodeDecodeError as exc:
        raise IdentityError(f"the {header} header must be ASCII (byte {exc.start} is not)") from exc
    groups = [token.strip(" \t") for token in text.split(",")]
    groups = [g for g in groups if g]
    named = {g for g in groups if g != PUBLIC}  # every reader is in `public` besides; it is not counted
    if len(named) > MAX_GROUPS:
        raise IdentityError(f"the {header} header names {len(named):,} groups besides {PUBLIC}; the limit is {MAX_GROUPS}")
    for group in groups:
        if not is_group_name(group):
            shown = group if len(group) <= 40 else group[:40] + "…"
            raise IdentityError(f"the {header} header has a group name {shown!r} outside the alphabet: {GROUP_RULE}")
    return groups
