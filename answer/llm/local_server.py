"""`LLM_MODEL=local`: llama.cpp's OpenAI-compatible server as a child process on a free loopback port.

The runtime is llama-cpp-python's server (`make local-llm` installs the
`local-llm` extra; it builds llama.cpp from source). The child is started with
the provisioned weights, waited for until it lists its model, and stopped
when the block that started it ends, so it lives and dies with the app. The
generator then talks to it like any OpenAI-compatible server, through litellm,
under the same prompt contract and verifier.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from ..errors import LocalModelError

log = logging.getLogger(__name__)

ALIAS = "local"  # the model name the child answers to
RUNTIME_FIX = "run `LLM_MODEL=local make local-llm` (pip install -c constraints.txt -e '.[local-llm]')"


@dataclass(frozen=True)
class LocalServer:
    """A running child: where litellm reaches it and what it runs."""

    api_base: str  # http://127.0.0.1:P/v1
    model: str  # the litellm model string: openai/<alias>
    threads: int
    context: int


def default_threads(cpus: int | None = None) -> int:
    """Half the cores, at least one: on 2 shared cores one thread is steady, two swing with every neighbour."""
    return max(1, (cpus if cpus is not None else os.cpu_count() or 1) // 2)


def default_batch_threads(cpus: int | None = None) -> int:
    """Every core this process may use, for reading the prompt: a short burst of matrix work that scales with
    threads, unlike generating, which waits on memory (measured on 2 cores, twelve written-answer prompts: 20-22 %
    less time with two)."""
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cpus)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# llama-cpp-python's server reads its settings from the environment too, by bare field name and in any case
# (pydantic-settings without a prefix), and its entry point prefers HOST and PORT to its own --host/--port: a
# `PORT=8011 make serve` child took the app's port and never listened on the one it was given. The child gets the
# parent's environment without these names, so its command line is all that configures it.
SERVER_ENV = frozenset({
    "api_key", "cache", "cache_size", "cache_type", "chat_format", "chat_template_kwargs", "clip_model_path",
    "config_file", "disable_ping_events", "draft_model", "draft_model_num_pred_tokens", "embedding", "flash_attn",
    "hf_model_repo_id", "hf_pretrained_model_name_or_path", "hf_tokenizer_config_path", "host",
    "interrupt_requests", "kv_overrides", "last_n_tokens_size", "logits_all", "lora_base", "lora_path", "main_gpu",
    "model", "model_alias", "models", "mul_mat_q", "n_batch", "n_ctx", "n_gpu_layers", "n_threads",
    "n_threads_batch", "n_ubatch", "numa", "offload_kqv", "port", "root_path", "rope_freq_base", "rope_freq_scale",
    "rope_scaling_type", "rpc_servers", "seed", "split_mode", "ssl_certfile", "ssl_keyfile", "tensor_split",
    "type_k", "type_v", "use_mlock", "use_mmap", "verbose", "vocab_only", "yarn_attn_factor", "yarn_beta_fast",
    "yarn_beta_slow", "yarn_ext_factor", "yarn_orig_ctx",
})


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for the child: the parent's, less every variable the server would take as a setting."""
    source = os.environ if env is None else env
    return {name: value for name, value in source.items() if name.lower() not in SERVER_ENV}


def _dies_with_parent() -> Callable[[], None] | None:
    """What the child runs before exec on Linux: the kernel sends it SIGTERM when the process that started it
    dies, even by kill -9, so a killed server never leaves a model holding 1-2 GB and a port. The function is
    looked up here, in the parent: the forked child only calls it (nothing there may take a lock)."""
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def command(weights: Path, port: int, *, threads: int, context: int, batch_threads: int) -> list[str]:
    """The child's command line (llama-cpp-python's server module under this interpreter); `threads` generate,
    `batch_threads` read the prompt."""
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(weights), "--model_alias", ALIAS,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(context), "--n_threads", str(threads),
            "--n_threads_batch", str(batch_threads)]


@contextmanager
def running(weights: Path, *, threads: int = 0, context: int = 4096, log_path: Path | None = None,
            startup: float = 180.0) -> Iterator[LocalServer]:
    """Start the server on the weights, wait until it answers, stop it when the block ends."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError(f"LLM_MODEL=local needs the llama.cpp runtime, which is not installed: {RUNTIME_FIX}")
    # LOCAL_LLM_THREADS caps both; unset, generation takes half the cores and reading the prompt all of them
    batch_threads = threads or default_batch_threads()
    threads = threads or default_threads()
    port = free_port()
    out = log_path.open("ab") if log_path else subprocess.DEVNULL
    process = subprocess.Popen(command(weights, port, threads=threads, context=context, batch_threads=batch_threads), stdout=out,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=child_env(),
                               preexec_fn=_dies_with_parent())
    server = LocalServer(f"http://127.0.0.1:{port}/v1", f"openai/{ALIAS}", threads, context)
    try:
        _wait(process, server, startup, log_path)
        log.info("local LLM %s ready at %s (%d thread(s), context %d)", weights.name, server.api_base, threads, context)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log_path and not isinstance(out, int):
            out.close()


def _wait(process: subprocess.Popen[bytes], server: LocalServer, startup: float, log_path: Path | None) -> None:
    deadline = time.monotonic() + startup
    while True:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-800:] if log_path and log_path.exists() else ""
            raise LocalModelError(f"the llama.cpp server exited with {process.returncode} before it was ready"
                                  f"{f' (log {log_path}): {tail}' if tail else ''}")
        try:
            if httpx.get(f"{server.api_base}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise LocalModelError(f"the llama.cpp server did not answer on {server.api_base} within {startup:.0f} s"
                                  f"{f'; see {log_path}' if log_path else ''}")
        time.sleep(0.25)
