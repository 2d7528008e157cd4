"""Handing an ingest to the running server: the socket protocol, the owner lock, and the web-side checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.handoff import (
    AccessApplied,
    Done,
    Embedded,
    Failed,
    HandoffError,
    IngestListener,
    IngestRequest,
    Started,
    decode,
    encode,
    hand_off,
    socket_path,
)
from retrieval.indexer import IndexReport
from retrieval.lock import owner_lock
from web.security import content_security_policy, frame_ancestors


def test_a_handed_off_run_streams_its_events_and_a_failure_never_stops_the_listener(tmp_path):
    calls = []

    def run(request, emit):  # noqa: ANN001, ANN202
        calls.append(request)
        if request.full:
            raise RuntimeError("embedding died")
        emit(AccessApplied(IndexReport(chunks_deleted=1)))
        emit(Embedded(3, 4))
        return IndexReport(pages_added=1, failures=["a.mdx: broken"])

    listener = IngestListener(tmp_path, run).start()
    try:
        events = list(hand_off(tmp_path, IngestRequest(content_dir="/site")))
        assert [type(e) for e in events] == [Started, AccessApplied, Embedded, Done]
        assert events[1] == AccessApplied(IndexReport(chunks_deleted=1)) and events[2] == Embedded(3, 4)
        assert events[-1] == Done(IndexReport(pages_added=1, failures=["a.mdx: broken"]))
        failed = list(hand_off(tmp_path, IngestRequest(full=True)))
        assert failed[-1] == Failed("embedding died", "RuntimeError")
        assert isinstance(list(hand_off(tmp_path, IngestRequest()))[-1], Done)  # still listening
        assert calls[0] == IngestRequest(content_dir="/site")
        assert oct(listener.path.stat().st_mode & 0o777) == "0o600"  # only the index's owner may ask for a build
    finally:
        listener.close()
    assert not listener.path.exists()


def test_events_survive_the_wire_and_an_unknown_one_is_a_clear_error():
    for event in (Started(7), AccessApplied(IndexReport(chunks_updated=2)), Embedded(1, 2), Done(IndexReport()),
                  Failed("boom", "RuntimeError")):
        assert decode(encode(event)) == event
    with pytest.raises(HandoffError, match="does not read"):
        decode(b'{"event": "rebooted"}\n')
    with pytest.raises(HandoffError, match="does not read"):
        decode(b'{"event": "done", "report": {"pages_exploded": 1}}\n')


def test_nobody_listening_is_a_clear_error(tmp_path):
    with pytest.raises(HandoffError, match="does not answer"):
        list(hand_off(tmp_path, IngestRequest(), connect_timeout=0.2))


def test_a_data_dir_too_deep_for_a_socket_path_gets_a_short_one(tmp_path):
    deep = tmp_path / ("d" * 120)
    assert len(str(socket_path(deep))) < 108 and socket_path(deep) == socket_path(deep)
    assert socket_path(tmp_path) == tmp_path.resolve() / "ingest.sock"


def test_the_owner_lock_tells_a_cli_that_a_server_owns_the_index(tmp_path):
    with owner_lock(tmp_path) as server:
        assert server is True
        with owner_lock(tmp_path, wait=False) as cli:
            assert cli is False
    with owner_lock(tmp_path, wait=False) as cli:
        assert cli is True


def test_frame_ancestors_allow_the_docs_site_and_configured_origins_only():
    assert frame_ancestors("", "/docs") == ["'self'"]
    assert frame_ancestors("https://help.example.com", "https://docs.example.com/guide") == [
        "'self'", "https://docs.example.com", "https://help.example.com"]
    policy = content_security_policy(["'self'", "https://docs.example.com"])
    assert "frame-ancestors 'self' https://docs.example.com" in policy and "'unsafe-eval'" not in policy


def test_a_handed_off_run_for_another_content_folder_is_refused(tmp_path):
    from web.services import Services
    from web.settings import Settings

    services = Services(Settings(content_dir=tmp_path / "site", data_dir=tmp_path), None, None)
    with pytest.raises(HandoffError, match="serves CONTENT_DIR"):
        services.run_handed_off(IngestRequest(content_dir=str(tmp_path / "other")), lambda e: None)
    with pytest.raises(HandoffError, match="CHROMA_URL"):
        services.run_handed_off(IngestRequest(content_dir=str(tmp_path / "site"), chroma_url="http://x:1"), lambda e: None)
    assert Path(tmp_path / "site").exists() is False  # nothing was created or read


def test_a_server_given_only_a_reader_refuses_to_ingest_and_says_how_to_give_it_an_index(tmp_path):
    from tests.memory_index import MemoryIndex
    from web.services import Services
    from web.settings import Settings

    reader = MemoryIndex()
    services = Services(Settings(content_dir=tmp_path / "site", data_dir=tmp_path), None, reader)
    assert services.store is reader
    with pytest.raises(TypeError, match=r"not one to write \(index=\)"):
        services.ingest()
