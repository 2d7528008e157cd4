"""A page as Markdown for agents: MDX noise gone, headings and links as a reader needs them, code untouched."""

from __future__ import annotations

from ingest.corpus import load_corpus
from ingest.page_markdown import page_markdown

PAGE = """---
title: Webhooks
description: |
  How deliveries are signed
  and retried.
---
import Tabs from '@theme/Tabs';

# Webhooks

Read <Highlight color="blue">the guide</Highlight> first; see [Retries](/guides/retries#backoff).


## Signing {#signing}

```mdx
## Not a heading {#kept}
[a link](/stays/as/written)
```

<Tabs>
  <TabItem value="js">Use the SDK.</TabItem>
</Tabs>
"""


def test_a_page_as_markdown_keeps_text_and_code_and_drops_mdx(tmp_path):
    (tmp_path / "site.toml").write_text('[site]\nname = "Hooks"\nbase_url = "/docs"\n')
    (tmp_path / "webhooks.mdx").write_text(PAGE)
    page = load_corpus(tmp_path).page("webhooks")
    text = page_markdown(page, link_base="https://bot.example/docs", source="https://bot.example/docs/webhooks")
    assert text.startswith("# Webhooks\n\n> How deliveries are signed and retried.\n\n"
                           "Source: https://bot.example/docs/webhooks\n\n")
    assert text.count("# Webhooks") == 1  # the page's own H1 is the title, not repeated
    assert "Read the guide first; see [Retries](https://bot.example/docs/guides/retries#backoff)." in text
    assert "## Signing\n" in text and "{#signing}" not in text
    assert "```mdx\n## Not a heading {#kept}\n[a link](/stays/as/written)\n```" in text  # code is copied as written
    assert "Use the SDK." in text
    assert "import " not in text and "<Tabs>" not in text and "Highlight" not in text and "\n\n\n" not in text
