"""`python -m web`: several processes only over a Chroma server, and a start that cannot work is refused with one
line naming the setting, before a model loads or a lock is taken."""

from __future__ import annotations

import pytest

import web.__main__ as entry


def test_more_than_one_worker_without_a_chroma_server_is_refused_before_anything_starts(monkeypatch, capsys):
    monkeypatch.delenv("CHROMA_URL", raising=False)
    monkeypatch.setattr(entry, "owner_lock", lambda *a, **k: pytest.fail("nothing may start"))
    with pytest.raises(SystemExit) as exit_info:
        entry.main(["--workers", "2"])
    assert exit_info.value.code == 2 and "CHROMA_URL" in capsys.readouterr().err


def test_zero_workers_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(entry, "owner_lock", lambda *a, **k: pytest.fail("nothing may start"))
    with pytest.raises(SystemExit):
        entry.main(["--workers", "0"])
    assert "at least 1" in capsys.readouterr().err


def test_the_workers_option_reads_the_environment(monkeypatch):
    monkeypatch.setenv("WORKERS", "3")
    monkeypatch.delenv("CHROMA_URL", raising=False)
    monkeypatch.setattr(entry, "owner_lock", lambda *a, **k: pytest.fail("nothing may start"))
    with pytest.raises(SystemExit):  # 3 workers from the environment, and still no Chroma server
        entry.main([])


@pytest.mark.parametrize(("name", "value", "said"), [
    ("PORT", "abc", "PORT must be a TCP port number"),
    ("RATE_LIMIT", "lots", "RATE_LIMIT"),
    ("UNVERIFIED_POLICY", "maybe", "UNVERIFIED_POLICY must be"),
    ("THREAD_SECRET", "short", "THREAD_SECRET must be at least"),
    ("WORKERS", "abc", "WORKERS must be a whole number"),
    ("LLM_TIMEOUT", "abc", "LLM_TIMEOUT must be a number of seconds"),
    ("LLM_TIMEOUT", "-5", "LLM_TIMEOUT must be more than 0 seconds"),
])
def test_a_setting_that_cannot_be_read_is_one_line_not_a_traceback(monkeypatch, capsys, name, value, said):
    monkeypatch.setenv(name, value)
    monkeypatch.setattr(entry, "owner_lock", lambda *a, **k: pytest.fail("nothing may start"))
    assert entry.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and said in err and "Traceback" not in err and err.count("\n") == 1


def test_ingesting_a_content_folder_that_is_not_there_is_refused_before_the_model_loads(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("CONTENT_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setattr(entry, "local_llm", lambda *a, **k: pytest.fail("nothing may start"))
    assert entry.main(["--ingest"]) == 2
    assert "CONTENT_DIR=" in capsys.readouterr().err
