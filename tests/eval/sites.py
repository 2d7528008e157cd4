"""The docs sites `make eval` knows: this repo's content/ (tuned on) and the held-out real sites beside it.

A held-out corpus is not in a user's clone, so `--site all` reports the sets
whose corpus exists and names the ones it skipped; asking for one by name
when its corpus is missing is an error that says where it was looked for.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TUNED = "content"


@dataclass(frozen=True)
class Site:
    """A docs site under evaluation: its content, its site config, its question set and its follow-up threads."""

    name: str
    content: Path
    questions: Path
    config: Path | None = None  # a site.toml kept outside the content folder
    followups: Path | None = None  # two-turn threads (tests/eval/<site>/followups.jsonl), when the set has them
    figures_only: bool = False  # questions written outside the team: its per-question results are never written


@dataclass(frozen=True)
class HeldOut:
    """A real site stored beside the project: the environment variable that moves it and its default folder."""

    env: str
    folder: str
    questions: str = ""  # a question set kept beside the corpora (../shared/eval/<questions>), never in the repo


HELD_OUT: Mapping[str, HeldOut] = {
    "cypress": HeldOut("CYPRESS_DOCS", "cypress-docs"),
    "starlight": HeldOut("STARLIGHT_DOCS", "starlight-docs"),
    # Written outside this team: its figures are reported, its per-question results never written or read.
    "mintlify": HeldOut("MINTLIFY_DOCS", "mintlify-docs", questions="mintlify"),
}
NAMED = (TUNED, *HELD_OUT)


def corpus_root(name: str, environ: Mapping[str, str] = os.environ) -> Path:
    """Where a held-out site's corpus is expected: $<ENV>, else ../shared/corpora/<folder> beside the repo."""
    held = HELD_OUT[name]
    return Path(environ.get(held.env) or REPO.parent / "shared" / "corpora" / held.folder)


def missing_corpus(name: str, root: Path) -> str:
    """The message for a held-out corpus that is not there: where it was looked for and how to point elsewhere."""
    return f"the {HELD_OUT[name].folder} corpus is not at {root}; set {HELD_OUT[name].env} to its folder"


def questions_folder(name: str, environ: Mapping[str, str] = os.environ) -> Path | None:
    """Where a held-out set kept outside the repo has its questions ($<NAME>_QUESTIONS, else ../shared/eval/<name>),
    or None for a set kept here."""
    held = HELD_OUT[name]
    if not held.questions:
        return None
    return Path(environ.get(f"{name.upper()}_QUESTIONS") or REPO.parent / "shared" / "eval" / held.questions)


def available(name: str, environ: Mapping[str, str] = os.environ) -> str:
    """"" when a held-out site can be evaluated here, else why not (its corpus or its questions are missing)."""
    root = corpus_root(name, environ)
    if not root.is_dir():
        return missing_corpus(name, root)
    folder = questions_folder(name, environ)
    if folder is not None and not (folder / "questions.jsonl").is_file():
        return f"the {name} questions are not at {folder}/questions.jsonl (kept outside the repo)"
    return ""


def named_site(name: str, questions: str | None = None, environ: Mapping[str, str] = os.environ) -> Site:
    """One of the named sites; exits naming the fix when a held-out corpus is missing."""
    if name == TUNED:
        return Site(TUNED, REPO / "content", Path(questions or HERE / "questions.jsonl"))
    root = corpus_root(name, environ)
    missing = available(name, environ)
    if missing and not (questions and root.is_dir()):
        raise SystemExit(missing)
    folder = HERE / name
    outside = questions_folder(name, environ)
    kept = outside or folder
    followups = kept / "followups.jsonl"
    return Site(name, root, Path(questions or kept / "questions.jsonl"), folder / "site.toml",
                followups if followups.is_file() and not questions else None, figures_only=outside is not None)


def resolve_sites(choice: str, questions: str | None = None, site_config: str | None = None,
                  environ: Mapping[str, str] = os.environ) -> tuple[list[Site], list[str]]:
    """The sites to evaluate for `--site` and, for `all`, why each skipped one was skipped."""
    if choice == "all":
        if questions:
            raise SystemExit("--questions names one site's set: use it with --site content|cypress|starlight|mintlify|DIR")
        sites, skipped = [named_site(TUNED)], []
        for name in HELD_OUT:
            missing = available(name, environ)
            if missing:
                skipped.append(missing)
            else:
                sites.append(named_site(name, environ=environ))
        return sites, skipped
    if choice in NAMED:
        return [named_site(choice, questions, environ)], []
    root = Path(choice)
    if not root.is_dir() or not questions:
        raise SystemExit("--site DIR needs an existing folder and --questions FILE")
    return [Site(root.name, root, Path(questions), Path(site_config) if site_config else None)], []
