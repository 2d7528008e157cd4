"""Lexical search: BM25 (bm25s) over chunk text, title and heading path. bm25s is imported here and nowhere else.

Access control comes before scoring: one index is built per reader group-set
from only the chunks that set may read (the store's own ACL filter), so a
restricted chunk is never scored for, nor counted in the term statistics of,
a viewer who may not read it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ingest.documents import Chunk
from ingest.text import tokenize

from .table import ChunkTable

log = logging.getLogger(__name__)


def searchable_text(chunk: Chunk) -> str:
    """What BM25 reads for a chunk: page title, heading path, then the section text."""
    return "\n".join((chunk.title, *chunk.heading_path, chunk.text))


def served(table: ChunkTable, hits: list[tuple[Chunk, float]], groups: frozenset[str]) -> list[tuple[Chunk, float]]:
    """BM25 hits as the served table holds them: only rows `groups` may read there, with the table's metadata.

    A snapshot's BM25 index is cut when its content was prepared; the access
    part of a later change reaches the table first, so a hit is re-checked
    against the table before it is used.
    """
    return [(chunk, score) for chunk, score in ((table.get(c.id), s) for c, s in hits if table.may_read(c.id, groups))
            if chunk is not None]


@dataclass(frozen=True)
class LexicalIndex:
    """A BM25 index over a fixed list of chunks (all readable by one group-set)."""

    chunks: tuple[Chunk, ...]
    fingerprint: str
    _bm25: Any

    @classmethod
    def build(cls, chunks: Sequence[Chunk], fingerprint: str = "", terms: TermCache | None = None) -> LexicalIndex:
        import bm25s

        bm25 = None
        if chunks:
            bm25 = bm25s.BM25()
            tokens = [terms.of(c) for c in chunks] if terms is not None else [tokenize(searchable_text(c)) or [""] for c in chunks]
            bm25.index(tokens, show_progress=False)
        return cls(tuple(chunks), fingerprint or chunk_fingerprint(chunks), bm25)

    def search(self, question: str, k: int) -> list[tuple[Chunk, float]]:
        """The k best-scoring chunks with a positive BM25 score, best first."""
        terms = tokenize(question)
        if self._bm25 is None or not terms or k <= 0:
            return []
        scores = np.asarray(self._bm25.get_scores(terms))
        top = np.nonzero(scores > 0)[0]
        if len(top) > k:  # keep every tie of the k-th score, so the id tie-break decides, not the partition
            kth = np.partition(scores[top], len(top) - k)[len(top) - k]
            top = top[scores[top] >= kth]
        order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), self.chunks[i].id))
        return [(self.chunks[i], float(scores[i])) for i in order[:k]]


class TermCache:
    """Each chunk's BM25 terms, kept between index builds so a rebuild after a change tokenizes only what changed.

    Tokenizing is most of a BM25 build (0.77 s of 1.3 s at 10k chunks); the
    terms are kept space-joined (no term contains a space), one string per
    chunk, and compared with what `searchable_text` reads, so an edited
    title, heading or text is tokenized again.
    """

    def __init__(self) -> None:
        self._held: dict[str, tuple[tuple[str, tuple[str, ...], str], str]] = {}

    def of(self, chunk: Chunk) -> list[str]:
        key = (chunk.title, chunk.heading_path, chunk.text)  # exactly what searchable_text reads (the text is shared, not copied)
        held = self._held.get(chunk.id)
        if held is not None and held[0] == key:
            return held[1].split(" ")
        terms = tokenize(searchable_text(chunk)) or [""]
        self._held[chunk.id] = (key, " ".join(terms))
        return terms

    def keep_only(self, table: ChunkTable) -> None:
        """Forget chunks the table no longer holds."""
        self._held = {cid: held for cid, held in self._held.items() if table.row(cid) is not None}


def chunk_fingerprint(chunks: Iterable[Chunk]) -> str:
    """A digest of chunk ids and content hashes: equal fingerprints, equal index."""
    digest = hashlib.sha1()
    for chunk in sorted(chunks, key=lambda c: c.id):
        digest.update(f"{chunk.id}\0{chunk.hash}\0{','.join(chunk.access)}\n".encode())
    return digest.hexdigest()[:16]
