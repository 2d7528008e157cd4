"""Quotes cut in the right place: whole sentences past abbreviations, whole code blocks, the command a sentence announces.

Each case is a pattern seen on sites nobody here wrote questions for: a
sentence split at "a.k.a." quoted from its middle, a quoted config block that
lost its closing quote (copied, it breaks the reader's config), and a how-to
sentence ending in a period whose command sits in the block after it.
"""

from __future__ import annotations

import pytest

from answer.contract.draft import Draft, DraftClaim, Quote
from answer.contract.spans import units
from answer.contract.verify import verify
from answer.gate.features import spans_of
from ingest.corpus import load_corpus
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import make_chunk

ANON = Viewer.anonymous()


def _rset(text: str, question: str = "q"):  # noqa: ANN201
    return renumber(question, ANON, [(make_chunk("guide/setup", "setup", text), 1.0)])


@pytest.mark.parametrize(("text", "first"), [
    ("Tern 2+, a.k.a. Gull, uses the new runner. It starts faster.", "Tern 2+, a.k.a. Gull, uses the new runner."),
    ("Pass options, e.g. the port, to the server. Then restart it.", "Pass options, e.g. the port, to the server."),
    ("Use a proxy (i.e. a reverse proxy) in front. It handles TLS.", "Use a proxy (i.e. a reverse proxy) in front."),
    ("Call `cy.get('.btn')`. It yields the element.", "Call `cy.get('.btn')`."),
    ("The default timeout is 30 sec. You can raise it per request.", "The default timeout is 30 sec."),
])
def test_a_sentence_is_never_cut_at_an_abbreviation_or_inside_code(text: str, first: str):
    found = [u.text for u in units(text)]
    assert found[0] == first and len(found) == 2, found


def test_a_quote_reaching_into_a_code_block_is_widened_to_the_whole_block():
    text = 'Set the key in your config file:\n\n```yaml\nkey: "value"\nname: \'x\'\n```\n\nThen restart the server.'
    rset = _rset(text)
    partial = 'key: "value"\nname: \'x'  # stops before the closing quote and the fence
    result = verify(Draft(False, (DraftClaim((Quote("c1", partial),), "The key is value."),)), rset, ANON)
    [claim] = result.claims
    assert claim.citations[0].quote == '```yaml\nkey: "value"\nname: \'x\'\n```'


def test_a_sentence_ending_in_a_period_carries_the_command_in_the_block_after_it():
    text = ("Add the adapter to your project with the `ferry add` command.\n\n```bash\nnpx ferry add node\n```\n\n"
            "Then restart the server.")
    spans = [s for s in spans_of(_rset(text).hits[0], 0) if s.text.startswith("Add the adapter")]
    assert [s.text for s in spans] == [text[: text.index("```\n\n") + 3]]  # never the sentence without its command
    assert spans[0].introduces == "code" and spans[0].statement.startswith("Add the adapter")


def test_a_list_after_a_period_is_not_announced():
    text = "Adapters exist for many hosts.\n\n- Node\n- Deno"
    spans = [s for s in spans_of(_rset(text).hits[0], 0) if s.text.startswith("Adapters")]
    assert [s.text for s in spans] == ["Adapters exist for many hosts."]


TABBED = """---
title: Adapters
---

import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

## Add an adapter

Adapters connect the server to a host. Add the Node adapter to your project with the `ferry add` command.

<Tabs>
  <TabItem value="npm" label="npm">

```sh
npx ferry add node
```

  </TabItem>
  <TabItem value="pnpm" label="pnpm">

```sh
pnpm ferry add node
```

  </TabItem>
</Tabs>

Once added, the adapter runs on every build.
"""


@pytest.mark.parametrize("preset", ["docusaurus", "starlight", "mintlify"])
def test_a_how_to_sentence_before_a_tabs_component_is_quoted_with_the_first_tab_s_command(tmp_path, preset: str):
    (tmp_path / "site.toml").write_text(f'[site]\npreset = "{preset}"\n', encoding="utf-8")
    (tmp_path / "adapters.mdx").write_text(TABBED, encoding="utf-8")
    [chunk] = [c for c in load_corpus(tmp_path).chunks() if c.anchor == "add-an-adapter"]
    hit = renumber("How do I add the Node adapter?", ANON, [(chunk, 1.0)]).hits[0]
    [span] = [s for s in spans_of(hit, 0) if s.text.startswith("Add the Node adapter")]
    assert span.introduces == "code"
    assert span.text.endswith("```sh\nnpx ferry add node\n```")  # the first tab's block, whole, and only it
    assert "pnpm" not in span.text and span.text in chunk.text
