"""How rare each term is in the site's public docs: what makes a question term worth matching.

"webhook" is on every page of a webhooks product and says nothing about which
sentence answers; "retry" or "Terraform" says a lot. Extraction weights a
question's terms by rarity, and the answer gate notices a rare question term
the retrieved sections never mention. The counts come from public chunks only,
so restricted text never shapes anything a visitor sees; they are rebuilt when
the public lexical index is.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ingest.documents import Chunk
from ingest.text import code_words, key_terms

from .weights import COMMON_SHARE


@dataclass(frozen=True)
class Vocabulary:
    """Document frequencies of key terms over a set of chunks."""

    documents: int
    frequency: dict[str, int]
    code: frozenset[str] = frozenset()  # hyphened words the docs write as code ("create-astro", not "built-in")
    releases: frozenset[str] = frozenset()  # every chunk's docs version ("2.4"; a page hash where none is declared)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Vocabulary:
        counts: Counter[str] = Counter()
        total = 0
        for text in texts:
            counts.update(key_terms(text))
            total += 1
        return cls(total, dict(counts))

    @classmethod
    def from_chunks(cls, chunks: Iterable[Chunk]) -> Vocabulary:
        chunks = list(chunks)
        counted = cls.from_texts(" ".join((c.title, *c.heading_path, c.text)) for c in chunks)
        code = frozenset().union(*(code_words(c.text) for c in chunks))
        return cls(counted.documents, counted.frequency, code, frozenset(c.doc_version for c in chunks))

    def weight(self, term: str) -> float:
        """Inverse document frequency, 0 for a term on every page, about log(N) for one on no page."""
        if self.documents == 0:
            return 1.0
        return math.log((self.documents + 1) / (self.frequency.get(term, 0) + 0.5))

    def share(self, word: str) -> float:
        """Share of chunks that use a word (stemmed like every key term)."""
        terms = key_terms(word)
        if not terms or not self.documents:
            return 0.0
        return min(self.frequency.get(t, 0) for t in terms) / self.documents

    @functools.cached_property
    def common(self) -> frozenset[str]:
        """Terms on more than `COMMON_SHARE` (30 %) of all chunks: the site's own name and subject, never a question's focus."""
        return frozenset(t for t, n in self.frequency.items() if n > COMMON_SHARE * self.documents)


EMPTY = Vocabulary(0, {})


class LiveVocabulary:
    """A vocabulary that follows a chunk listing: rebuilt only when `source()` reports a new fingerprint.

    The listing is the public BM25 index (`public_chunks` in `services.build_judge`), so the vocabulary goes stale
    exactly when lexical search does, and costs no store read of its own.
    """

    def __init__(self, source: Callable[[], tuple[str, Iterable[Chunk]]]) -> None:
        self._source = source
        self._lock = threading.Lock()
        self._built: tuple[str, Vocabulary] | None = None

    def current(self) -> Vocabulary:
        fingerprint, chunks = self._source()
        with self._lock:
            if self._built is None or self._built[0] != fingerprint:
                self._built = (fingerprint, Vocabulary.from_chunks(chunks))
            return self._built[1]
