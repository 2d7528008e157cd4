"""A finding: one thing the verifier or the answer gate found about a draft (mostly wrong, sometimes what to keep).

The claim it is about is a field, not a number inside the message, so the
audit view can put each finding beside its claim without reading the prose
back, and the prose stays free to change.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    text: str  # the whole sentence, as a retry prompt and a reader see it
    claim: int | None = None  # 1-based claim number in the draft; None when it is about the whole attempt

    def __str__(self) -> str:
        return self.text
