"""`python -m web --workers N`: several processes only over a Chroma server, and each worker's app is the real one."""

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
