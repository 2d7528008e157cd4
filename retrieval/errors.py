"""Errors retrieval raises; each says what rule was broken and what to do."""

from __future__ import annotations


class RetrievalError(Exception):
    """Base class for retrieval failures."""


class ModelProvisionError(RetrievalError):
    """The embedding model could not be provisioned or failed its integrity check."""


class IndexMismatchError(RetrievalError):
    """The index was built by a different embedder or format than the one asked to read it."""


class SiteMismatchError(IndexMismatchError):
    """The index holds another site than the content folder asked to sync into it."""


class StoreUnavailableError(RetrievalError):
    """The vector store cannot be reached (e.g. the Chroma server is down)."""


class IndexDamagedError(StoreUnavailableError):
    """The embedded index's files are damaged (Chroma reports a malformed database, or panics): a full rebuild fixes it."""


class QueryError(RetrievalError):
    """The question cannot be searched as given (empty, too long)."""


class RerankerError(RetrievalError):
    """A configured reranker cannot be used (no model path, or its weights do not load)."""


class IndexBusyError(RetrievalError):
    """Another ingest holds the index lock."""
