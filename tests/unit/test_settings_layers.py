"""Each layer owns the settings of what it configures; policies are typed and checked once, at the edge."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from answer.settings import AnswerSettings
from ingest.settings import IngestSettings
from retrieval.settings import RetrievalSettings
from web.settings import Settings


def test_each_layer_adds_only_its_own_fields_on_top_of_the_layer_below() -> None:
    names = {cls: {f.name for f in fields(cls)} for cls in (IngestSettings, RetrievalSettings, AnswerSettings, Settings)}
    assert names[IngestSettings] == {"content_dir", "data_dir"}
    assert names[RetrievalSettings] - names[IngestSettings] == {"embed_model", "rerank_model", "chroma_url"}
    assert names[AnswerSettings] - names[RetrievalSettings] == {
        "llm_model", "llm_api_base", "llm_api_key", "llm_timeout", "llm_citations", "support_judge", "unverified_policy",
        "log_retention", "llm_prompt_tokens", "llm_max_tokens", "local_llm", "local_llm_threads", "local_llm_context",
        "llm_quoting", "llm_role", "write_attempts", "database_url"}
    assert names[Settings] - names[AnswerSettings] == {
        "host", "port", "staff_group", "identity_header", "frame_ancestors", "cors_origins", "thread_secret", "rate_limit",
        "trusted_proxy_header", "read_timeout", "metrics_token", "log_format", "shutdown_timeout", "mcp_hosts"}


def test_the_whole_configuration_from_the_environment(tmp_path: Path) -> None:
    env = {"CONTENT_DIR": str(tmp_path / "c"), "DATA_DIR": str(tmp_path / "d"), "EMBED_MODEL": "m", "CHROMA_URL": "http://x",
           "LLM_MODEL": "openai/x", "LLM_CITATIONS": "JSON", "SUPPORT_JUDGE": "llm", "UNVERIFIED_POLICY": "refuse",
           "PORT": "9001", "STAFF_GROUP": "ops", "DATABASE_URL": "postgresql://answers@db:5432/answers"}
    settings = Settings.from_env(env, dotenv=False)
    assert (settings.content_dir, settings.data_dir) == (tmp_path / "c", tmp_path / "d")
    assert (settings.embed_model, settings.chroma_url, settings.chroma_path) == ("m", "http://x", tmp_path / "d" / "chroma")
    assert (settings.llm_citations, settings.support_judge, settings.unverified_policy) == ("json", "llm", "refuse")
    assert (settings.port, settings.staff_group, settings.audit_path) == (9001, "ops", tmp_path / "d" / "answers.sqlite3")
    assert settings.database_url == "postgresql://answers@db:5432/answers"
    assert Settings.from_env({}, dotenv=False).llm_citations is None  # unset: by the model's provider
    assert Settings.from_env({}, dotenv=False).shutdown_timeout == 60
    assert Settings.from_env({"SHUTDOWN_TIMEOUT": "5"}, dotenv=False).shutdown_timeout == 5
    with pytest.raises(ValueError, match="SHUTDOWN_TIMEOUT must be a number of seconds between 0 and 3600, got 'soon'"):
        Settings.from_env({"SHUTDOWN_TIMEOUT": "soon"}, dotenv=False)


def test_a_local_model_waits_longer_by_default_and_its_numbers_are_checked() -> None:
    local = AnswerSettings.from_env({"LLM_MODEL": "local", "LOCAL_LLM": "qwen2.5-coder-0.5b", "LOCAL_LLM_THREADS": "1"},
                                    dotenv=False)
    assert (local.llm_timeout, local.local_llm, local.local_llm_threads, local.local_llm_context) == (
        300, "qwen2.5-coder-0.5b", 1, 2048)
    assert AnswerSettings.from_env({"LLM_MODEL": "openai/x"}, dotenv=False).llm_timeout == 30
    with pytest.raises(ValueError, match="LOCAL_LLM_THREADS must be a whole number, got 'two'"):
        AnswerSettings.from_env({"LOCAL_LLM_THREADS": "two"}, dotenv=False)
    with pytest.raises(ValueError, match="LOCAL_LLM_CONTEXT must be at least 1024"):
        AnswerSettings.from_env({"LOCAL_LLM_CONTEXT": "512"}, dotenv=False)


def test_quoting_is_unset_by_default_and_checked() -> None:
    assert AnswerSettings.from_env({}, dotenv=False).llm_quoting is None  # point for the local model, copy elsewhere
    assert AnswerSettings.from_env({"LLM_QUOTING": "Point"}, dotenv=False).llm_quoting == "point"
    with pytest.raises(ValueError, match="LLM_QUOTING must be 'copy' or 'point'"):
        AnswerSettings.from_env({"LLM_QUOTING": "paraphrase"}, dotenv=False)


def test_a_layer_reads_and_checks_only_its_own_variables() -> None:
    assert RetrievalSettings.from_env({"PORT": "http", "UNVERIFIED_POLICY": "maybe"}, dotenv=False).embed_model
    assert AnswerSettings.from_env({"PORT": "http"}, dotenv=False).unverified_policy == "hide"
    with pytest.raises(ValueError, match="PORT must be a TCP port number, got 'http'"):
        Settings.from_env({"PORT": "http"}, dotenv=False)
    with pytest.raises(ValueError, match="UNVERIFIED_POLICY must be 'hide' or 'refuse', got 'maybe'"):
        AnswerSettings.from_env({"UNVERIFIED_POLICY": "maybe"}, dotenv=False)
    with pytest.raises(ValueError, match="DATABASE_URL must be empty .* or a PostgreSQL URL"):
        AnswerSettings.from_env({"DATABASE_URL": "sqlite:///answers.db"}, dotenv=False)
    with pytest.raises(ValueError, match="SUPPORT_JUDGE=llm needs LLM_MODEL"):
        Settings.from_env({"SUPPORT_JUDGE": "llm"}, dotenv=False)


# Where settings are read and components wired: entry points, `services` modules, and the web app's own state.
COMPOSITION = {"ingest/__main__.py", "retrieval/__main__.py", "retrieval/index_command.py", "retrieval/services.py",
               "answer/__main__.py", "answer/services.py", "web/__main__.py", "web/app.py", "web/server.py",
               "web/services.py", "web/state.py"}


def _imports_settings(path: Path) -> bool:
    import ast

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module == "settings" or module.endswith(".settings") \
                    or any(alias.name == "settings" for alias in node.names):
                return True
    return False


def test_only_composition_modules_import_settings() -> None:
    """Below the wiring, code is handed the values it needs: a module that reads settings itself cannot be reused
    with other values, and its defaults drift from the ones the settings document."""
    repo = Path(__file__).resolve().parents[2]
    readers = {str(p.relative_to(repo)) for package in ("ingest", "retrieval", "answer", "web")
               for p in (repo / package).rglob("*.py") if p.name != "settings.py" and _imports_settings(p)}
    assert readers - COMPOSITION == set()
    assert readers >= COMPOSITION  # the list names no module that stopped reading settings
