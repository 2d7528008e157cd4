"""The answer layer's settings: the LLM, how claims are judged and what an unverified answer shows.

The policies are `Literal` types, checked once when the environment is read
(see ingest/settings.py), so code below the edge never re-validates a string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from retrieval.settings import RetrievalSettings

from .contract.record import UnverifiedPolicy
from .llm.prompt import Quoting
from .log.retention import DEFAULT_RETENTION, Retention, parse_retention

POSTGRES_SCHEMES = ("postgresql://", "postgres://")

SupportJudge = Literal["deterministic", "llm"]  # llm: LLM_MODEL judges claim support (deterministic fallback)
CitationMode = Literal["provider", "json"]  # provider: Anthropic/Gemini native citations; json: quote-first JSON
# write: the offline stage answers (quotes in under a second) and the model then words the Answer in a few checked
# sentences (answer/contract/written.py); draft: the model drafts the claims and quotes itself, as before written answers.
LLMRole = Literal["write", "draft"]


@dataclass(frozen=True)
class AnswerSettings(RetrievalSettings):
    llm_model: str = ""  # empty = offline extractive generator
    llm_api_base: str = ""
    llm_api_key: str = field(default="", repr=False)
    llm_timeout: float = 30.0
    llm_prompt_tokens: int = 0  # passages' share of the prompt; 0 = the prompt module's default
    llm_max_tokens: int = 0  # a cap on the reply; 0 = the server's default
    local_llm: str = "qwen2.5-coder-1.5b"  # LLM_MODEL=local: which provisioned model the child server runs
    local_llm_threads: int = 0  # 0 = chosen for the machine
    local_llm_context: int = 2048
    llm_citations: CitationMode | None = None  # None = by the model's provider
    llm_quoting: Quoting | None = None  # None = point for LLM_MODEL=local, copy for every other model
    llm_role: LLMRole = "write"
    write_attempts: int = 3  # LLM_ROLE=write: a reply the checker cut is asked for again, up to this many in all
    support_judge: SupportJudge = "deterministic"
    unverified_policy: UnverifiedPolicy = "hide"
    log_retention: Retention = DEFAULT_RETENTION  # LOG_RETENTION: answers older than 90 days or past the newest 20,000 go
    # DATABASE_URL: empty = the SQLite file DATA_DIR/answers.sqlite3; postgresql://… = one database every replica shares
    database_url: str = field(default="", repr=False)

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
        quoting = env.get("LLM_QUOTING", "").strip().lower()
        if quoting not in ("", *get_args(Quoting)):
            raise ValueError(f"LLM_QUOTING must be 'copy' or 'point' (unset: point for LLM_MODEL=local), got {quoting!r}")
        role = env.get("LLM_ROLE", "").strip().lower() or "write"
        if role not in get_args(LLMRole):
            raise ValueError(f"LLM_ROLE must be 'write' (a written answer over the verified quotes) or 'draft' (the "
                             f"model drafts the claims), got {role!r}")
        model = env.get("LLM_MODEL", "").strip()
        context = _whole(env, "LOCAL_LLM_CONTEXT", 2048)
        if context < 1024:
            raise ValueError(f"LOCAL_LLM_CONTEXT must be at least 1024 tokens (the prompt alone needs them), got {context}")
        return super().read_env(env) | {
            "database_url": database_url(env.get("DATABASE_URL", "")),
            "local_llm": env.get("LOCAL_LLM", "").strip() or "qwen2.5-coder-1.5b",
            "local_llm_threads": _whole(env, "LOCAL_LLM_THREADS", 0),
            "local_llm_context": context,
            "llm_model": model,
            "llm_api_base": env.get("LLM_API_BASE", "").strip(),
            "llm_api_key": env.get("LLM_API_KEY", "").strip(),
            # A small model on a CPU takes tens of seconds a draft: the local default waits for it.
            "llm_timeout": _seconds(env, "LLM_TIMEOUT", 300 if model == "local" else 30),
            "llm_prompt_tokens": _whole(env, "LLM_PROMPT_TOKENS", 0),
            "llm_max_tokens": _whole(env, "LLM_MAX_TOKENS", 0),
            "llm_citations": cast(CitationMode, citations) if citations else None,
            "llm_quoting": cast(Quoting, quoting) if quoting else None,
            "llm_role": cast(LLMRole, role),
            "write_attempts": _attempts(env),
            "support_judge": cast(SupportJudge, judge),
            "unverified_policy": cast(UnverifiedPolicy, policy),
            "log_retention": parse_retention(env.get("LOG_RETENTION", "") or str(DEFAULT_RETENTION)),
        }


def database_url(raw: str) -> str:
    """DATABASE_URL checked: empty (SQLite under DATA_DIR) or a PostgreSQL URL; the password never in the error."""
    url = raw.strip()
    if not url or url.startswith(POSTGRES_SCHEMES):
        return url
    from .log.postgres import shown_url  # the PostgreSQL log's own rule, without loading its driver for every setting

    raise ValueError(f"DATABASE_URL must be empty (the SQLite answer log DATA_DIR/answers.sqlite3) or a PostgreSQL URL "
                     f"like 'postgresql://user:password@host:5432/answers', got {shown_url(url)!r}")


def _whole(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise ValueError(f"{name} must be a whole number, got {raw!r}")
    return int(raw)


def _seconds(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    try:
        seconds = float(raw) if raw else default
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, got {raw!r}") from None
    if not seconds > 0:  # NaN too
        raise ValueError(f"{name} must be more than 0 seconds, got {raw!r}")
    return seconds


def _attempts(env: dict[str, str]) -> int:
    attempts = _whole(env, "WRITE_ATTEMPTS", 3)
    if not 1 <= attempts <= 5:
        raise ValueError(f"WRITE_ATTEMPTS must be 1 (ask once) to 5, got {attempts}")
    return attempts
