"""Grounding for agent-style callers: a tool that retrieves mid-trajectory gets the same contract.

An agent calls retrieval as a tool, then writes a draft about that tool
result. `ground_tool_result` checks the draft against exactly that retrieval
set with the same verifier as the chat pipeline, per tool result, and fails
closed: a draft that cannot be parsed verifies to nothing, with the reason
among the problems so the agent can retry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from retrieval.search import RetrievalSet
from retrieval.viewer import Viewer

from .contract.draft import draft_from_dict, parse_draft
from .contract.findings import Finding
from .contract.support import SupportChecker
from .contract.verify import Verification, verify
from .errors import DraftFormatError


def ground_tool_result(
    rset: RetrievalSet,
    draft: str | Mapping[str, Any],
    viewer: Viewer,
    *,
    checker: SupportChecker | None = None,
) -> Verification:
    """Verify an agent's draft (JSON text or decoded) against the retrieval set one tool call returned."""
    try:
        parsed = parse_draft(draft) if isinstance(draft, str) else draft_from_dict(dict(draft), raw=json.dumps(draft, default=str))
    except DraftFormatError as exc:
        return Verification(claims=(), problems=(Finding(f"the draft could not be used: {exc}"),))
    # A viewer can only ever gain from the tool result what both it and the retrieval's viewer may read.
    effective = viewer if viewer == rset.viewer else Viewer(frozenset(viewer.groups & rset.viewer.groups))
    return verify(parsed, rset, effective, checker=checker)
