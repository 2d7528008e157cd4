"""`LiteLLMGenerator`: any litellm model (OpenAI, Anthropic, Ollama, a local OpenAI-compatible server).

litellm is imported here only, lazily (it costs seconds to import), with the
local cost map so import never reaches for the network. The model is asked
for structured output in the first shape its server takes (`response_format`
module: `json_schema`, then `json_object` with a schema, then the JSON-in-text
contract of the prompt alone), learnt once per server and model. A shape
refusal is never retried as is; other transport failures (timeouts, connection
errors, 429, 5xx) are retried with bounded backoff and then raised as
`GeneratorError`; a reply
that is not a well-formed draft is a `DraftFormatError`, which the pipeline
treats as a failed verification.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from retrieval.search import RetrievalSet

from ..contract.draft import DRAFT_SCHEMA, Draft, DraftClaim, PartialClaim, parse_draft
from ..errors import DraftFormatError, GeneratorError
from .incremental import ClaimScanner
from .pointing import parse_pointed
from .prompt import DEFAULT_BUDGET_TOKENS, Prompt, Quoting, build_prompt
from .response_format import FORMATS, Shape, rejects_response_format, response_format

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 8.0
WRITE_MAX_TOKENS = 320  # a written answer is at most a few sentences or steps
SAMPLE_TEMPERATURE = 0.7  # a written answer asked for again: another sample, not the same greedy reply


def import_litellm() -> Any:
    """litellm, imported on first use with the offline cost map."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    # A streamed reply would otherwise start an event loop in a worker thread per chunk, for success callbacks
    # this project never registers (the answer log is its record): half the client's time per streamed reply.
    litellm.disable_streaming_logging = True
    return litellm


def is_transient(exc: BaseException, litellm: Any) -> bool:
    """Worth retrying: the request may succeed unchanged a moment later."""
    transient = (
        litellm.Timeout, litellm.APIConnectionError, litellm.RateLimitError,
        litellm.ServiceUnavailableError, litellm.InternalServerError, litellm.BadGatewayError,
    )
    if isinstance(exc, transient):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(exc, litellm.APIError) and isinstance(status, int) and (status == 429 or status >= 500)


class LiteLLMGenerator:
    """Drafts through litellm under the quote-first contract of `answer.llm.prompt`."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 30,
        max_retries: int = 2,
        structured: bool = True,
        backoff: float = 0.5,
        budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        quoting: Quoting = "copy",
    ) -> None:
        if not model:
            raise ValueError("LiteLLMGenerator needs a litellm model string, got ''")
        self.model = model
        self.name = f"litellm:{model}"
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.structured = structured
        self.backoff = backoff
        self.budget_tokens = budget_tokens
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.quoting: Quoting = quoting

    def draft(self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()) -> Draft:
        prompt = self._prompt(question, rset, feedback)
        return self._parse(self.complete(prompt.as_list(), schema=prompt.schema), prompt)

    def draft_stream(self, question: str, rset: RetrievalSet, *, feedback: Sequence[str] = ()) -> Iterator[PartialClaim | Draft]:
        """Each claim as soon as the model has written it whole, then the whole draft (the one `draft` returns).

        A stream cut off after some claims is a `GeneratorError` carrying what was written, so the audit keeps it
        and the claims already read stand as the draft.
        """
        prompt = self._prompt(question, rset, feedback)
        started = time.perf_counter()
        scanner = ClaimScanner()
        pieces: list[str] = []
        try:
            for piece in self.complete_stream(prompt.as_list(), schema=prompt.schema):
                pieces.append(piece)
                for item in scanner.feed(piece):
                    claim = self._claim(item, prompt)
                    if claim is not None:
                        yield PartialClaim(claim, prompt.handles, round(time.perf_counter() - started, 4))
        except GeneratorError as exc:
            exc.raw = "".join(pieces)
            raise
        yield self._parse("".join(pieces), prompt)

    def _prompt(self, question: str, rset: RetrievalSet, feedback: Sequence[str]) -> Prompt:
        return build_prompt(question, rset, feedback=feedback, budget_tokens=self.budget_tokens, quoting=self.quoting)

    def _parse(self, text: str, prompt: Prompt) -> Draft:
        # DraftFormatError carries the raw text for the audit; the draft remembers which passages the
        # model was shown, so a handle cut by the context budget counts as a phantom.
        draft = parse_pointed(text, prompt.refs) if self.quoting == "point" else parse_draft(text)
        return replace(draft, shown=prompt.handles)

    def _claim(self, item: dict[str, Any], prompt: Prompt) -> DraftClaim | None:
        """One complete claim object of a reply still being written, or None when it is malformed."""
        try:
            draft = self._parse(json.dumps({"claims": [item], "refused": False}), prompt)
        except DraftFormatError:
            return None  # the whole reply's parse reports it
        return draft.claims[0] if draft.claims else None

    def reply(self, messages: list[dict[str, str]], *, sample: int = 0, timeout: float | None = None) -> str:
        """A plain-text reply, no JSON shape asked: the written answer (written.py), a few sentences long.

        `sample` > 0 asks for another sample: at SAMPLE_TEMPERATURE, seeded with the number so that a server
        that fixes its seed still answers differently (a provider that takes no seed has it dropped).
        """
        extra: dict[str, Any] = {"max_tokens": self.max_tokens or WRITE_MAX_TOKENS}
        if sample:
            extra |= {"temperature": max(self.temperature, SAMPLE_TEMPERATURE), "seed": sample, "drop_params": True}
        if timeout is not None:
            extra["timeout"] = min(self.timeout, timeout)
        return _reply_text(self.respond(import_litellm(), messages, **extra))

    def complete(self, messages: list[dict[str, str]], *, schema: dict[str, Any] = DRAFT_SCHEMA, name: str = "draft") -> str:
        """The model's reply text, in the first structured-output shape this server takes."""
        return _reply_text(self._structured(messages, schema, name))

    def complete_stream(self, messages: list[dict[str, str]], *, schema: dict[str, Any] = DRAFT_SCHEMA,
                        name: str = "draft") -> Iterator[str]:
        """The reply text piece by piece as the server streams it; a failure mid-stream is a `GeneratorError`."""
        response = self._structured(messages, schema, name, stream=True)
        try:
            for chunk in response:
                choices = getattr(chunk, "choices", None) or []
                content = getattr(getattr(choices[0], "delta", None), "content", None) if choices else None
                if isinstance(content, str) and content:
                    yield content
        except Exception as exc:  # noqa: BLE001 - a transport fault mid-stream, classified at the adapter edge
            raise GeneratorError(f"model {self.model} stream broke: {type(exc).__name__}: {str(exc)[:200]}") from exc

    def _structured(self, messages: list[dict[str, str]], schema: dict[str, Any], name: str, **extra: Any) -> Any:
        """The response, requested in the first structured-output shape this server takes (learnt per model)."""
        litellm = import_litellm()
        server = self.api_base or ""
        while True:
            shape: Shape = FORMATS.current(server, self.model) if self.structured else "text"
            field = response_format(shape, schema, name)
            try:
                return self.respond(litellm, messages, **extra, **({"response_format": field} if field else {}))
            except GeneratorError as exc:
                if field is None or exc.__cause__ is None or not rejects_response_format(exc.__cause__, litellm):
                    raise
                following = FORMATS.reject(server, self.model, shape)
                log.warning("%s rejected response_format %s (%s); using %s from now on", self.model, shape, exc, following)

    def respond(self, litellm: Any, messages: list[dict[str, Any]], **extra: Any) -> Any:
        """The provider's whole response object, after bounded transport retries (other generators read its fields)."""
        kwargs: dict[str, Any] = {
            "model": self.model, "messages": messages, "timeout": self.timeout,
            "temperature": self.temperature, "max_retries": 0,  # retries are ours, bounded and logged
        } | extra
        if self.max_tokens and "max_tokens" not in kwargs:
            kwargs["max_tokens"] = self.max_tokens
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        attempt = 0
        while True:
            try:
                return litellm.completion(**kwargs)
            except Exception as exc:  # noqa: BLE001 - every provider error is classified here, at the adapter edge
                # A refused response_format would be refused again: the caller picks the next shape instead.
                shape_refused = "response_format" in kwargs and rejects_response_format(exc, litellm)
                if not shape_refused and is_transient(exc, litellm) and attempt < self.max_retries:
                    delay = min(MAX_BACKOFF_SECONDS, self.backoff * 2**attempt)
                    log.warning("%s: %s; retry %d/%d in %.1fs", self.model, type(exc).__name__, attempt + 1, self.max_retries, delay)
                    time.sleep(delay)
                    attempt += 1
                    continue
                raise GeneratorError(
                    f"model {self.model} failed after {attempt + 1} attempt(s): {type(exc).__name__}: {str(exc)[:200]}"
                ) from exc


def _reply_text(response: Any) -> str:
    """The first choice's text; an empty or missing reply is a format error, not a crash."""
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError) as exc:
        raise DraftFormatError(f"the model reply has no message content: {str(response)[:120]!r}") from exc
    if not isinstance(content, str) or not content.strip():
        raise DraftFormatError(f"the model returned an empty reply: {content!r}", raw=content or "")
    return content
