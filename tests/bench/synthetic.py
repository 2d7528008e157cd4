"""A synthetic MDX docs corpus of any size, for scale benchmarks.

Pages are built from templates and word lists so they look like product docs
(front matter, imports, JSX, admonitions, tables, code, numbers with units),
exercise the same parser paths as real content, and are deterministic for a
given seed, so runs are comparable.
"""

from __future__ import annotations

import random
from pathlib import Path

NOUNS = ["endpoint", "event", "delivery", "workspace", "token", "webhook", "queue", "retry", "signature", "payload", "filter", "route", "replay", "invoice", "plan", "quota", "region", "cluster", "key", "secret", "header", "timeout", "backoff", "schedule", "subscriber", "channel", "topic", "batch", "archive", "export", "import", "audit", "role", "member", "team", "domain", "certificate", "proxy", "gateway", "limit", "window"]
VERBS = ["configure", "rotate", "verify", "replay", "deliver", "filter", "route", "retry", "sign", "encrypt", "export", "archive", "inspect", "enable", "disable", "pause", "resume", "throttle", "batch", "schedule", "upgrade", "migrate", "monitor", "validate"]
ADJECTIVES = ["signed", "failed", "pending", "active", "archived", "regional", "dedicated", "idempotent", "ordered", "encrypted", "scheduled", "paused", "throttled", "verified", "custom", "default", "legacy", "primary", "secondary"]
UNITS = ["seconds", "minutes", "hours", "days", "KB", "MB", "requests per second", "events per month", "retries"]
SECTIONS_PER_PAGE = 5  # plus the intro: ~1 chunk per section at these sizes


def _sentence(rng: random.Random) -> str:
    noun, other = rng.choice(NOUNS), rng.choice(NOUNS)
    templates = [
        f"Each {rng.choice(ADJECTIVES)} {noun} keeps its {other} for {rng.randint(2, 400)} {rng.choice(UNITS)}.",
        f"You can {rng.choice(VERBS)} a {noun} from the dashboard or with `ferry {noun} {rng.choice(VERBS)}`.",
        f"When a {noun} is {rng.choice(ADJECTIVES)}, Ferrydeck will {rng.choice(VERBS)} the {other} automatically.",
        f"The {noun} limit is {rng.randint(1, 999):,} per {rng.choice(NOUNS)} on the {rng.choice(['Free', 'Starter', 'Growth'])} plan.",
        f"Use the `{noun}_{other}` setting to {rng.choice(VERBS)} {rng.choice(ADJECTIVES)} {other}s.",
    ]
    return rng.choice(templates)


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng) for _ in range(sentences))


def page_text(rng: random.Random, number: int) -> str:
    """One realistic MDX page with SECTIONS_PER_PAGE sections."""
    noun, verb = rng.choice(NOUNS), rng.choice(VERBS)
    lines = [
        "---",
        f"title: {verb.capitalize()} {noun}s ({number})",
        f"description: How to {verb} {noun}s.",
        'version: "2.4"',
        "---",
        "",
        "import { Tabs, TabItem } from '@site/components/Tabs';",
        "",
        _paragraph(rng, 2),
        "",
    ]
    for section in range(SECTIONS_PER_PAGE):
        topic = rng.choice(NOUNS)
        lines += [f"## {rng.choice(VERBS).capitalize()} the {topic} {section}", "", _paragraph(rng, rng.randint(2, 5)), ""]
        shape = section % 4
        if shape == 0:
            lines += [":::note[Good to know]", _paragraph(rng, 1), ":::", ""]
        elif shape == 1:
            lines += ["| Setting | Default |", "| --- | --- |"]
            lines += [f"| `{rng.choice(NOUNS)}_{rng.choice(NOUNS)}` | {rng.randint(1, 90)} {rng.choice(UNITS)} |" for _ in range(3)]
            lines += [""]
        elif shape == 2:
            lines += ["<Tabs>", '  <TabItem value="cli" label="CLI">', "", "  ```bash", f"  ferry {topic} {rng.choice(VERBS)} --dry-run", "  ```", "", "  </TabItem>", "</Tabs>", ""]
        else:
            lines += [f"- {_sentence(rng)}" for _ in range(3)] + [""]
    return "\n".join(lines)


def write_corpus(root: Path, chunks: int, *, seed: int = 7) -> int:
    """Write enough pages for about `chunks` chunks under root; returns the page count."""
    rng = random.Random(seed)
    pages = max(1, chunks // (SECTIONS_PER_PAGE + 1))
    for number in range(pages):
        folder = root / f"area-{number % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"page-{number:06d}.mdx").write_text(page_text(rng, number), encoding="utf-8")
    (root / "site.toml").write_text('[site]\nname = "Synthetic"\nbase_url = "/docs"\n', encoding="utf-8")
    return pages
