"""Quotes read like the docs: inline Markdown rendered safely, table rows under their headers, cards without raw
Markdown, chips numbered in reading order, and refusals that link the sections they looked at."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import partial
from html import unescape
from types import SimpleNamespace

import pytest
from starlette.testclient import TestClient

from answer.contract.draft import parse_draft
from answer.contract.verify import Citation, Claim
from answer.pipeline import Answerer
from ingest.inline import render_inline
from ingest.site import SiteConfig
from retrieval.search import DenseRetriever, renumber
from retrieval.viewer import Viewer
from tests.fakes import LIMITS, REFUNDS, HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web import render
from web.app import create_app
from web.quotes import excerpt_html, quote_html
from web.settings import Settings

SITE = SiteConfig(base_url="/docs")
ON_SITE = partial(render.is_site_url, site=SITE)
TABLE_TEXT = ("Requests are limited per workspace.\n\nPlan | Requests per second | Burst capacity\n"
              "Starter | 50 | 100\nGrowth | 200 | `400`\n\nLimits reset every minute.")
RATES = make_chunk("limits/rates", "rate-limits", TABLE_TEXT, title="Limits", heading="Rate limits")
HEADER = "Plan | Requests per second | Burst capacity"


def plain(html: str) -> str:
    """What a reader sees: tags dropped, entities decoded."""
    return unescape(re.sub(r"<[^>]+>", "", html))


def cite(chunk, quote: str, handle: str = "c1", header: str = "") -> Citation:  # noqa: ANN001
    start = chunk.text.index(quote)
    return Citation(handle, chunk.id, quote, start, start + len(quote), "", chunk.url, chunk.title, chunk.heading_path,
                    chunk.doc_version, chunk.hash, header)


# --- render_inline -----------------------------------------------------------------------------

@pytest.mark.parametrize(("markdown", "html"), [
    ("run `ferry deploy --yes` now", "run <code>ferry deploy --yes</code> now"),
    ("this is **required** and *optional* and _also_", "this is <strong>required</strong> and <em>optional</em> and <em>also</em>"),
    ("`a | b` and ~~old~~", "<code>a | b</code> and <s>old</s>"),
    ("plain text stays plain.", "plain text stays plain."),
])
def test_render_inline_renders_code_and_emphasis_like_the_docs(markdown, html):
    assert render_inline(markdown) == html


def test_a_link_is_a_link_only_under_the_sites_base_url():
    text = "see [refunds](/docs/billing/refunds#refund-windows) or [evil](https://evil.example/x) or <https://evil.example>"
    html = render_inline(text, link=ON_SITE)
    assert '<a href="/docs/billing/refunds#refund-windows" target="_blank" rel="noopener">refunds</a>' in html
    assert "evil.example/x" not in html and plain(html) == "see refunds or evil or https://evil.example"
    assert "<a" not in render_inline(text)  # no link check: no links at all, text only


@pytest.mark.parametrize("markdown", [
    "<script>alert(1)</script>", "`<script>alert(1)</script>`", "[click](javascript:alert(1))", "[x](JaVaScRiPt:alert(1))",
    "<javascript:alert(1)>", "[x](data:text/html,<script>alert(1)</script>)", '[x](/docs/a "t\\" onmouseover=alert(1))',
    "<img src=x onerror=alert(1)>", "![x](/docs/x.png)", "[x](//evil.example/docs)", "[x](/\\evil.example)",
    "&lt;script&gt;alert(1)&lt;/script&gt;", "&#x3C;script&#x3E;alert(1)", "odd ` backtick <b>", "**unbalanced *stars <i>",
    "\ue000<script>\ue001", "[a](/docs/\ue001x)`b\ue000`",
])
def test_render_inline_never_lets_markup_or_script_urls_through(markdown):
    html = render_inline(markdown, link=ON_SITE)
    tags = re.findall(r"<(/?)([a-z]+)([^>]*)>", html)
    assert all(name in ("code", "em", "strong", "s", "a", "mark") for _, name, _ in tags), html
    for _, name, attrs in tags:
        assert not attrs or (name == "a" and re.fullmatch(r' href="[^"<>]*" target="_blank" rel="noopener"', attrs)), html
    assert "\ue000" not in html and "\ue001" not in html
    for href in re.findall(r'href="([^"]*)"', html):
        assert render.is_site_url(unescape(href), SITE), href


def test_entities_and_unbalanced_markup_show_as_typed():
    # Chunk text is already rendered text: an entity in it is what the page showed, never decoded again.
    assert plain(render_inline("&lt;script&gt; &amp; &#x3C;")) == "&lt;script&gt; &amp; &#x3C;"
    assert render_inline("odd ` tick") == "odd ` tick"
    assert render_inline("5 * 3 ** 2") == "5 * 3 ** 2"


def test_a_span_is_marked_or_clipped_with_markup_kept_balanced():
    text = "Use `--dry-run` to preview **every** change."
    start = text.index("dry-run")
    assert render_inline(text, span=(start, len(text)), clip=True) == "<code>dry-run</code> to preview <strong>every</strong> change."
    marked = render_inline(text, span=(text.index("**"), text.index("change")))
    assert marked == "Use <code>--dry-run</code> to preview <strong><mark>every</mark></strong><mark> </mark>change."


# --- quotes ----------------------------------------------------------------------------------------

def test_a_quote_renders_code_and_loses_list_markers():
    text = "- Retries use `exponential backoff` for up to 72 hours.\n- Deliveries are signed."
    start = text.index("Retries")
    html = str(quote_html(text, start - 2, text.index("\n")))
    assert html == "Retries use <code>exponential backoff</code> for up to 72 hours."


def test_a_table_row_quote_is_a_small_table_under_its_header():
    row = "Growth | 200 | `400`"
    c = cite(RATES, row, header=HEADER)
    html = str(quote_html(RATES.text, c.start, c.end, header=HEADER))
    head = re.search(r"<thead>(.*)</thead>", html).group(1)
    body = re.search(r"<tbody>(.*)</tbody>", html).group(1)
    assert re.findall(r'<th scope="col">(.*?)</th>', head) == ["Plan", "Requests per second", "Burst capacity"]
    assert re.findall(r"<td>(.*?)</td>", body) == ["Growth", "200", "<code>400</code>"]
    assert "|" not in html and "`" not in html
    view = render.cite_view(renumber("q", Viewer.anonymous(), [(RATES, 1.0)]), c, SITE, "card")
    assert view.is_table and view.quote == row  # data-quote keeps the verbatim text


def test_a_partial_row_keeps_its_columns_and_shows_only_the_quoted_cells():
    start = RATES.text.index("50 | 100")
    html = str(quote_html(RATES.text, start, start + len("50 | 100"), header=HEADER))
    assert re.findall(r"<td>(.*?)</td>", html) == ["", "50", "100"]


@pytest.mark.parametrize("quote", ["Starter | 50 | 100", "Limits reset every minute.", "Requests are limited per workspace",
                                   "Bursts use `token buckets` refilled each second."])
def test_hover_card_excerpt_has_no_raw_markdown(quote):
    text = ("## Rate limits\n\nRequests are limited per workspace, see [plans](/docs/plans#limits) and **burst** rules.\n\n"
            "- Bursts use `token buckets` refilled each second.\n- Limits are **per key**.\n\n" + HEADER +
            "\nStarter | 50 | 100\n\n```bash\nferry limits --json\n```\n\nLimits reset every minute.")
    start = text.index(quote)
    html = str(excerpt_html(text, start, start + len(quote), width=90, link=ON_SITE))
    seen = plain(html)
    assert not re.search(r"`|\*\*|\]\(|^#|\|", seen, re.M), seen
    assert not re.search(r"(^|<br>)\s*[-*+] ", html), html
    marked = " ".join(plain(m) for m in re.findall(r"<mark>(.*?)</mark>", html)).split()
    assert marked == quote.replace("|", " ").replace("`", "").split()


def test_hover_card_excerpt_cuts_at_word_boundaries_and_never_inside_code():
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho"
    text = f"{words} `ferry deploy --yes --region eu-west` {words}. The quoted sentence is here. {words} `a b c d e f` {words}"
    start = text.index("The quoted")
    end = start + len("The quoted sentence is here.")
    html = str(excerpt_html(text, start, end, width=60))
    seen = plain(html)
    assert seen.startswith("…") and seen.endswith("…")
    first, last = seen[1:].split()[0], seen[:-1].split()[-1]
    assert f" {first} " in f" {text} ".replace("`", " ") and f" {last} " in f" {text} ".replace("`", " ")
    assert "`" not in seen and "<mark>The quoted sentence is here.</mark>" in html


def test_a_code_block_in_the_card_keeps_its_lines_and_indentation():
    """Each code line was an inline <code> of its own: indentation collapsed, blank lines became empty boxes."""
    text = ("Pass the raw body.\n\n```ts\napp.post('/hook', (req, res) => {\n  try {\n    verify(req)\n\n  } catch {}\n"
            "});\n```\n\nThen reply 200.")
    start = text.index("Pass")
    html = str(excerpt_html(text, start, start + len("Pass the raw body."), width=400))
    block = re.search(r'<span class="card-code"><code>(.*?)</code></span>', html, re.S)
    assert block, html
    assert block.group(1) == ("app.post(&#x27;/hook&#x27;, (req, res) =&gt; {\n  try {\n    verify(req)\n\n  } catch {}\n"
                              "});")
    assert html.count("card-code") == 1 and "<code></code>" not in html
    assert html.endswith("</span>Then reply 200.")  # the block ends its own line: no <br> after it
    listed = "1. Install it:\n\n   ```bash\n   npm i ferry\n     --save\n   ```\n\n2. Run it."
    item = str(excerpt_html(listed, 0, len("1. Install it:"), width=200))  # a block inside a list item
    assert '<span class="card-code"><code>npm i ferry\n  --save</code></span>' in item, item
    inside = text.index("verify(req)")  # a window that starts or ends inside the block takes whole lines
    cut = str(excerpt_html(text, inside, inside + len("verify(req)"), width=12))
    assert "<code>try {\n  <mark>verify(req)</mark>\n\n} catch {}</code>" in cut, cut  # shared indentation off


def test_the_card_keeps_the_existing_plain_text_behaviour():
    c = cite(REFUNDS, "Refunds are available within 14 days of the charge.")
    html = str(excerpt_html(REFUNDS.text, c.start, c.end))
    assert html == "<mark>Refunds are available within 14 days of the charge.</mark> Annual plans are refunded pro rata."


# --- chip numbering --------------------------------------------------------------------------------

TAXES = make_chunk("billing/taxes", "vat", "VAT is charged on every invoice issued to customers in the EU.",
                   title="Taxes", heading="VAT")


def answer_of(rset, claims, state="answered"):  # noqa: ANN001, ANN201
    return SimpleNamespace(id="a1", question="q", state=state, degraded=False, claims=tuple(claims), retrieval=rset,
                           hidden=(), model_unavailable=False, disagreement=False, related=False, written=None,
                           unmentioned=())


def test_chips_are_numbered_in_reading_order_and_a_chunk_cited_twice_keeps_its_number():
    rset = renumber("q", Viewer.anonymous(), [(REFUNDS, 1.0), (TAXES, 0.9), (LIMITS, 0.8)])
    refund = cite(REFUNDS, "Refunds are available within 14 days of the charge.", "c1")
    annual = cite(REFUNDS, "Annual plans are refunded pro rata.", "c1")
    vat = cite(TAXES, "VAT is charged on every invoice issued to customers in the EU.", "c2")
    limit = cite(LIMITS, "The maximum payload size is 256 KB.", "c3")
    claims = [Claim("VAT", "supported", (vat,)), Claim("refund", "supported", (refund, limit)),
              Claim("annual", "supported", (annual,))]
    view = render.turn_view(answer_of(rset, claims), SITE, "t1")
    chips = [(c.handle, c.number) for claim in view.claims for c in claim.cites]
    assert chips == [("c2", 1), ("c1", 2), ("c3", 3), ("c1", 2)]  # c1 is ranked first but cited second
    assert [(s.handle, s.number) for s in view.sources] == [("c2", 1), ("c1", 2), ("c3", 3)]
    assert view.claims[1].cites[0].label == "Source 2: Refunds › Refund windows"


def test_an_unresolved_citation_leaves_no_gap_in_the_numbers():
    rset = renumber("q", Viewer.anonymous(), [(REFUNDS, 1.0), (TAXES, 0.9)])
    phantom = replace(cite(REFUNDS, "Refunds are available within 14 days of the charge."), handle="c7")
    vat = cite(TAXES, "VAT is charged on every invoice issued to customers in the EU.", "c2")
    view = render.turn_view(answer_of(rset, [Claim("x", "supported", (phantom, vat))]), SITE, "t2")
    assert [c.number for claim in view.claims for c in claim.cites] == [1]


class ByChunk:
    """Cites chunks by id whatever handles retrieval gave them: TAXES, then REFUNDS, then TAXES again."""

    name = "by-chunk"

    def draft(self, question, rset, *, feedback=()):  # noqa: ANN001, ANN201
        handle = {h.chunk.id: h.handle for h in rset.hits}
        order = [(TAXES, TAXES.text), (REFUNDS, "Refunds are available within 14 days of the charge."), (TAXES, TAXES.text)]
        claims = [{"quotes": [{"handle": handle[c.id], "quote": q}], "claim": q} for c, q in order]
        return parse_draft(json.dumps({"refused": False, "claims": claims}))


def test_streamed_chips_carry_the_same_numbers_as_the_final_turn():
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS, TAXES])
    app = TestClient(create_app(Settings(), answerer=Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), ByChunk()),
                                store=store))
    body = app.get("/ask/stream", params={"question": "refund window?", "turn": "tnum"}).text
    claims = re.findall(r"event: claim\n((?:data: .*\n)+)", body)
    final = body.split("event: done", 1)[1]
    streamed = [re.findall(r'class="chip"[^>]*data-handle="(c\d)"[^>]*>(\d+)<', c) for c in claims]
    labels = [n for chips in streamed for _, n in chips]
    assert labels == ["1", "2", "1"], streamed
    assert re.findall(r'class="chip"[^>]*>(\d+)<', final) == labels


# --- refusals --------------------------------------------------------------------------------------

def refusal(rset) -> render.TurnView:  # noqa: ANN001
    return render.turn_view(answer_of(rset, [], state="refused"), SITE, "t3")


def test_a_refusal_links_the_sections_it_looked_at_at_most_four_readable_on_site_ones():
    secret = make_chunk("internal/overrides", "limits", "Agents may approve overrides.", title="Overrides", access=("staff",))
    offsite = replace(TAXES, id="doc:x#y", url="https://evil.example/taxes#vat", title="Offsite")
    part_two = replace(REFUNDS, id=REFUNDS.id + "~2")  # a second chunk of the same section: listed once
    extra = [make_chunk(f"p/{i}", "a", f"Text {i}.", title=f"Page {i}") for i in range(4)]
    rset = renumber("q", Viewer.anonymous(), [(REFUNDS, 1.0), (secret, 0.9), (part_two, 0.9), (offsite, 0.8)]
                    + [(c, 0.5) for c in extra])
    listed = refusal(rset).related
    assert [r.title for r in listed] == ["Refunds", "Offsite", "Page 0", "Page 1"]
    assert [r.href for r in listed] == ["/docs/billing/refunds#refund-windows", None, "/docs/p/0#a", "/docs/p/1#a"]


def test_refusal_wording_with_and_without_retrieved_sections():
    embedder = HashEmbedder()
    refuse = json.dumps({"refused": True, "claims": []})
    for chunks, expected in (([REFUNDS], "I found related sections, but none of them answers this."),
                             ([], "No docs section matched this question.")):
        store = MemoryIndex(embedder, chunks)
        answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(refuse, refuse))
        html = TestClient(create_app(Settings(), answerer=answerer, store=store)).post(
            "/ask", data={"question": "refund in gold?"}).text
        turn = html[html.index('<article class="turn'):]
        assert 'data-state="refused"' in turn and expected in turn and "No answer in the docs" in turn
        assert "Verified" not in turn and "I don't have this" not in turn
        links = [unescape(h) for h in re.findall(r'<a [^>]*href="([^"]+)"', turn.split('class="banner refusal"', 1)[1])]
        if chunks:
            assert links[0] == REFUNDS.url and "Refunds › Refund windows" in turn
        assert any(h.startswith("/docs/search?q=") for h in links)


def test_a_quoted_code_block_keeps_its_language_and_loses_the_list_item_indent():
    """"…terminal: ```shell npm run dev" came out on one line as prose; a block in a list item kept its indent."""
    text = "1. Start the dev server in your terminal:\n\n   ```shell\n   npm run dev\n   ```\n\n2. Open the page."
    start, end = text.index("Start"), text.index("```\n\n2.") + 3
    shown = str(quote_html(text, start, end))
    assert shown == ('<span class="step">1.</span> Start the dev server in your terminal:<br>'
                     '<pre class="quote-code" data-lang="shell"><code class="language-shell">npm run dev</code></pre>')
    inside = text.index("npm")  # a quote starting inside the block still names its language
    assert 'data-lang="shell"' in str(quote_html(text, inside, inside + len("npm run dev")))


def test_a_fence_info_string_never_reaches_the_page_as_markup():
    text = 'Run this:\n\n```"><img src=x onerror=alert(1)>\nferry deploy\n```'
    shown = str(quote_html(text, 0, len(text)))
    assert "<img" not in shown and "data-lang" not in shown and "ferry deploy" in shown


def test_a_quoted_step_keeps_its_number_and_a_quote_from_inside_an_item_gets_none():
    """Seen on a held-out site: steps 2 and 3 quoted read as a list without numbers, so the order was lost."""
    text = ("1. Open Settings and find the charge.\n2. Click Request refund and pick a reason.\n"
            "3. Ferrydeck confirms the refund by email.")
    steps = str(quote_html(text, text.index("Click"), text.index("email.") + 6))
    assert steps == ('<span class="step">2.</span> Click Request refund and pick a reason.<br>'
                     '<span class="step">3.</span> Ferrydeck confirms the refund by email.')
    inside = str(quote_html(text, text.index("Request"), text.index("reason.") + 7))
    assert "step" not in inside and inside.startswith("Request refund")
    bullets = "- Open Settings.\n- Click Request refund."
    assert "step" not in str(quote_html(bullets, 0, len(bullets)))
