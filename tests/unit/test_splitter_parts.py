"""Long sections become parts that fit the embedder, keep the anchor, and map back to contiguous source lines."""

from __future__ import annotations

from itertools import pairwise

from ingest.parser import parse_text
from ingest.site import SiteConfig
from ingest.splitter import MAX_CHUNK_CHARS, split_page

SENTENCES = [f"Sentence number {n} explains one more detail about webhook retries and backoff." for n in range(40)]


def parts(text: str, max_chars: int = MAX_CHUNK_CHARS):
    page = parse_text(text, "p.mdx", SiteConfig())
    return page, split_page(page, max_chars=max_chars)


def assert_spans_hold(page, chunks):
    lines = page.body.split("\n")
    for chunk in chunks:
        span = chunk.span
        assert page.body[span.start : span.end].split("\n") == lines[span.line_start - 1 : span.line_end]
    for before, after in pairwise(chunks):
        if before.anchor == after.anchor:
            assert after.span.line_start in (before.span.line_end, before.span.line_end + 1)


def test_a_long_one_line_paragraph_is_cut_between_sentences():
    page, chunks = parts("# Retries\n\n" + " ".join(SENTENCES) + "\n")
    assert [c.id for c in chunks] == ["doc:p#retries"] + [f"doc:p#retries~{n}" for n in range(2, len(chunks) + 1)]
    assert len(chunks) >= 3
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks)
    assert " ".join(c.text for c in chunks) == " ".join(SENTENCES)  # nothing lost, cut only between sentences
    assert all(c.text.endswith(".") for c in chunks)
    assert chunks[0].span.line_start == 1  # the first part's span holds the heading line
    assert_spans_hold(page, chunks)


def test_one_sentence_per_line_gives_parts_on_their_own_lines():
    page, chunks = parts("# Retries\n\n" + "\n".join(SENTENCES) + "\n")
    assert len(chunks) >= 3
    assert_spans_hold(page, chunks)
    for chunk in chunks[1:]:
        first_line = page.body.split("\n")[chunk.span.line_start - 1]
        assert first_line == chunk.text.split(" Sentence")[0]
        assert chunks[0].span.line_end < chunk.span.line_start


def test_an_oversized_fence_or_table_stays_whole():
    fence = "```text\n" + "\n".join(f"line {n} of a long log output" for n in range(80)) + "\n```"
    table = "| a | b |\n| --- | --- |\n" + "\n".join(f"| {n} | value {n} |" for n in range(120))
    page, chunks = parts(f"# Logs\n\nIntro.\n\n{fence}\n\n{table}\n\nOutro.\n")
    texts = [c.text for c in chunks]
    assert any(t.startswith("```text") and t.endswith("```") and "line 79" in t for t in texts)
    assert sum("line 0 of" in t for t in texts) == 1 and sum(t.count("```") for t in texts) == 2
    table_parts = [t for t in texts if "value 0" in t]
    assert len(table_parts) == 1 and "value 119" in table_parts[0]
    assert_spans_hold(page, chunks)


def test_a_long_list_is_cut_between_top_level_items():
    items = "\n".join(f"- item {n} says something useful about routing rules\n  - nested detail {n}" for n in range(40))
    page, chunks = parts(f"# Rules\n\n{items}\n")
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.text.startswith("- item ")
        assert chunk.text.count("- item") == chunk.text.count("  - nested")  # nested items stay with their parent
    assert_spans_hold(page, chunks)


def test_text_before_the_first_heading_splits_with_page_ids():
    page, chunks = parts(" ".join(SENTENCES) + "\n\n# Later\n\nShort.\n")
    assert chunks[0].id == "doc:p" and chunks[1].id == "doc:p~2"
    assert chunks[-1].id == "doc:p#later"
    assert_spans_hold(page, chunks)



def test_a_long_nested_list_is_cut_between_its_own_items():
    bullets = "\n".join(f"   - Option number {n} sets the value of the {n}th flag for the command line." for n in range(14))
    page, chunks = parts(f"# Flags\n\n1. Pick your options:\n{bullets}\n   - With pnpm run this:\n"
                         "     ```sh\n     pnpm add the-package\n     ```\n")
    for chunk in chunks:
        for line in chunk.text.split("\n"):
            assert not line.strip() or line.lstrip().startswith(("- ", "1. ", "```", "pnpm")), line  # no item cut
    assert_spans_hold(page, chunks)


def _steps(first_length: int) -> str:
    """Two steps, each holding its command; the first step's command `first_length` characters of config."""
    config = "\n".join(f"   option_{n}: value number {n}" for n in range(first_length // 28))
    return ("# Fonts\n\n"
            "1. Add your font files and declare them in the stylesheet:\n"
            f"   ```yaml\n{config}\n   ```\n"
            "2. Add the path to your stylesheet to `custom_css` in `ferry.yaml`:\n"
            "   ```yaml\n   custom_css:\n     - ./fonts/font-face.css\n   ```\n")


def test_a_step_is_never_a_parts_last_line_while_its_command_opens_the_next():
    """A step and the command it holds are one quote; a part boundary between them leaves the step without it."""
    page, chunks = parts(_steps(700))
    assert len(chunks) == 2
    assert chunks[1].text.startswith("2. Add the path to your stylesheet")  # the step moved on with its command
    assert "custom_css:\n" in chunks[1].text and "2. Add" not in chunks[0].text
    assert chunks[0].text.startswith("1. Add your font files") and "option_0" in chunks[0].text
    assert_spans_hold(page, chunks)


def test_a_step_alone_in_its_part_keeps_its_command_even_past_the_size():
    page, chunks = parts(_steps(900))  # the first step's command alone is past the size: it and its step stay
    step_one = next(c for c in chunks if "1. Add your font files" in c.text)
    assert "option_0" in step_one.text and step_one.text.rstrip().endswith("```")
    assert all(c.text.startswith(("1. ", "2. ")) for c in chunks)  # no part opens on a command
    assert_spans_hold(page, chunks)


def test_only_the_step_holding_the_command_moves_on_with_it():
    """The steps before it stay: moving the whole list would leave the intro alone and the next part past the size."""
    page, chunks = parts("# Setup\n\nIntro sentence here.\n\n1. Create an account on the site.\n2. Open the settings page.\n"
                         '3. Add this to your config:\n   ```js\n   export default { option: "a long value here" };\n   ```\n',
                         max_chars=120)
    assert [c.text.split("\n")[0] for c in chunks] == ["Intro sentence here.", "3. Add this to your config:"]
    assert chunks[0].text.endswith("2. Open the settings page.") and "export default" in chunks[1].text
    assert all(len(c.text) <= 120 for c in chunks)
    assert_spans_hold(page, chunks)
