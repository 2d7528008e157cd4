"""The litellm generator over the real content index: prompts carry only what the reader may read."""

from __future__ import annotations

import json
import re

import pytest

from answer.llm.client import LiteLLMGenerator
from answer.pipeline import Answerer
from retrieval.search import DenseRetriever
from retrieval.viewer import Viewer
from tests.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.integration

QUESTION = "Who may approve a refund override, and up to what amount?"
INTERNAL = "Splitting one request into several smaller overrides"


def test_restricted_sections_reach_the_prompt_only_for_staff(content_index, real_embedder):
    with ScriptedLLM(json.dumps({"refused": True, "claims": []})).running() as llm:
        generator = LiteLLMGenerator("openai/scripted", api_base=llm.url, api_key="x", timeout=10)
        answerer = Answerer(DenseRetriever(content_index, real_embedder), generator)
        public = answerer.ask(QUESTION, Viewer.anonymous())
        assert public.state == "refused"
        assert INTERNAL not in llm.prompts[0]
        shown = re.findall(r'<passage handle="(c\d+)"', llm.prompts[0])
        assert shown and all(Viewer.anonymous().may_read(public.retrieval.get(h).chunk.access) for h in shown)

        staff_hits = answerer.retriever.search(QUESTION, Viewer.of(["staff"]))
        override = next(h for h in staff_hits.hits if INTERNAL in h.chunk.text)
        sentence = next(s for s in override.chunk.text.split(". ") if s.startswith(INTERNAL))
        llm.push(json.dumps({"refused": False, "claims": [
            {"quotes": [{"handle": override.handle, "quote": sentence}], "claim": sentence}]}))
        staff = answerer.ask(QUESTION, Viewer.of(["staff"]))
        assert INTERNAL in llm.prompts[1]
        assert staff.state == "answered"
        assert staff.claims[0].citations[0].chunk_id == override.chunk.id
