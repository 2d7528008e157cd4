"""The link checker: broken internal links and anchors are reported with file:line; nothing else is."""

from __future__ import annotations

import subprocess
import sys

from ingest.corpus import load_corpus
from tests.conftest import CONTENT, REPO
from tests.trees import write_tree


def test_the_demo_site_has_no_broken_link():
    """The demo a new user reads and the bot answers from carried two broken links for this checker's test; the
    checker's cases live in the sites below."""
    assert [str(b) for b in load_corpus(CONTENT).broken_links] == []
    done = subprocess.run([sys.executable, "-m", "ingest", "links", str(CONTENT)], capture_output=True, text=True,
                          cwd=REPO)
    assert (done.returncode, done.stdout) == (0, "")


def test_every_kind_of_internal_link_is_resolved(tmp_path):
    root = write_tree(tmp_path, {
        "site.toml": '[site]\nbase_url = "/docs"\n',
        "guides/setup.mdx": "# Setup\n\n## Install step\n\n## Custom {#custom-id}\n",
        "guides/index.mdx": "# Guides\n",
        "api/keys.mdx": "\n".join([
            "# Keys",                                        # 1
            "",
            "[ok page](/guides/setup) [ok base](/docs/guides/setup#install-step)",  # 3
            "[ok anchor](#keys) [ok explicit](/guides/setup#custom-id)",          # 4
            "[ok file](../guides/setup.mdx) [ok folder](/guides/)",              # 5
            "[ext](https://example.com/x#y) [mail](mailto:a@b.c) [img](/img/a.png)",  # 6
            "[bad page](/guides/nope) [bad anchor](/guides/setup#nope)",         # 7
            "[bad local](#missing) [bad file](./gone.mdx)",                      # 8
            '<Card href="/guides/absent" title="x" />',                         # 9
            "",
            "```md",
            "[in code](/never/checked)",
            "```",
        ]),
    })
    broken = load_corpus(root).broken_links
    assert [(b.line, b.target) for b in broken] == [
        (7, "/guides/nope"), (7, "/guides/setup#nope"), (8, "#missing"), (8, "./gone.mdx"), (9, "/guides/absent"),
    ]
    assert all(b.source == "api/keys.mdx" for b in broken)
    assert "no heading with id 'nope'" in str(broken[1]) and str(broken[0]).startswith("api/keys.mdx:7: ")


def test_relative_url_links_resolve_like_a_browser(tmp_path):
    root = write_tree(tmp_path, {
        "guides/a.mdx": "# A\n\n[sibling](./b) [up](../api/c#c)\n",
        "guides/b.mdx": "# B\n",
        "api/c.mdx": "# C\n",
    })
    assert load_corpus(root).broken_links == []


def test_links_command_exits_1_and_prints_file_line(tmp_path):
    root = write_tree(tmp_path, {"a.mdx": "# A\n\n[gone](/nowhere)\n"})
    result = subprocess.run([sys.executable, "-m", "ingest", "links", str(root)], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 1
    assert result.stdout.startswith("a.mdx:3: broken link '/nowhere'")
    write_tree(tmp_path, {"a.mdx": "# A\n\n[fine](#a)\n"})
    ok = subprocess.run([sys.executable, "-m", "ingest", "links", str(root)], capture_output=True, text=True, cwd=REPO)
    assert (ok.returncode, ok.stdout) == (0, "")
