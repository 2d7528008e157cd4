"""The answer layer's settings: the LLM, how claims are judged and what an unverified answer shows.

The policies are `Literal` types, checked once when the environment is read
(see ingest/settings.py), so code below the edge never re-validates a string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from retrieval.settings import RetrievalSettings

from .retention import DEFAULT_RETENTION, Retention, parse_retention

UnverifiedPolicy = Literal["hide", "refuse"]  # hide: show the state, text behind a toggle; refuse: no answer
SupportJudge = Literal["deterministic", "llm"]  # llm: LLM_MODEL judges claim support (deterministic fallback)
CitationMode = Literal["provider", "json"]  # provider: Anthropic/Gemini native citations; json: quote-first JSON


@dataclass(frozen=True)
class AnswerSettings(RetrievalSettings):
    llm_model: str = ""  # empty = offline extractive generator
    llm_api_base: str = ""
    llm_api_key: str = field(default="", repr=False)
    llm_timeout: float = 30.0
    llm_citations: CitationMode | None = None  # None = by the model's provider
    support_judge: SupportJudge = "deterministic"
    unverified_policy: UnverifiedPolicy = "hide"
    log_retention: Retention = DEFAULT_RETENTION  # LOG_RETENTION: answers older than 90 days or past the newest 20,000 go

    @property
    def audit_path(self) -> Path:
        return self.data_dir / "answers.sqlite3"

    @classmethod
    def read_env(cls, env: dict[str, str]) -> dict[str, Any]:
        policy = env.get("UNVERIFIED_POLICY", "hide").strip() or "hide"
        if policy not in get_args(UnverifiedPolicy):
            raise ValueError(f"UNVERIFIED_POLICY must be 'hide' or 'refuse', got {policy!r}")
        judge = env.get("SUPPORT_JUDGE", "deterministic").strip() or "deterministic"
        if judge not in get_args(SupportJudge):
            raise ValueError(f"SUPPORT_JUDGE must be 'deterministic' or 'llm', got {judge!r}")
        if judge == "llm" and not env.get("LLM_MODEL", "").strip():
            raise ValueError("SUPPORT_JUDGE=llm needs LLM_MODEL to name the judging model")
        citations = env.get("LLM_CITATIONS", "").strip().lower()
        if citations not in ("", *get_args(CitationMode)):
            raise ValueError(f"LLM_CITATIONS must be 'provider' or 'json' (unset: by the model's provider), got {citations!r}")
        return super().read_env(env) | {
            "llm_model": env.get("LLM_MODEL", "").strip(),
            "llm_api_base": env.get("LLM_API_BASE", "").strip(),
            "llm_api_key": env.get("LLM_API_KEY", "").strip(),
            "llm_timeout": float(env.get("LLM_TIMEOUT", "30") or 30),
            "llm_citations": cast(CitationMode, citations) if citations else None,
            "support_judge": cast(SupportJudge, judge),
            "unverified_policy": cast(UnverifiedPolicy, policy),
            "log_retention": parse_retention(env.get("LOG_RETENTION", "") or str(DEFAULT_RETENTION)),
        }
