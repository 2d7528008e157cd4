"""The claims of a JSON draft that are complete so far, read from a reply still being written.

A local model writes a three-claim draft in tens of seconds. The first claim's
quotes are known long before the reply ends; reading each claim object as soon
as its closing brace arrives lets the pipeline verify it and put it on the page
while the model is still writing the next one. Only whole claim objects are
ever returned: a half-written quote is never read, let alone shown.
"""

from __future__ import annotations

import json
from typing import Any


class ClaimScanner:
    """Feed it the reply as it grows; `complete()` returns each claim object of `"claims": [...]` once, when closed.

    A small state machine over the characters (strings, escapes, nesting), so a brace inside a quoted
    sentence never closes anything. Text before the first `{` (a code fence, a preamble) is skipped.
    """

    def __init__(self) -> None:
        self._text = ""
        self._at = 0  # next character to read
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._key = ""  # the last complete string at depth 1 (a key of the top object)
        self._string_start = -1
        self._in_claims = False  # inside the top object's "claims" array
        self._claim_start = -1
        self._found: list[dict[str, Any]] = []
        self._returned = 0

    def feed(self, piece: str) -> list[dict[str, Any]]:
        """Add the next piece of the reply; the claims it completed, in order."""
        self._text += piece
        self._scan()
        new = self._found[self._returned:]
        self._returned = len(self._found)
        return new

    def _scan(self) -> None:
        text = self._text
        while self._at < len(text):
            char = text[self._at]
            if self._depth == 0 and char != "{":
                pass  # outside the draft object: a fence or a preamble, whatever quotes it has
            elif self._in_string:
                if self._escaped:
                    self._escaped = False
                elif char == "\\":
                    self._escaped = True
                elif char == '"':
                    self._in_string = False
                    if self._depth == 1:
                        self._key = text[self._string_start + 1 : self._at]
            elif char == '"':
                self._in_string, self._string_start = True, self._at
            elif char in "{[":
                self._open(char)
            elif char in "}]":
                self._close(char)
            self._at += 1

    def _open(self, char: str) -> None:
        self._depth += 1
        if char == "[" and self._depth == 2 and self._key == "claims":
            self._in_claims = True
        elif char == "{" and self._depth == 3 and self._in_claims:
            self._claim_start = self._at

    def _close(self, char: str) -> None:
        if char == "}" and self._depth == 3 and self._in_claims and self._claim_start >= 0:
            try:
                item = json.loads(self._text[self._claim_start : self._at + 1])
            except json.JSONDecodeError:
                item = None  # malformed: the whole reply's parse reports it
            if isinstance(item, dict):
                self._found.append(item)
            self._claim_start = -1
        elif char == "]" and self._depth == 2:
            self._in_claims = False
        self._depth = max(0, self._depth - 1)
