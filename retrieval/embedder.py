"""Text → vectors. The bi-encoder side of sentence-transformers lives here (rerank.py holds the CrossEncoder hook).

The `Embedder` protocol is what the index and the retriever depend on; the
index records `Embedder.id` and `dimension` so a query with a different model
is refused instead of returning garbage.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, cast


class Embedder(Protocol):
    """Turns texts into unit-length vectors of a fixed dimension."""

    @property
    def id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded lazily and once (loading costs ~1 s, importing ~10 s)."""

    def __init__(self, model: str, *, model_id: str | None = None, batch_size: int = 64, device: str = "cpu") -> None:
        self._model_path = model
        self._id = model_id or Path(model).name or model
        self._batch_size = batch_size
        self._device = device
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return self._id

    @property
    def dimension(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._load().encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return cast(list[list[float]], vectors.tolist())

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(self._model_path, device=self._device)
            return self._model
