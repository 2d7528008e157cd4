"""Quotes cut in the right place: whole sentences past abbreviations, whole code blocks, the command a sentence announces.

Each case is a pattern seen on sites nobody here wrote questions for: a
sentence split at "a.k.a." quoted from its middle, a quoted config block that
lost its closing quote (copied, it breaks the reader's config), a how-to
sentence ending in a period whose command sits in the block after it, and a
FAQ's "No." lost from the answer to a yes/no question.
"""

from __future__ import annotations

import pytest

from answer.contract.draft import Draft, DraftClaim, Quote
from answer.contract.spans import answer_word_before, units
from answer.contract.verify import verify
from answer.gate import AnswerGate
from answer.gate.features import AnswerExtractor, spans_of
from answer.generate import ExtractiveGenerator
from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.search import renumber
from retrieval.viewer import Viewer
from tests.fakes import make_chunk
from tests.unit.test_outcomes import Fixed

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
    assert span.text.endswith("command.\n\n```sh\nnpx ferry add node\n```")  # the first tab's block, whole
    assert "pnpm" not in span.text and span.text in chunk.text


SDK_TABS = """---
title: Install
---

## Install an SDK

<Tabs>
  <TabItem value="python" label="Python">

    ```bash
    pip install ferrydeck
    ```

  The Python SDK provides a synchronous client and an async one.

  </TabItem>
  <TabItem value="go" label="Go">

    ```bash
    go get github.com/ferrydeck/ferrydeck-go/v2
    ```

  </TabItem>
  <TabItem value="ruby">

    ```bash
    gem install ferrydeck
    ```

  </TabItem>
</Tabs>
"""


@pytest.mark.parametrize("preset", ["docusaurus", "starlight", "mintlify"])
def test_a_sentence_closing_one_tab_never_carries_the_next_tab_s_command(tmp_path, preset: str):
    """The Python tab's last sentence sat right before the Go tab's block once the tabs were read as text: "is
    there a Python SDK?" was answered with it and `go get …` under it, a pairing no page ever shows."""
    (tmp_path / "site.toml").write_text(f'[site]\npreset = "{preset}"\n', encoding="utf-8")
    (tmp_path / "install.mdx").write_text(SDK_TABS, encoding="utf-8")
    [chunk] = load_corpus(tmp_path).chunks()
    assert "Go:" in chunk.text and "ruby:" in chunk.text  # every later tab's name, as its button reads
    hit = renumber("Is there a Python SDK?", ANON, [(chunk, 1.0)]).hits[0]
    spans = [s for s in spans_of(hit, 0) if "synchronous client" in s.text]
    assert spans and all("go get" not in s.text and not s.introduces for s in spans)


OS_TABS = """---
title: Install the CLI
---

## Install

<Tabs>
  <TabItem value="mac" label="macOS">

  Homebrew is the recommended method:

    ```bash
    brew install ferry
    ```

  </TabItem>
  <TabItem value="windows" label="Windows">

    ```powershell
    scoop install ferry
    ```

  </TabItem>
</Tabs>
"""


def test_a_tab_holding_only_a_command_is_quoted_by_its_name_and_verifies(tmp_path):
    """No sentence of the page gives the Windows command: its tab's name is what says what it is for."""
    (tmp_path / "cli.mdx").write_text(OS_TABS, encoding="utf-8")
    [chunk] = load_corpus(tmp_path).chunks()
    spans = [s for s in spans_of(renumber("q", ANON, [(chunk, 1.0)]).hits[0], 0) if s.text.startswith("Windows:")]
    assert [(s.text, s.introduces) for s in spans] == [("Windows:\n\n```powershell\nscoop install ferry\n```", "code")]
    gate = AnswerGate(AnswerExtractor())
    answer = Answerer(Fixed(chunk), ExtractiveGenerator(judge=gate), judge=gate).ask(
        "How do I install the ferry CLI on Windows?", ANON)
    quotes = [c.quote for claim in answer.claims for c in claim.citations]
    assert "Windows:\n\n```powershell\nscoop install ferry\n```" in quotes  # verified, verbatim
    assert all(q in chunk.text for q in quotes)


CLOSING = "Then restart your computer."
NEXT_TAB = "brew install ferry"


def _tabs(first: str, second_tag: str = '<TabItem value="mac" label="macOS">') -> str:
    return (f"---\ntitle: Install\n---\n\n## Install\n\n<Tabs>\n{first}\n  {second_tag}\n\n    ```bash\n"
            f"    {NEXT_TAB}\n    ```\n\n  </TabItem>\n</Tabs>\n")


@pytest.mark.parametrize("tabs", [
    # the first tab's text on the line right after its tag
    _tabs('  <TabItem value="win" label="Windows">\n  Run the installer from the download page:\n\n    ```powershell\n'
          f'    .\\install.ps1\n    ```\n\n  {CLOSING}\n  </TabItem>'),
    # the closing tag on the sentence's own line
    _tabs(f'  <TabItem value="win" label="Windows">\n\n  {CLOSING}</TabItem>'),
    # a long name
    _tabs(f'  <TabItem value="src" label="Build it from the source tree">\n\n  {CLOSING}\n\n  </TabItem>',
          '<TabItem value="mac" label="Mac OS X 10.15 or later, with Homebrew">'),
    # a first tab opening on a heading
    _tabs(f'  <TabItem value="src" label="From source">\n    ### From source\n\n    {CLOSING}\n  </TabItem>'),
    # names written as code the page runs
    _tabs(f'  <TabItem value="win" label={{t("Windows")}}>\n\n  {CLOSING}\n\n  </TabItem>',
          '<TabItem value="mac" label={translate({message: "macOS"})}>'),
    # a later tab with no name to show
    _tabs(f'  <TabItem label={{win}}>\n\n  {CLOSING}\n\n  </TabItem>', '<TabItem label={mac}>'),
    # a later tab wrapped in another element
    _tabs(f'  <TabItem value="win" label="Windows">\n\n  {CLOSING}\n\n  </TabItem>\n  <div>',
          '<TabItem value="mac" label="macOS">').replace("</TabItem>\n</Tabs>", "</TabItem>\n  </div>\n</Tabs>"),
    # the last tab's sentence, then a block after the tabs
    ("---\ntitle: Install\n---\n\n## Install\n\n<Tabs>\n  <TabItem value=\"win\" label=\"Windows\">\n\n"
     f"  {CLOSING}\n\n  </TabItem>\n</Tabs>\n\n```bash\n{NEXT_TAB}\n```\n"),
    # Nextra's tabs
    _tabs(f'  <Tabs.Tab>\n\n  {CLOSING}\n\n  </Tabs.Tab>', '<Tabs.Tab>').replace("</TabItem>\n</Tabs>",
                                                                                "</Tabs.Tab>\n</Tabs>"),
    # a self-closing first tab: the tab shown first holds nothing
    ("---\ntitle: Install\n---\n\n## Install\n\n" + CLOSING + "\n\n<Tabs>\n  <TabItem value=\"win\" label=\"W\" />\n"
     f"  <TabItem value=\"mac\" label=\"macOS\">\n\n    ```bash\n    {NEXT_TAB}\n    ```\n\n  </TabItem>\n</Tabs>\n"),
])
@pytest.mark.parametrize("preset", ["docusaurus", "starlight", "mintlify"])
def test_no_sentence_inside_a_tab_is_quoted_with_another_tab_s_command(tmp_path, preset: str, tabs: str):
    """Found in review: each of these layouts once put `brew install ferry` under the Windows tab's last sentence."""
    (tmp_path / "site.toml").write_text(f'[site]\npreset = "{preset}"\n', encoding="utf-8")
    (tmp_path / "install.mdx").write_text(tabs, encoding="utf-8")
    chunks = load_corpus(tmp_path).chunks()
    assert not any("t(" in c.text or "translate(" in c.text for c in chunks)  # only a name written as text is text
    for chunk in chunks:
        hit = renumber("How do I install it?", ANON, [(chunk, 1.0)]).hits[0]
        spans = [s for s in spans_of(hit, 0) if CLOSING.rstrip(".") in s.text]
        assert all(NEXT_TAB not in s.text for s in spans), [s.text for s in spans]
    assert any(CLOSING in c.text for c in chunks) and any(NEXT_TAB in c.text for c in chunks)


def test_a_model_s_quote_running_from_one_tab_into_another_is_not_verified(tmp_path):
    """Found in review: a hosted model quotes by copying text, and the verifier took a copy that ran from the
    Windows tab's last sentence into the macOS tab's command: verbatim in the chunk, never together on the page."""
    (tmp_path / "install.mdx").write_text(_tabs(f'  <TabItem label={{win}}>\n\n  {CLOSING}\n\n  </TabItem>',
                                                '<TabItem label={mac}>'), encoding="utf-8")
    [chunk] = load_corpus(tmp_path).chunks()
    rset = renumber("How do I install it?", ANON, [(chunk, 1.0)])
    across = chunk.text[chunk.text.index(CLOSING): chunk.text.index(NEXT_TAB) + len(NEXT_TAB) + 4]
    assert across in chunk.text and across.endswith("```")
    result = verify(Draft(False, (DraftClaim((Quote("c1", across),), "Restart, then install with brew."),)), rset, ANON)
    assert not result.claims and "one tab into another" in result.problems[0].text
    alone = verify(Draft(False, (DraftClaim((Quote("c1", CLOSING),), "Restart your computer."),)), rset, ANON)
    assert [c.citations[0].quote for c in alone.claims] == [CLOSING]


def test_a_tab_s_name_keeps_its_block_when_the_tags_share_a_line(tmp_path):
    (tmp_path / "install.mdx").write_text(
        "---\ntitle: Install\n---\n\n## Install\n\n<Tabs>\n  <TabItem value=\"win\" label=\"Windows\">\n\n"
        f"  {CLOSING}\n\n  </TabItem><TabItem value=\"mac\" label=\"macOS\">\n    ```bash\n    {NEXT_TAB}\n    ```\n"
        "  </TabItem>\n</Tabs>\n", encoding="utf-8")
    [chunk] = load_corpus(tmp_path).chunks()
    spans = {s.text: s for s in spans_of(renumber("q", ANON, [(chunk, 1.0)]).hits[0], 0)}
    assert f"macOS:\n\n```bash\n{NEXT_TAB}\n```" in spans  # the name with its block
    assert all(NEXT_TAB not in text for text in spans if CLOSING in text)


def test_a_period_sentence_never_carries_a_block_a_short_line_of_its_own_introduces():
    text = "Run the migration.\n\nIf it fails:\n\n```bash\nferry db reset --force\n```"
    [first] = [s for s in spans_of(_rset(text).hits[0], 0) if s.text.startswith("Run the migration")]
    assert first.text == "Run the migration." and not first.introduces


def test_a_tab_opening_on_a_heading_leaves_no_name_behind_in_the_section_before(tmp_path):
    (tmp_path / "page.mdx").write_text("# Page\n\n## Before\n\nText before the tabs.\n\n<Tabs>\n"
                                       '  <TabItem value="v2" label="v2">\n    ### In the tab\n\n    Text in the tab.\n'
                                       "  </TabItem>\n</Tabs>\n", encoding="utf-8")
    texts = {c.anchor: c.text for c in load_corpus(tmp_path).chunks()}
    assert texts["before"] == "Text before the tabs."  # not "… tabs.\n\nv2:", a name introducing nothing
    assert texts["in-the-tab"] == "Text in the tab."



FAQ = ("No. A self-hosted version of the dashboard is not available at this time. Your data stays in our EU "
       "region.\n\nYes. The export runs nightly and keeps every field.")


def test_the_short_answer_opening_a_paragraph_is_found_before_the_sentence_after_it():
    assert FAQ[answer_word_before(FAQ, FAQ.index("A self-hosted")):].startswith("No. A self-hosted")
    assert FAQ[answer_word_before(FAQ, FAQ.index("The export")):].startswith("Yes. The export")
    for start in (0, FAQ.index("Your data")):  # the paragraph's start, and a sentence after the second
        assert answer_word_before(FAQ, start) == start
    long_first = "Dashboards are hosted for you. A self-hosted version is not available."
    assert answer_word_before(long_first, long_first.index("A self")) == long_first.index("A self")
    for text in ("See FAQ. A self-hosted version is not available.", "Q: Why? A self-hosted version is not here."):
        assert answer_word_before(text, text.index("A self")) == text.index("A self")  # short, but no answer
    indented = "  No. A self-hosted version is not available."
    assert answer_word_before(indented, indented.index("A self")) == indented.index("No.")


def test_a_yes_no_question_is_answered_with_the_no_that_opens_the_faq_answer():
    chunk = make_chunk("faq", "can-we-host-it", FAQ, title="FAQ")
    gate = AnswerGate(AnswerExtractor())
    answerer = Answerer(Fixed(chunk), ExtractiveGenerator(judge=gate), judge=gate)
    answer = answerer.ask("Can we host the dashboard ourselves?", ANON)
    assert answer.outcome == "answer"
    first = answer.claims[0].citations[0]
    assert first.quote.startswith("No. A self-hosted version of the dashboard")
    assert chunk.text[first.start:first.end] == first.quote  # verbatim, highlightable where it stands
    other = make_chunk("faq", "free-exports", "No. Data exports are available on the Pro and Enterprise plans "
                       "only. Free workspaces can copy events one at a time.", heading="Can I export data on the Free plan?")
    gate_answer = Answerer(Fixed(other), ExtractiveGenerator(judge=gate), judge=gate)
    enterprise = gate_answer.ask("Are data exports available on the Enterprise plan?", ANON)
    assert enterprise.outcome == "answer"  # the heading asks of the Free plan: its "No." is not this answer
    assert enterprise.claims[0].citations[0].quote.startswith("Data exports are available on the Pro and Enterprise")
    where = answerer.ask("Where is a self-hosted version of the dashboard documented?", ANON)
    assert all(not c.citations[0].quote.startswith("No.") for c in where.claims)  # only a yes/no question gets it


STEPS = """---
title: Search
---

## Use DocSearch

If you have a DocSearch account, you can use the plugin instead of the built-in search.

<Steps>

1. Install the DocSearch plugin:

   <Tabs>
   <TabItem label="npm">

   ```sh
   npm install @acme/docsearch
   ```

   </TabItem>
   <TabItem label="pnpm">

   ```sh
   pnpm add @acme/docsearch
   ```

   </TabItem>
   </Tabs>

2. Add the plugin to the `plugins` list in your config file:

   ```js
   export default { plugins: [docsearch({ appId: 'APP_ID' })] }
   ```

3. Restart the dev server. Search now opens the DocSearch modal.
   - Press `/` to open it.
   - Press `Esc` to close it.

</Steps>
"""


def _fences_balanced(text: str) -> bool:
    """Every fence a quote opens it also closes, and it opens none it does not show whole."""
    lines = text.split("\n")
    fence_lines = [line.strip() for line in lines if line.strip().startswith("```")]
    return len(fence_lines) % 2 == 0 and all("```" not in line for line in lines if not line.strip().startswith("```"))


@pytest.mark.parametrize("preset", ["docusaurus", "starlight", "mintlify"])
def test_a_step_holding_a_command_is_quoted_with_it_whole(tmp_path, preset: str):
    """Found asking Starlight's docs as a visitor: the steps' commands were joined into their items' lines, so
    "How do I install the DocSearch plugin?" quoted "Install …: ```sh\\nnpm install …" with no closing fence, and
    another answer quoted four lines from the middle of a step's config block."""
    (tmp_path / "site.toml").write_text(f'[site]\npreset = "{preset}"\n', encoding="utf-8")
    (tmp_path / "search.mdx").write_text(STEPS, encoding="utf-8")
    [chunk] = [c for c in load_corpus(tmp_path).chunks() if c.anchor == "use-docsearch"]
    hit = renumber("How do I install the DocSearch plugin?", ANON, [(chunk, 1.0)]).hits[0]
    spans = spans_of(hit, 0)
    assert all(_fences_balanced(s.text) for s in spans), [s.text for s in spans if not _fences_balanced(s.text)]
    [install] = [s for s in spans if s.text.startswith("Install the DocSearch plugin")]
    assert install.introduces == "code" and install.text.endswith("```sh\nnpm install @acme/docsearch\n```")
    assert "pnpm" not in install.text  # the first tab's command, never the second's
    [config] = [s for s in spans if s.text.startswith("Add the plugin")]
    assert config.text.endswith("export default { plugins: [docsearch({ appId: 'APP_ID' })] }\n```")
    assert any(s.text == "pnpm:\n\n```sh\npnpm add @acme/docsearch\n```" for s in spans)  # the later tab, by name
    assert not any(s.text.startswith(("export", "npm install", "pnpm add")) for s in spans)  # never from inside code


def test_a_list_holding_blocks_reads_as_the_page_shows_it(tmp_path):
    (tmp_path / "site.toml").write_text('[site]\npreset = "starlight"\n', encoding="utf-8")
    (tmp_path / "search.mdx").write_text(STEPS, encoding="utf-8")
    [chunk] = [c for c in load_corpus(tmp_path).chunks() if c.anchor == "use-docsearch"]
    assert "1. Install the DocSearch plugin:\n```sh\nnpm install @acme/docsearch\n```" in chunk.text  # the step's own
    # the numbering goes on after the first step's command, one blank line further: the tabs end before it
    assert "pnpm add @acme/docsearch\n```\n\n\n2. Add the plugin" in chunk.text
    assert "`plugins` list in your config file:\n```js\n" in chunk.text
    # an item of text keeps its nested list under it, as before
    assert "3. Restart the dev server. Search now opens the DocSearch modal.\n  - Press `/` to open it." in chunk.text
    found = units(chunk.text)
    assert "Restart the dev server." in [u.text for u in found]


def test_a_list_of_text_items_is_one_block_as_before():
    from ingest.blocks import markdown, render_blocks

    tokens = markdown().parse("1. First step.\n\n   More about it.\n2. Second step.\n   - a detail\n")
    [block] = render_blocks(tokens[: len(tokens)])
    assert block.kind == "list"
    assert block.text == "1. First step. More about it.\n2. Second step.\n  - a detail"


def test_a_step_is_quoted_with_the_command_it_holds_whatever_it_ends_with(tmp_path):
    """Starlight's "- Disable window frames with `frame="none"`" holds its example without announcing it."""
    (tmp_path / "site.toml").write_text('[site]\npreset = "starlight"\n', encoding="utf-8")
    (tmp_path / "frames.mdx").write_text(
        "---\ntitle: Frames\n---\n\n## Frames\n\nCode blocks can sit in a window frame.\n\n"
        "- Disable window frames with `frame=\"none\"`\n\n  ```bash frame=\"none\"\n  echo \"no frame\"\n  ```\n\n"
        "- Add a title with `title=\"x\"`\n", encoding="utf-8")
    [chunk] = load_corpus(tmp_path).chunks()
    assert '- Disable window frames with `frame="none"`\n```bash\necho "no frame"\n```\n\n- Add a title' in chunk.text
    hit = renumber("How do I turn off the window frame?", ANON, [(chunk, 1.0)]).hits[0]
    [span] = [s for s in spans_of(hit, 0) if s.text.startswith("Disable window frames")]
    assert span.introduces == "code" and span.text.endswith('echo "no frame"\n```')
    [plain] = [s for s in spans_of(hit, 0) if s.text.startswith("Code blocks")]
    assert plain.text == "Code blocks can sit in a window frame."  # a paragraph's period still announces no list


def test_html_in_a_step_stays_on_the_step_s_line():
    from ingest.blocks import markdown, render_blocks

    tokens = markdown().parse("1. Open the settings.\n\n   <div>Admins only.</div>\n\n   ```sh\n   ferry login\n   ```\n")
    blocks = render_blocks(tokens)
    assert [(b.kind, b.text, b.held) for b in blocks] == [
        ("list", "1. Open the settings. Admins only.", False), ("code", "```sh\nferry login\n```", True)]


def _spans_of_page(tmp_path, body: str, question: str = "How do I install it?"):  # noqa: ANN202
    (tmp_path / "site.toml").write_text('[site]\npreset = "starlight"\n', encoding="utf-8")
    (tmp_path / "page.mdx").write_text(f"---\ntitle: Install\n---\n\n## Install\n\n{body}", encoding="utf-8")
    chunks = load_corpus(tmp_path).chunks()
    return chunks, [s for c in chunks for s in spans_of(renumber(question, ANON, [(c, 1.0)]).hits[0], 0)]


@pytest.mark.parametrize(("body", "step", "command"), [
    # a list and code inside a blockquote: no item holds the code
    ("> - Back up the production database first\n> - Stop every worker process on the host\n>\n> ```sh\n"
     "> rm -rf /var/lib/app/cache\n> ```\n", "Stop every worker process", "rm -rf"),
    # a step's nested bullets: the last bullet does not hold the step's command
    ("1. Install the package with the command below.\n   - It needs Node 18 or later to run.\n"
     "   - It needs a network connection too.\n\n   ```sh\n   npm install the-package\n   ```\n"
     "2. Configure the package in your config file.\n", "It needs a network connection", "npm install"),
    # a step with no text of its own: the step before it does not take its command
    ("1. Open a terminal window on your machine.\n2. ```sh\n   brew install ferry\n   ```\n",
     "Open a terminal window", "brew install"),
])
def test_a_step_never_carries_a_command_it_does_not_hold(tmp_path, body: str, step: str, command: str):
    """Found in review: each of these layouts quoted a list item with a command no item of the page shows it with."""
    _, spans = _spans_of_page(tmp_path, body)
    assert not any(step in s.text and command in s.text for s in spans), [s.text for s in spans]


def test_a_step_s_text_stays_on_its_line_before_a_tab_s_name(tmp_path):
    body = ("1. Install the DocSearch plugin for your site.\n   <Tabs><TabItem label=\"npm\">Copy the files by hand."
            "</TabItem><TabItem label=\"pnpm\">\n   ```sh\n   pnpm add @acme/docsearch\n   ```\n   </TabItem></Tabs>\n"
            "2. Add the plugin to the list in your config file.\n")
    chunks, spans = _spans_of_page(tmp_path, body)
    text = "\n".join(c.text for c in chunks)
    assert "1. Install the DocSearch plugin for your site." in text and "2. Add the plugin" in text
    assert all("pnpm add" not in s.text for s in spans if s.text.startswith("Install the DocSearch"))


def test_a_nested_list_holding_commands_stays_under_its_item(tmp_path):
    body = ("1. Install the package with your manager:\n   1. With npm run this command:\n      ```sh\n"
            "      npm install the-package\n      ```\n   2. With pnpm run this other command:\n      ```sh\n"
            "      pnpm add the-package\n      ```\n2. Configure the package in your config file.\n")
    chunks, spans = _spans_of_page(tmp_path, body)
    [chunk] = chunks
    assert "1. Install the package with your manager:\n\n  1. With npm run this command:\n```sh\n" in chunk.text
    assert "\n  2. With pnpm run this other command:\n```sh\npnpm add the-package\n```\n\n2. Configure" in chunk.text
    [npm] = [s for s in spans if s.text.startswith("With npm")]
    assert npm.text.endswith("npm install the-package\n```")
    # the outer step announces a list cut off by its first command: never quoted as if that list answered
    assert not any(s.text.startswith("Install the package") and s.text.rstrip().endswith(":") and "\n" in s.text
                   for s in spans)


@pytest.mark.parametrize(("step", "kept"), [
    # a fence on the item's first line: its closing fence had opened one to the end of the file
    ("2. ```sh\n   brew install ferry\n   ```", "```sh\nbrew install ferry\n```"),
    # fence characters the item never closes: an empty fence the item's end closes, as CommonMark reads it
    ("2. ~~~ marks a fenced block in Markdown.", "1. Open a terminal window."),
])
def test_a_step_opening_on_fence_characters_keeps_the_page(tmp_path, step: str, kept: str):
    """Found in review: `<Steps>` was "never closed" and the whole page was dropped."""
    (tmp_path / "site.toml").write_text('[site]\npreset = "starlight"\n', encoding="utf-8")
    (tmp_path / "p.mdx").write_text(f"---\ntitle: T\n---\n\n## Install\n\n<Steps>\n\n1. Open a terminal window.\n"
                                    f"{step}\n\n</Steps>\n\nAfter the steps.\n", encoding="utf-8")
    corpus = load_corpus(tmp_path)
    assert not corpus.failures
    [chunk] = corpus.chunks()
    assert kept in chunk.text and chunk.text.endswith("After the steps.")


@pytest.mark.parametrize(("body", "step", "command"), [
    # a step whose nested bullets each hold a command: the step holds none of them
    ("- Install the CLI with either command.\n  - ```sh\n    brew install ferry\n    ```\n  - ```sh\n"
     "    apt install ferry\n    ```\n", "Install the CLI", "brew install"),
    # a list, a paragraph, then code inside a blockquote: no item holds the code
    ("> - Back up the production database first\n> - Stop every worker process on the host\n>\n"
     "> This cannot be undone.\n>\n> ```sh\n> rm -rf /var/lib/app/cache\n> ```\n", "Stop every worker", "rm -rf"),
])
def test_a_step_never_carries_a_command_its_nested_items_or_a_quote_hold(tmp_path, body: str, step: str, command: str):
    """Found in a second review: the first layout paired the step with its first nested bullet's command."""
    _, spans = _spans_of_page(tmp_path, body)
    assert not any(step in s.text and command in s.text for s in spans), [s.text for s in spans]


def test_a_docusaurus_mdx_block_on_an_item_s_line_is_rendered_not_shown(tmp_path):
    (tmp_path / "site.toml").write_text('[site]\npreset = "docusaurus"\n', encoding="utf-8")
    (tmp_path / "p.mdx").write_text("---\ntitle: T\n---\n\n## Notes\n\n- ```mdx-code-block\n  <Note>Hello from MDX</Note>\n"
                                    "  ```\n", encoding="utf-8")
    [chunk] = load_corpus(tmp_path).chunks()
    assert "<Note>" not in chunk.text and "```" not in chunk.text


def test_the_markdown_copy_of_a_page_reads_a_fence_on_an_item_s_line():
    from ingest.page_markdown import in_code

    lines = ["1. Open a terminal.", "2. ```sh", "   brew install ferry", "   ```", "", "After {#after}."]
    assert in_code(lines) == [False, True, True, True, False, False]
