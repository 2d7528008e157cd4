"""Personal data out of visitors' text before it leaves the answer log in a report.

Visitors paste what they have into a question: their e-mail address, an API
key, a card or phone number. The audit view shows one answer to staff who
need the whole record; the content-gap report is read by the docs team and
exported to files, so its questions and reasons are redacted first. The rules
lean towards redacting: a version number or a date stays, but a bare run of
nine or more digits is taken for a phone or card number.
"""

from __future__ import annotations

import re

EMAIL = "[email]"
KEY = "[key]"
NUMBER = "[number]"

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
# Keys with a known shape (sk-…, fd_live_…, ghp_…, xoxb-…, AKIA…, a JWT), then any long token of key alphabet that
# mixes letters and digits (hex or base64 secrets); a long word of letters only is left alone.
_PREFIXED_KEY = re.compile(r"\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{12,}|\b[A-Za-z]{2,8}_(?:live|test)_[A-Za-z0-9]{8,}"
                           r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAKIA[0-9A-Z]{16}\b"
                           r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+)?")
_LONG_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_=-])(?=[A-Za-z0-9+/_=-]*\d)(?=[A-Za-z0-9+/_=-]*[A-Za-z])[A-Za-z0-9+/_=-]{32,}")
# A phone or card number: 9 to 19 digits, optionally led by + and split by single spaces, dashes, dots or brackets.
_PHONE_NUMBER = re.compile(r"(?<![\w.])\+?\(?\d(?:[ .()-]{0,2}\d){8,18}(?![\w.]*\d)")
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")


def redact(text: str) -> str:
    """`text` with e-mail addresses, key-like tokens and phone or card numbers replaced by a placeholder."""
    text = _EMAIL.sub(EMAIL, text)
    text = _PREFIXED_KEY.sub(KEY, text)
    text = _LONG_TOKEN.sub(KEY, text)
    return _PHONE_NUMBER.sub(_number, text)


def _number(match: re.Match[str]) -> str:
    found = match.group(0)
    return found if _IPV4.fullmatch(found) else NUMBER  # an address like 10.120.33.7 is not a phone number
