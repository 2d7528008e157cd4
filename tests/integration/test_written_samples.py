"""A written answer asked again goes over the wire as a sample: the real litellm client against a scripted server.

The first request is the greedy one (the configured temperature, no seed);
each later one asks for another sample, at a sampling temperature and with its
own seed, so a server that fixes its seed (llama.cpp's does per request) still
answers differently. The checker, not the model, decides which reply is read.
"""

from __future__ import annotations

import pytest

from answer.contract.support import DeterministicChecker
from answer.contract.written import Writer
from answer.llm.client import SAMPLE_TEMPERATURE, LiteLLMGenerator
from answer.services import WRITE_TIMEOUT, build_writer
from tests.scripted_llm import ScriptedLLM
from tests.unit.test_written import RIGHT, WRONG, _claims
from web.settings import Settings

pytestmark = pytest.mark.integration


def test_asked_again_the_model_gets_a_seeded_sample_and_the_supported_reply_is_read():
    with ScriptedLLM(WRONG, RIGHT).running() as server:
        client = LiteLLMGenerator("openai/scripted", api_base=server.url, api_key="sk-test", max_retries=0)
        written = Writer(client, DeterministicChecker(supported_at=1.0), attempts=3).write(
            "How long are events retained?", _claims())
    first, again = server.requests
    assert first["temperature"] == 0 and "seed" not in first
    assert again["temperature"] == SAMPLE_TEMPERATURE and again["seed"] == 1
    assert again["messages"] == first["messages"]
    assert [s.text for s in written.sentences] == ["Events are retained for 30 days on every plan."]
    assert written.others == (WRONG,) and len(server.requests) == 2  # shown whole: not asked a third time


def test_write_attempts_is_read_checked_and_bounded_by_the_pages_watchdog():
    writer = build_writer(Settings.from_env({"LLM_MODEL": "local", "LLM_TIMEOUT": "300"}, dotenv=False))
    assert writer is not None and writer.attempts == 3 and writer.deadline == WRITE_TIMEOUT < 30
    once = build_writer(Settings.from_env({"LLM_MODEL": "local", "WRITE_ATTEMPTS": "1"}, dotenv=False))
    assert once is not None and once.attempts == 1
    for bad in ("0", "9", "two"):
        with pytest.raises(ValueError, match="WRITE_ATTEMPTS"):
            Settings.from_env({"LLM_MODEL": "local", "WRITE_ATTEMPTS": bad}, dotenv=False)
