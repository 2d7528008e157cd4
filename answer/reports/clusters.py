"""Questions grouped by meaning: leader clustering on cosine similarity, deterministic, numpy only.

The content-gap report needs "the same question, asked many ways" as one
group. The method is the one Taylor and Butina use for molecules, on unit
vectors:

1. Two questions are *neighbours* when the cosine of their vectors reaches
   the threshold (a question is its own neighbour).
2. A question's *weight* is how many answers it stands for (identical
   questions are embedded once).
3. The unclaimed question whose unclaimed neighbours weigh most becomes a
   group's centre and takes all of them; their weight is removed from every
   other question's count; repeat until every question is in a group.

Every member is within the threshold of its centre, so groups never chain
together the way single linkage does (A like B like C, A nothing like C), and
no number of groups is chosen up front. Ties go to the earlier question, so
the same input in the same order always gives the same groups. A group's
label is its most central member: the highest weighted mean similarity to the
rest of the group.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
# all-MiniLM-L6-v2, questions with the site's name taken out (`gaps.topic_text`): paraphrases of one question
# mostly reach 0.5 (10th percentile 0.57 in the tests' set), different questions about one product stay below
# it (the highest pair 0.33); with the name left in, "Is there a … for Ferrydeck?" pairs reach 0.67.
THRESHOLD = 0.5
BLOCK_ROWS = 1024  # similarity rows computed at a time: 1,024 x 10k floats is 40 MB


def neighbours(vectors: Vectors, threshold: float) -> list[npt.NDArray[np.intp]]:
    """For each row, the indices of the rows whose cosine with it reaches `threshold` (itself included)."""
    out: list[npt.NDArray[np.intp]] = []
    for start in range(0, len(vectors), BLOCK_ROWS):
        block = vectors[start:start + BLOCK_ROWS] @ vectors.T
        for offset, row in enumerate(block):
            near = np.flatnonzero(row >= threshold)
            if start + offset not in near:  # rounding can put a vector a hair under 1.0 against itself
                near = np.sort(np.append(near, start + offset))
            out.append(near)
    return out


def cluster(vectors: Vectors, weights: Sequence[int] | None = None, threshold: float = THRESHOLD) -> list[list[int]]:
    """Row indices grouped as described above, heaviest group first; each group's centre is its first index."""
    count = len(vectors)
    if count == 0:
        return []
    weight = np.ones(count) if weights is None else np.asarray(weights, dtype=np.float64)
    near = neighbours(np.asarray(vectors, dtype=np.float32), threshold)
    score = np.array([weight[n].sum() for n in near])
    claimed = np.zeros(count, dtype=bool)
    groups: list[list[int]] = []
    while not claimed.all():
        centre = int(np.argmax(np.where(claimed, -np.inf, score)))  # argmax takes the first of equal scores
        members = [int(i) for i in near[centre] if not claimed[i]]
        claimed[members] = True
        for member in members:
            np.subtract.at(score, near[member], weight[member])
        groups.append([centre] + [m for m in members if m != centre])
    return sorted(groups, key=lambda g: (-float(weight[g].sum()), g[0]))


def central(vectors: Vectors, members: Sequence[int], weights: Sequence[int] | None = None) -> int:
    """The member with the highest weighted mean similarity to the group (ties: the earliest listed)."""
    rows = np.asarray(vectors, dtype=np.float32)[list(members)]
    weight = np.ones(len(members)) if weights is None else np.asarray([weights[m] for m in members], dtype=np.float64)
    pull = rows @ (rows.T @ weight).astype(np.float32)
    return int(members[int(np.argmax(pull))])
