"""Build the retrieval components a `Settings` describes (used by entrypoints only)."""

from __future__ import annotations

from .embedder import SentenceTransformerEmbedder
from .protocols import Store, StoreReader
from .provision import recorded_model_id, resolve_model
from .rerank import CrossEncoderReranker, Reranker, SignalReranker
from .search import HybridRetriever
from .settings import RetrievalSettings as Settings
from .store import ChromaStore


def open_store(settings: Settings) -> Store:
    """Embedded Chroma under DATA_DIR, or the Chroma server at CHROMA_URL."""
    return open_chroma(settings)


def open_chroma(settings: Settings) -> ChromaStore:
    """The same store, for the entrypoints that manage it as Chroma (its writer lease, a damaged folder set aside)."""
    if settings.chroma_url:
        return ChromaStore(url=settings.chroma_url)
    return ChromaStore(path=str(settings.chroma_path))


def open_embedder(settings: Settings) -> SentenceTransformerEmbedder:
    """The configured embedding model; its id is what the index manifest records."""
    location = resolve_model(settings.embed_model, settings.models_dir)
    model_id = recorded_model_id(settings.embed_model, location)
    return SentenceTransformerEmbedder(location, model_id=model_id)


def open_retriever(settings: Settings, store: StoreReader | None = None, embedder: SentenceTransformerEmbedder | None = None) -> HybridRetriever:
    """The retriever, refusing to read an index built by another embedder."""
    store = store or open_store(settings)
    embedder = embedder or open_embedder(settings)
    manifest = store.manifest()
    if manifest is not None:
        manifest.check(embedder.id, embedder.dimension)
    return HybridRetriever(store, embedder, reranker=open_reranker(settings))


def open_reranker(settings: Settings) -> Reranker:
    """The cross-encoder when RERANK_MODEL names one, else the offline signal reranker."""
    return CrossEncoderReranker(settings.rerank_model) if settings.rerank_model else SignalReranker()
