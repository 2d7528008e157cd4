"""Configuration, read once at the edge from the environment (and a `.env` file).

Only entrypoints (`python -m ingest|retrieval|answer`, `web/app.py`) call
`Settings.from_env()`; library code takes plain arguments. It lives in the
lowest package so every entrypoint can import it without breaking the import
direction (web → answer → retrieval → ingest).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    content_dir: Path = REPO_ROOT / "content"
    data_dir: Path = REPO_ROOT / ".data"
    host: str = "127.0.0.1"
    port: int = 8000
    embed_model: str = "all-MiniLM-L6-v2"
    rerank_model: str = ""  # a sentence-transformers CrossEncoder folder; empty = offline signal reranker
    llm_model: str = ""  # empty = offline extractive generator
    llm_api_base: str = ""
    llm_api_key: str = field(default="", repr=False)
    llm_timeout: float = 30.0
    llm_citations: str = ""  # provider (Anthropic/Gemini native citations) or json (quote-first JSON); empty = by provider
    chroma_url: str = ""  # empty = embedded Chroma under data_dir
    staff_group: str = "staff"
    identity_header: str = ""  # e.g. X-Forwarded-Groups from a trusted proxy; empty = everyone anonymous
    support_judge: str = "deterministic"  # or "llm": the LLM_MODEL judges claim support (deterministic fallback)
    unverified_policy: str = "hide"  # hide (show state, text behind a toggle) or refuse
    frame_ancestors: str = ""  # extra origins allowed to frame the UI (the docs site's origin is always allowed)
    cors_origins: str = ""  # space-separated origins whose pages may embed the widget (cross-origin API calls, no cookies)

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"

    @property
    def chroma_path(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def audit_path(self) -> Path:
        return self.data_dir / "answers.sqlite3"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, *, dotenv: bool = True) -> Settings:
        """Settings from environment variables; a `.env` in the working directory fills gaps."""
        if env is None:
            if dotenv:
                from dotenv import load_dotenv

                load_dotenv(Path.cwd() / ".env", override=False)
            env = dict(os.environ)

        def path(name: str, default: Path) -> Path:
            value = env.get(name, "").strip()
            return Path(value).expanduser().resolve() if value else default

        port = env.get("PORT", "8000").strip() or "8000"
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"PORT must be a TCP port number, got {port!r}")
        policy = env.get("UNVERIFIED_POLICY", "hide").strip() or "hide"
        if policy not in ("hide", "refuse"):
            raise ValueError(f"UNVERIFIED_POLICY must be 'hide' or 'refuse', got {policy!r}")
        judge = env.get("SUPPORT_JUDGE", "deterministic").strip() or "deterministic"
        if judge not in ("deterministic", "llm"):
            raise ValueError(f"SUPPORT_JUDGE must be 'deterministic' or 'llm', got {judge!r}")
        if judge == "llm" and not env.get("LLM_MODEL", "").strip():
            raise ValueError("SUPPORT_JUDGE=llm needs LLM_MODEL to name the judging model")
        citations = env.get("LLM_CITATIONS", "").strip().lower()
        if citations not in ("", "provider", "json"):
            raise ValueError(f"LLM_CITATIONS must be 'provider' or 'json' (unset: by the model's provider), got {citations!r}")
        return cls(
            support_judge=judge,
            llm_citations=citations,
            content_dir=path("CONTENT_DIR", cls.content_dir),
            data_dir=path("DATA_DIR", cls.data_dir),
            host=env.get("HOST", "127.0.0.1").strip() or "127.0.0.1",
            port=int(port),
            embed_model=env.get("EMBED_MODEL", "").strip() or cls.embed_model,
            rerank_model=env.get("RERANK_MODEL", "").strip(),
            llm_model=env.get("LLM_MODEL", "").strip(),
            llm_api_base=env.get("LLM_API_BASE", "").strip(),
            llm_api_key=env.get("LLM_API_KEY", "").strip(),
            llm_timeout=float(env.get("LLM_TIMEOUT", "30") or 30),
            chroma_url=env.get("CHROMA_URL", "").strip(),
            staff_group=env.get("STAFF_GROUP", "staff").strip() or "staff",
            identity_header=env.get("IDENTITY_HEADER", "").strip(),
            unverified_policy=policy,
            frame_ancestors=env.get("FRAME_ANCESTORS", "").strip(),
            cors_origins=env.get("CORS_ORIGINS", "").strip(),
        )
