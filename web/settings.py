"""The server's settings, on top of every lower layer's: `Settings` is the whole configuration (see ingest/settings.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from answer.log.ratelimit import Rate, parse_rate
from answer.settings import AnswerSettings

from .thread_ids import MIN_SECRET_CHARS

DEFAULT_RATE_LIMIT = "30/minute"


@dataclass(frozen=True)
class Settings(AnswerSettings):
    host: str = "127.0.0.1"
    port: int = 8000
    staff_group: str = "staff"
    identity_header: str = ""  # e.g. X-Forwarded-Groups from a trusted proxy; empty = everyone anonymous
    frame_ancestors: str = ""  # extra origins allowed to frame the UI (the docs site's origin is always allowed)
    cors_origins: str = ""  # space-separated origins whose pages may embed the widget (cross-origin API calls, no cookies)
    mcp_hosts: str = ""  # MCP_HOSTS: space-separated Host names /mcp also answers on, beside the loopback ones
    thread_secret: str = field(default="", repr=False)  # signs thread ids; empty = DATA_DIR/thread_secret, created once
    # Off when Settings is built in code (tests, scripts); RATE_LIMIT defaults to DEFAULT_RATE_LIMIT from the environment.
    rate_limit: Rate | None = None
    trusted_proxy_header: str = ""  # e.g. X-Forwarded-For: the client address is its right-most entry
    read_timeout: float = 10.0  # seconds a client has to send its request headers, and then its body
    metrics_token: str = field(default="", repr=False)  # METRICS_TOKEN: the bearer token a scraper sends to /metrics
    log_format: str = "text"  # LOG_FORMAT: "text" for a terminal, "json" (one object per line) for a log collector
    # SHUTDOWN_TIMEOUT: seconds a stopping server (SIGTERM) lets answers in flight finish, new connections refused
    shutdown_timeout: float = 60.0

    @classmethod
    def read_env(cls, env: dict[str, str]) -> dict[str, Any]:
        port = env.get("PORT", "8000").strip() or "8000"
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"PORT must be a TCP port number, got {port!r}")
        secret = env.get("THREAD_SECRET", "").strip()
        if secret and len(secret) < MIN_SECRET_CHARS:
            raise ValueError(f"THREAD_SECRET must be at least {MIN_SECRET_CHARS} characters, got {len(secret)}; "
                             "e.g. python -c 'import secrets; print(secrets.token_hex(32))'")
        return super().read_env(env) | {
            "host": env.get("HOST", "127.0.0.1").strip() or "127.0.0.1",
            "port": int(port),
            "staff_group": env.get("STAFF_GROUP", "staff").strip() or "staff",
            "identity_header": env.get("IDENTITY_HEADER", "").strip(),
            "frame_ancestors": env.get("FRAME_ANCESTORS", "").strip(),
            "cors_origins": env.get("CORS_ORIGINS", "").strip(),
            "mcp_hosts": env.get("MCP_HOSTS", "").strip(),
            "thread_secret": secret,
            "rate_limit": parse_rate(env.get("RATE_LIMIT", "").strip() or DEFAULT_RATE_LIMIT),
            "trusted_proxy_header": env.get("TRUSTED_PROXY_HEADER", "").strip(),
            "read_timeout": read_timeout(env.get("READ_TIMEOUT", "").strip() or "10"),
            "shutdown_timeout": seconds_between("SHUTDOWN_TIMEOUT", env.get("SHUTDOWN_TIMEOUT", "").strip() or "60"),
            "metrics_token": env.get("METRICS_TOKEN", "").strip(),
            "log_format": log_format(env.get("LOG_FORMAT", "").strip().lower() or "text"),
        }


def read_timeout(value: str) -> float:
    """READ_TIMEOUT in seconds, a positive number."""
    return seconds_between("READ_TIMEOUT", value)


def seconds_between(name: str, value: str, limit: float = 3600) -> float:
    """A setting in seconds: a positive number up to `limit`."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= limit:
        raise ValueError(f"{name} must be a number of seconds between 0 and {limit:g}, got {value!r}")
    return seconds


def log_format(value: str) -> str:
    """LOG_FORMAT: text or json."""
    if value not in ("text", "json"):
        raise ValueError(f"LOG_FORMAT must be text or json, got {value!r}")
    return value
