"""A stopping server (SIGTERM, as a rollout or `docker stop` sends) finishes the answers it is streaming.

A real `python -m web --ingest` answers through a scripted model that holds
the rest of its reply after the first claim, so the answer is mid-stream when
the signal arrives. The server stops taking connections at once (the load
balancer's retry goes to another replica), lets the stream run to its `done`
event, then exits cleanly. `SHUTDOWN_TIMEOUT` bounds the wait: an answer
still running past it is cut, and the server exits anyway.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.chroma_server import write_site
from tests.live_server import environment, launch_web, link_models, supervised_web
from tests.scripted_llm import HoldingLLM, Reply, quoted

pytestmark = pytest.mark.integration

QUESTION = "How many times does Ferrydeck retry a failed delivery?"
RETRY = re.compile(r"Ferrydeck retries a failed delivery up to 8 times over 24 hours\.")
BACKOFF = re.compile(r"Each retry waits twice as long as the previous one, starting at 30 seconds\.")


class BackoffLLM(HoldingLLM):
    """Quotes the retry schedule, then holds the rest of its reply (the backoff claim) until let go."""

    def reply_to(self, body):  # noqa: ANN001, ANN201
        def quote(pattern: re.Pattern[str]) -> dict[str, str]:
            handle, text = quoted(body, pattern)
            return {"handle": handle, "quote": text}

        text = json.dumps({"claims": [
            {"quotes": [quote(RETRY)], "claim": "Ferrydeck retries a failed delivery up to 8 times."},
            {"quotes": [quote(BACKOFF)], "claim": "Each retry waits twice as long as the previous one."}],
            "refused": False})
        return Reply(text, hold=self.go_on, hold_after="up to 8 times.\"}")  # after the first claim, not its quote


def events(lines: Iterator[str]) -> Iterator[str]:
    """Server-sent event names, as they arrive."""
    for line in lines:
        if line.startswith("event: "):
            yield line[7:]


def accepting(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def started(tmp_path: Path, model_dir: Path, llm: BackoffLLM, stack: ExitStack, **extra: str):  # noqa: ANN201
    data = tmp_path / "data"
    link_models(data, model_dir)
    env = environment(write_site(tmp_path / "site"), data) | {
        "LLM_MODEL": "openai/holding", "LLM_API_BASE": llm.url, "LLM_API_KEY": "x", "LLM_TIMEOUT": "120",
        # The model drafts the claims, streamed, so the answer is held mid-stream; as a writer (the default role)
        # it would be asked only after the offline claims, and whether the signal came first was a race.
        "LLM_ROLE": "draft", **extra}
    log = tmp_path / "web.log"
    process = launch_web(env, stack.enter_context(log.open("wb")))
    url = stack.enter_context(supervised_web(process, env, log))
    return process, url, int(env["PORT"]), log


def test_a_stopping_server_refuses_new_connections_and_finishes_the_answer_it_is_streaming(tmp_path, model_dir):
    with BackoffLLM().running() as llm, ExitStack() as stack:
        process, url, port, log = started(tmp_path, model_dir, llm, stack)
        with httpx.Client(base_url=url, timeout=120) as client, \
                client.stream("GET", "/ask/stream", params={"question": QUESTION}) as stream:
            lines = stream.iter_lines()
            names = events(lines)
            assert next(names) == "retrieved" and next(names) == "claim"  # mid-answer: the model holds the rest
            process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 10
            while accepting(port) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not accepting(port), "a stopping server still takes new connections"
            assert process.poll() is None  # ...but it is still running: the stream is in flight
            while "Waiting for connections to close" not in log.read_text(errors="replace") and time.monotonic() < deadline:
                time.sleep(0.05)  # released only once the server says it waits for it (else the answer may beat the check)
            assert "Waiting for connections to close" in log.read_text(errors="replace")
            llm.go_on.set()
            rest = list(names)
        assert rest[-1] == "done"  # the rest of the reply was verified and the turn finished, after the SIGTERM
        assert process.wait(timeout=30) == 0


def test_an_answer_still_running_past_the_shutdown_timeout_is_cut_and_the_server_exits(tmp_path, model_dir):
    with BackoffLLM().running() as llm, ExitStack() as stack:
        process, url, _, _ = started(tmp_path, model_dir, llm, stack, SHUTDOWN_TIMEOUT="2")
        try:
            with httpx.Client(base_url=url, timeout=120) as client, \
                    client.stream("GET", "/ask/stream", params={"question": QUESTION}) as stream:
                names = events(stream.iter_lines())
                assert next(names) == "retrieved" and next(names) == "claim"
                stopped = time.monotonic()
                process.send_signal(signal.SIGTERM)
                with pytest.raises(httpx.HTTPError):  # never let go: the stream is cut at the timeout
                    for name in names:
                        assert name != "done"
            assert process.wait(timeout=30) == 0
            assert time.monotonic() - stopped < 20
        finally:
            llm.go_on.set()
