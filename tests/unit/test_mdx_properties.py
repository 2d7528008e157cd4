"""Properties over generated MDX: parsing never crashes, spans map back to the source, no MDX syntax leaks."""

from __future__ import annotations

import re
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.errors import PageError
from ingest.parser import parse_text
from ingest.site import SiteConfig
from ingest.splitter import split_page

SITE = SiteConfig()
word = st.text(alphabet="abcdefghijklmnopqrstuvwxyzÄéß日 0123456789.,?!-", min_size=1, max_size=12)
words = st.lists(word, min_size=1, max_size=12).map(" ".join).map(str.strip).filter(bool)
inline = st.sampled_from(["", " <Badge text=\"new\" />", " <Kbd>Ctrl</Kbd>", " `code`", " {/* note */}",
                          " **bold**", " [link](/a#b)", " <Badge text={\"beta\"} />", " {props.x}"])


def heading(level: int, text: str, extra: str, explicit: bool) -> str:
    return "#" * level + " " + text + extra + (" {#custom-" + str(level) + "}" if explicit else "")


headings = st.builds(heading, st.integers(1, 4), words, inline, st.booleans())
paragraphs = st.builds(lambda a, b, c: a + b + " " + c, words, inline, words)
blocks = st.one_of(
    headings,
    paragraphs,
    st.just("import Tabs from '@theme/Tabs';\nimport {\n  Aside,\n} from 'x';"),
    st.just("export const meta = {\n  title: \"x\",\n};"),
    st.builds(lambda p: f"<Tabs>\n  <TabItem value=\"a\" label=\"A\">\n    {p}\n\n    ```js\n    import x from 'y';\n    ```\n  </TabItem>\n</Tabs>", paragraphs),
    st.builds(lambda p: f"<Callout type=\"note\">{p}</Callout>", paragraphs),
    st.builds(lambda p: f"<Card\n  title=\"a > b\"\n  data={{{{ a: [1, 2] }}}}\n>\n  {p}\n</Card>", paragraphs),
    st.builds(lambda p: f"{{/*\n  {p}\n*/}}", words),
    st.builds(lambda p: f"<!--\n{p}\n-->", words),
    st.builds(lambda t, p: f":::tip[{t}]\n{p}\n:::", words, paragraphs),
    st.builds(lambda p: f"::::note\n{p}\n\n:::caution Careful\n{p}\n:::\n::::", paragraphs),
    st.builds(lambda p: f"```ts title=\"x.ts\" ins={{4-6}}\nimport a from 'b';\n<Tabs>\n{p}\n```", words),
    st.builds(lambda p: f"````md\n```js\n{{/* kept */}}\n```\n{p}\n````", words),
    st.builds(lambda a, b: f"| {a} | b |\n| --- | --- |\n| {b} | `c` |", words, words),
    st.builds(lambda a, b: f"- {a}\n  - {b}\n- <Kbd>x</Kbd> {b}", words, words),
    st.builds(lambda a, h: f"> {a}\n>\n> {h}", paragraphs, headings),
    st.builds(lambda h: f"<h3>{h}</h3>", words),
)
documents = st.lists(blocks, min_size=1, max_size=10).map("\n\n".join)
front_matter = st.sampled_from(["", "---\ntitle: T\n---\n", "---\ntitle: T\nversion: \"2\"\n---\n\n"])

FENCE = re.compile(r"^(`{3,})[^\n]*\n.*?^\1$", re.MULTILINE | re.DOTALL)
LEAKS = re.compile(r"^import |^export |\{/\*|<!--|<Tabs|</TabItem>|<TabItem|<Callout|<Card|<Badge|<Kbd|:::", re.MULTILINE)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_arbitrary_text_parses_or_raises_page_error(text):
    try:
        page = parse_text(text, "x.mdx", SITE)
    except PageError:
        return
    split_page(page)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(blocks, st.text(max_size=60)), min_size=1, max_size=10).map("\n".join))
def test_mdx_ish_text_with_noise_parses_or_raises_page_error(text):
    try:
        page = parse_text(text, "x.mdx", SITE)
    except PageError:
        return
    split_page(page)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(front_matter, documents)
def test_chunks_map_back_to_their_source_and_leak_no_mdx(fm, body):
    page = parse_text(fm + body, "x.mdx", SITE)
    lines = page.body.split("\n")
    heading_lines: dict[str, set[int]] = {}
    for h in page.headings:
        heading_lines.setdefault(h.anchor or "", set()).add(h.line)
    chunks = split_page(page)
    for chunk in chunks:
        span = chunk.span
        assert 1 <= span.line_start <= span.line_end <= len(lines)
        assert page.body[span.start : span.end].split("\n") == lines[span.line_start - 1 : span.line_end]
        if chunk.anchor and "~" not in chunk.id:
            assert span.line_start in heading_lines[chunk.anchor]  # the first part's span holds its heading line
        prose = FENCE.sub("", chunk.text)
        assert not LEAKS.search(prose), prose
        assert "\ue000" not in chunk.text and "\ue001" not in chunk.text
    for before, after in pairwise(chunks):
        if before.anchor == after.anchor and before.doc_id == after.doc_id:
            assert after.span.line_start in (before.span.line_end, before.span.line_end + 1)
