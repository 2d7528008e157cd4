"""`python -m ingest slug`: one heading per `\\n`-terminated line, one slugger for the whole input.

A heading may contain U+2028, U+2029, U+0085, vertical tab, form feed or
U+001C..U+001E; `str.splitlines()` treats each as a line break, so one such
heading used to turn into two slugs and shift every later duplicate number.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ingest.slugger import Slugger
from tests.slugger_oracle import oracle_dir, requires_oracle

from .test_slugger import CASES

REPO = Path(__file__).resolve().parents[2]


def run_slug(text: str, *args: str) -> list[str]:
    result = subprocess.run([sys.executable, "-m", "ingest", "slug", *args], input=text.encode("utf-8"),
                            capture_output=True, cwd=REPO, check=True)
    return result.stdout.decode("utf-8").split("\n")[:-1]


def test_separators_inside_a_heading_do_not_split_it(tmp_path: Path) -> None:
    lines = ["Intro", "a\u2028b", "Intro", "c\u2029d\x85e", "x\x0by\x0cz\x1c\x1d\x1e", "Intro", "a b"]
    got = run_slug("".join(line + "\n" for line in lines), str(tmp_path))
    assert got == ["intro", "ab", "intro-1", "cde", "xyz", "intro-2", "a-b"]


def test_fixture_table_through_the_cli_equals_one_library_slugger(tmp_path: Path) -> None:
    inputs = [text for _, text, _ in CASES] * 2  # the second pass exercises duplicate numbering on every case
    slugger = Slugger()
    assert run_slug("".join(text + "\n" for text in inputs), str(tmp_path)) == [slugger.slug(t) for t in inputs]


def test_last_line_without_newline_and_empty_lines(tmp_path: Path) -> None:
    assert run_slug("A\n\n\nA", str(tmp_path)) == ["a", "", "-1", "a-1"]


def test_site_slugger_and_override(tmp_path: Path) -> None:
    (tmp_path / "site.toml").write_text('[site]\nslugger = "github-case"\n', encoding="utf-8")
    assert run_slug("Hello World\n", str(tmp_path)) == ["Hello-World"]
    assert run_slug("Hello World\n", str(tmp_path), "--slugger", "github") == ["hello-world"]


@requires_oracle
def test_cli_matches_one_node_slugger_instance(tmp_path: Path) -> None:
    oracle = oracle_dir()
    script = oracle / "_slugger_cli_oracle.mjs"
    script.write_text("import GithubSlugger from 'github-slugger'\nimport fs from 'node:fs'\n"
                      "const s = new GithubSlugger()\n"
                      "const lines = fs.readFileSync(0, 'utf8').split('\\n').slice(0, -1)\n"
                      "process.stdout.write(lines.map((l) => s.slug(l) + '\\n').join(''))\n", encoding="utf-8")
    text = "".join(t + "\n" for _, t, _ in CASES) + "Intro\na\u2028b\nIntro\n"
    try:
        node = subprocess.run(["node", str(script)], input=text.encode("utf-8"), capture_output=True, check=True,
                              cwd=oracle).stdout.decode("utf-8").split("\n")[:-1]
    finally:
        script.unlink()
    assert run_slug(text, str(tmp_path)) == node
