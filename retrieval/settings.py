"""Retrieval's settings: the embedding model, the reranker and where the index lives (see ingest/settings.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.settings import IngestSettings


@dataclass(frozen=True)
class RetrievalSettings(IngestSettings):
    embed_model: str = "all-MiniLM-L6-v2"
    rerank_model: str = ""  # a sentence-transformers CrossEncoder folder; empty = offline signal reranker
    chroma_url: str = ""  # empty = embedded Chroma under data_dir

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def chroma_path(self) -> Path:
        return self.data_dir / "chroma"

    @classmethod
    def read_env(cls, env: dict[str, str]) -> dict[str, Any]:
        return super().read_env(env) | {
            "embed_model": env.get("EMBED_MODEL", "").strip() or cls.embed_model,
            "rerank_model": env.get("RERANK_MODEL", "").strip(),
            "chroma_url": env.get("CHROMA_URL", "").strip(),
        }
