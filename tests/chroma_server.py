"""A real `chroma run` server for tests: started on a free 127.0.0.1 port, stopped at the end."""

from __future__ import annotations

import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import free_port, supervised


def chroma_binary() -> str | None:
    """The `chroma` CLI of this venv (next to the interpreter), else one on PATH."""
    beside = Path(sys.executable).with_name("chroma")
    return str(beside) if beside.exists() else shutil.which("chroma")


def heartbeat(url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=timeout) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def chroma_server(path: Path, *, startup: float = 60.0) -> Iterator[str]:
    """Run `chroma run --path PATH` until the block ends; yields its base URL once it answers."""
    binary = chroma_binary()
    if binary is None:
        raise FileNotFoundError("the `chroma` CLI is not installed (pip install chromadb)")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (path.parent / f"{path.name}-chroma.log").open("wb")
    process = subprocess.Popen(
        [binary, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        with supervised(process, lambda: heartbeat(url), startup=startup, what=f"chroma server on {url} (see {log.name})"):
            yield url
    finally:
        log.close()


# -- a small docs site the index tests copy and mutate -------------------------

SITE_PAGES: dict[str, str] = {
    "index.mdx": """---
title: Ferrydeck test site
---

Ferrydeck delivers webhooks to your endpoints with retries and signatures.
""",
    "guides/retries.mdx": """---
title: Retries
---

# Retries

Failed deliveries are retried automatically.

## Retry schedule

Ferrydeck retries a failed delivery up to 8 times over 24 hours.

## Backoff

Each retry waits twice as long as the previous one, starting at 30 seconds.

## Dead letters

After the last retry the event moves to the dead-letter queue for 14 days.
""",
    "billing/refunds.mdx": """---
title: Refunds
---

# Refunds

## Refund windows

Annual plans can be refunded within 30 days of purchase.

## Requesting a refund

Open a ticket from the billing page and quote your invoice number.
""",
    "internal/overrides.mdx": """---
title: Refund overrides
access: [staff]
---

# Refund overrides

Support leads may approve refunds up to 90 days after purchase.
""",
}


def write_site(root: Path, pages: dict[str, str] | None = None) -> Path:
    """A content folder with the repo's site.toml and the given pages (default: SITE_PAGES)."""
    site_toml = Path(__file__).resolve().parent.parent / "content" / "site.toml"
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(site_toml, root / "site.toml")
    for source, text in (SITE_PAGES if pages is None else pages).items():
        (root / source).parent.mkdir(parents=True, exist_ok=True)
        (root / source).write_text(text, encoding="utf-8")
    return root


def edit(path: Path, old: str, new: str) -> None:
    """Replace text in a content file, insisting it was there (a silent no-op edit proves nothing)."""
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise AssertionError(f"{old!r} not in {path}")
    path.write_text(text.replace(old, new), encoding="utf-8")
