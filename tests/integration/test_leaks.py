"""The leak suite: no restricted page surfaces for a reader outside its access list, anywhere.

For every restricted page of content/ the probes are built from the page
itself — the first sentence of each chunk, its title, its heading texts and
ids, and its distinctive quotes (codes, numbers) — and asked, over the real
uvicorn server with the real model and a real Chroma index, by an anonymous
reader and by a reader of another group. Every surface is scanned for the
page's markers (chunk ids, slug, URL, title, every sentence no readable page
also says): the JSON API, the streamed answer, the full page, the docs
search, the docs viewer, the audit view and the prompt the LLM received. A
positive control proves the probes find the page for a reader who may read
it, so "0 leaks" is not the result of probes that never hit. A summary is
written to test-artifacts/leak-report.json.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus, unquote

import httpx
import pytest
from markupsafe import escape

from answer.llm.client import LiteLLMGenerator
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.documents import PUBLIC, Chunk, Page
from retrieval.services import open_retriever
from retrieval.viewer import Viewer
from tests.conftest import CONTENT, REPO
from tests.fakes import sentences
from tests.scripted_llm import Reply, ScriptedLLM, passages
from web.app import create_app
from web.questions import read_question
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

HEADER = "X-Forwarded-Groups"
REPORT = REPO / "test-artifacts" / "leak-report.json"
WORKERS = 4
_CODE = re.compile(r"`([^`\n]{3,60})`")
_FIGURE = re.compile(r"\$?\d[\d,.]*(?:\s?(?:%|KB|MB|GB|days|hours|minutes|requests/s|events))?")
_QUESTION = re.compile(r"<question>.*?</question>", re.DOTALL)


def norm(text: str) -> str:
    """Compare text as a reader sees it: NFKC, no Markdown emphasis or backticks, one space, lower case."""
    text = unicodedata.normalize("NFKC", text).replace("`", "").replace("*", "").replace("\u200b", "")
    return " ".join(text.lower().split())


def haystack(body: str) -> str:
    """A response as plain text, as raw attributes and URL-decoded, so a marker in any of them is found."""
    plain = html.unescape(re.sub(r"<[^>]*>", "", body))
    raw = html.unescape(body)
    return "\n".join(norm(s) for s in (plain, raw, unquote(raw)))


def without_echo(body: str, question: str) -> str:
    """The response minus every encoding of the visitor's own question (echoing the probe is not a leak)."""
    variants = {question, str(escape(question)), html.escape(question), html.escape(question, quote=False),
                quote(question), quote_plus(question), quote(question, safe=""),
                json.dumps(question)[1:-1], json.dumps(question, ensure_ascii=False)[1:-1]}
    for variant in sorted(variants, key=len, reverse=True):
        body = body.replace(variant, " ")
    return body


@dataclass(frozen=True)
class Target:
    """A restricted page: who may read it, what would betray it, and the probes built from it."""

    page: Page
    markers: tuple[str, ...]  # normalized strings that only this page says
    probes: tuple[tuple[str, str], ...]  # (family, question)

    def found_in(self, text: str) -> list[str]:
        return [m for m in self.markers if m in text]


def build_targets(pages: Sequence[Page], chunks: Sequence[Chunk]) -> list[Target]:
    """Markers and probes for every page that is not public."""
    targets = []
    for page in (p for p in pages if PUBLIC not in p.access):
        own = [c for c in chunks if c.doc_id == f"doc:{page.slug}"]
        elsewhere = norm("\n".join(f"{c.title}\n{c.text}" for c in chunks if c.doc_id != f"doc:{page.slug}"))
        distinct = [s for c in own for s in sentences(c.text) if len(norm(s)) >= 25 and norm(s) not in elsewhere]
        markers = {norm(c.id) for c in own} | {norm(f"doc:{page.slug}"), norm(page.url)} | {norm(s) for s in distinct}
        if norm(page.title) not in elsewhere:
            markers.add(norm(page.title))
        probes: list[tuple[str, str]] = [("title", page.title)]
        probes += [("section", sentences(c.text)[0]) for c in own if sentences(c.text)]
        probes += [("heading", h.text) for h in page.headings]
        probes += [("heading-id", h.anchor) for h in page.headings if h.anchor]
        codes = {m for c in own for m in _CODE.findall(c.text)} | {m.strip() for c in own for m in _FIGURE.findall(c.text)}
        probes += [("quote", f"What is {code}?") for code in sorted(codes) if len(code) >= 3 and norm(code) not in elsewhere]
        probes += [("quote", max(ds, key=lambda s: sum(ch.isdigit() for ch in s)))
                   for c in own if (ds := [s for s in sentences(c.text) if norm(s) not in elsewhere][1:])]
        targets.append(Target(page, tuple(sorted(markers)), tuple(dict.fromkeys(probes))))
    return targets


def outsiders(target: Target) -> list[tuple[str, ...]]:
    """Readers who must not see the page: anonymous, another tenant, and staff when staff is not listed."""
    other = ("tenant-globex",) if any(a.startswith("tenant-") for a in target.page.access) else ("tenant-acme",)
    readers = [(), other] + ([("staff",)] if "staff" not in target.page.access else [])
    return [r for r in readers if not Viewer.of(r).may_read(target.page.access)]


class CachedEmbedder:
    """The real model, with each distinct text embedded once (probes are asked by several readers, on several routes)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.id, self.dimension = inner.id, inner.dimension
        self._seen: dict[str, list[float]] = {}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if missing:
            self._seen.update(zip(missing, self.inner.embed(missing), strict=True))
        return [self._seen[t] for t in texts]


class EchoLLM(ScriptedLLM):
    """A model that quotes the first sentence of every passage it is shown: whatever reaches the prompt gets shown."""

    def reply_to(self, body: dict[str, Any]) -> Reply:
        claims = [{"quotes": [{"handle": h, "quote": s[0]}], "claim": s[0]}
                  for h, text in passages(body) if (s := sentences(text.replace("\u200b", "")))]
        return Reply.json({"refused": not claims, "claims": claims})


@dataclass
class Ledger:
    """Every probe request and every leak found, for the assertion and the report."""

    requests: Counter
    probes: Counter
    leaks: list[str]

    def check(self, surface: str, text: str, targets: Iterable[Target], where: str) -> None:
        self.requests[surface] += 1
        for target in targets:
            for marker in target.found_in(text):
                self.leaks.append(f"{surface}: {target.page.slug} surfaced ({marker[:80]!r}) for {where}")


@pytest.fixture(scope="module")
def world(corpus, content_index, real_embedder, tmp_path_factory):
    """One index, one echo LLM, one uvicorn server with a trusted identity header."""
    targets = build_targets(corpus.pages, corpus.chunks())
    data = tmp_path_factory.mktemp("leak-data")
    settings = Settings(content_dir=CONTENT, data_dir=data, identity_header=HEADER)
    embedder = CachedEmbedder(real_embedder)
    with EchoLLM().running() as llm:
        generator = LiteLLMGenerator("openai/echo", api_base=llm.url, api_key="x", timeout=20, max_retries=0)
        answerer = Answerer(open_retriever(settings, store=content_index, embedder=embedder), generator,
                            audit=SQLiteAnswerLog(settings.audit_path))
        app = create_app(settings, answerer=answerer, store=content_index, corpus=corpus)
        with serve(app) as url, httpx.Client(base_url=url, timeout=60) as client:
            yield {"targets": targets, "llm": llm, "client": client, "answerer": answerer, "settings": settings,
                   "corpus": corpus, "store": content_index, "embedder": embedder}


def unreadable(targets: Sequence[Target], groups: tuple[str, ...]) -> list[Target]:
    return [t for t in targets if not Viewer.of(groups).may_read(t.page.access)]


def ask_everywhere(client: httpx.Client, question: str, groups: tuple[str, ...]) -> dict[str, str]:
    """One probe on every answer surface; each response with the question's own echo removed."""
    headers = {HEADER: ",".join(groups)} if groups else {}
    asked = read_question(question)
    api = client.post("/api/ask", json={"question": question}, headers=headers)
    assert api.status_code == 200, api.text[:300]
    body = api.json()
    body.pop("question", None)  # the visitor's own question echoed back, as typed and as searched, is not a leak
    body.pop("asked", None)
    stream = client.get("/ask/stream", params={"question": question, "turn": "t1"}, headers=headers)
    page = client.post("/ask", data={"question": question}, headers=headers)
    search = client.get("/docs/search", params={"q": question}, headers=headers)
    for response in (stream, page, search):
        assert response.status_code == 200, response.text[:300]
    query = " ".join(question.split())[:200]
    return {"api": json.dumps(body, ensure_ascii=False), "stream": without_echo(stream.text, asked),
            "page": without_echo(page.text, asked), "search": without_echo(search.text, query)}


def test_no_restricted_page_surfaces_for_readers_outside_its_access_list(world):
    targets: list[Target] = world["targets"]
    client, llm = world["client"], world["llm"]
    ledger = Ledger(Counter(), Counter(), [])
    readers = sorted({r for t in targets for r in outsiders(t)})
    assert len(targets) >= 5 and all(t.markers and t.probes for t in targets)
    for groups in readers:
        probes = sorted({q for t in targets if groups in outsiders(t) for _, q in t.probes})
        ledger.probes.update(f for t in targets if groups in outsiders(t) for f, _ in t.probes)
        hidden = unreadable(targets, groups)
        first = len(llm.requests)
        with ThreadPoolExecutor(WORKERS) as pool:
            for question, found in zip(probes, pool.map(lambda q, groups=groups: ask_everywhere(client, q, groups), probes), strict=True):
                for surface, text in found.items():
                    ledger.check(surface, haystack(text), hidden, f"{groups or 'anonymous'} asking {question[:60]!r}")
        for body in llm.requests[first:]:
            prompt = "\n".join(m.get("content") or "" for m in body.get("messages", []))
            ledger.check("prompt", haystack(_QUESTION.sub(" ", prompt)), hidden, f"{groups or 'anonymous'}")
    control = positive_control(world, targets)
    write_report(ledger, control, targets)
    assert not ledger.leaks, "\n".join(ledger.leaks[:20])
    assert ledger.requests["prompt"] >= len(readers)  # the prompts were really recorded and scanned


def positive_control(world: dict[str, Any], targets: Sequence[Target]) -> dict[str, Any]:
    """The same probes find each page for a reader who may read it, and the scanner sees it in the API answer."""
    retriever = world["answerer"].retriever
    found: dict[str, Any] = {}
    for target in targets:
        reader = Viewer.of(target.page.access)
        hits = sum(any(h.chunk.doc_id == f"doc:{target.page.slug}" for h in retriever.search(q, reader).hits)
                   for _, q in target.probes)
        first = len(world["llm"].requests)
        response = world["client"].post("/api/ask", json={"question": target.probes[1][1]},
                                        headers={HEADER: ",".join(target.page.access)}).json()
        response.pop("question"), response.pop("asked")
        seen = bool(target.found_in(haystack(json.dumps(response, ensure_ascii=False))))
        prompts = [_QUESTION.sub(" ", m.get("content") or "") for b in world["llm"].requests[first:] for m in b["messages"]]
        in_prompt = bool(target.found_in(haystack("\n".join(prompts))))
        found[target.page.slug] = {"probes": len(target.probes), "retrieved_for_reader": hits,
                                   "scanner_sees_it": seen, "prompt_scanner_sees_it": in_prompt}
        assert seen and in_prompt, f"the scanner did not see {target.page.slug} in an answer to its own reader"
        assert hits >= len(target.probes) // 2, f"only {hits}/{len(target.probes)} probes find {target.page.slug} for its reader"
    return found


def write_report(ledger: Ledger, control: dict[str, Any], targets: Sequence[Target]) -> None:
    pairs = sum(ledger.probes.values())
    report = {
        "summary": f"ACL: {pairs} probes, {len(ledger.leaks)} leaks",
        "pages": [t.page.slug for t in targets],
        "markers": sum(len(t.markers) for t in targets),
        "probes_by_family": dict(sorted(ledger.probes.items())),
        "responses_scanned_by_surface": dict(sorted(ledger.requests.items())),
        "positive_control": control,
        "leaks": ledger.leaks,
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(report["summary"], json.dumps(report["responses_scanned_by_surface"]))


# -- identity: only the configured mechanism decides who is staff -----------------------------

ELEVATION = {"headers": {HEADER: "staff,tenant-acme", "X-Groups": "staff", "X-Forwarded-User": "staff",
                         "Cookie": "groups=staff; viewer=staff", "Authorization": "Bearer staff"},
             "params": {"groups": "staff,tenant-acme", "viewer": "staff", "group": "staff"}}


def staff_probe(targets: Sequence[Target]) -> tuple[Target, str]:
    target = next(t for t in targets if t.page.slug == "internal/refund-overrides")
    return target, next(q for f, q in target.probes if f == "section")


def attempts_to_elevate(client: httpx.Client, question: str, *, keep: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Every route asked with every header, parameter and body field a visitor could use to claim a group."""
    headers = {k: v for k, v in ELEVATION["headers"].items() if k not in keep}
    params = ELEVATION["params"]
    asked = read_question(question)
    api = client.post("/api/ask", params=params, headers=headers,
                      json={"question": question, "groups": ["staff"], "viewer": {"groups": ["staff"]}})
    body = api.json()
    body.pop("question", None)  # the visitor's own question echoed back, as typed and as searched, is not a leak
    body.pop("asked", None)
    out = [("api", json.dumps(body, ensure_ascii=False))]
    out.append(("stream", without_echo(client.get("/ask/stream", params=params | {"question": question}, headers=headers).text, asked)))
    out.append(("page", without_echo(client.post("/ask", params=params, headers=headers,
                                                 data={"question": question, "groups": "staff"}).text, asked)))
    for path in ("/answers", "/docs/internal/refund-overrides", "/docs/search?q=refund+override+approval"):
        response = client.get(path, params=params, headers=headers)
        assert response.status_code in (200, 403, 404), (path, response.status_code)
        out.append((path, response.text.replace(path, " ")))  # a 404 names the path the visitor asked for
    return out


@pytest.fixture(scope="module")
def open_client(world):
    """The same index and model behind an app with no identity mechanism configured (everyone anonymous)."""
    settings = Settings(content_dir=CONTENT, data_dir=world["settings"].data_dir)
    app = create_app(settings, answerer=world["answerer"], store=world["store"], corpus=world["corpus"])
    with serve(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client


def test_without_an_identity_header_nothing_a_visitor_sends_elevates(world, open_client):
    target, question = staff_probe(world["targets"])
    for surface, text in attempts_to_elevate(open_client, question):
        assert not target.found_in(haystack(text)), f"{surface} showed {target.page.slug} to a visitor who claimed staff"
    assert open_client.get("/answers", headers={HEADER: "staff"}).status_code == 403
    assert open_client.get("/docs/internal/refund-overrides", headers={HEADER: "staff"}).status_code == 404
    # the control: the configured header does let staff see the page on the other app
    granted = world["client"].post("/api/ask", json={"question": question}, headers={HEADER: "staff"}).json()
    granted.pop("question"), granted.pop("asked")
    assert target.found_in(haystack(json.dumps(granted)))


def test_with_an_identity_header_only_that_header_counts(world):
    target, question = staff_probe(world["targets"])
    for surface, text in attempts_to_elevate(world["client"], question, keep=(HEADER,)):
        assert not target.found_in(haystack(text)), f"{surface} showed {target.page.slug} without the identity header"
    assert world["client"].get("/answers", headers={"X-Groups": "staff"}).status_code == 403


def test_restricted_docs_pages_answer_exactly_like_missing_ones(world):
    client = world["client"]
    for target in world["targets"]:
        slug = target.page.slug
        variants = [slug, slug + "/", slug.upper(), quote(slug, safe=""), f"guides/../{slug}", f"/{slug}", slug + ".mdx"]
        for groups in outsiders(target):
            headers = {HEADER: ",".join(groups)} if groups else {}
            for variant in variants:
                response = client.get(f"/docs/{variant}", headers=headers)
                assert response.status_code == 404, (variant, groups)
                assert not target.found_in(haystack(response.text.replace(variant, " ").replace(slug, " ")))
            missing = client.get(f"/docs/{slug}-nope", headers=headers).text.replace(f"{slug}-nope", slug)
            assert client.get(f"/docs/{slug}", headers=headers).text == missing  # no existence oracle
        assert client.get(f"/docs/{slug}", headers={HEADER: ",".join(target.page.access)}).status_code == 200


def test_the_audit_view_and_threads_never_show_a_staff_answer_to_others(world):
    client = world["client"]
    target, question = staff_probe(world["targets"])
    staff_page = client.post("/ask", data={"question": question}, headers={HEADER: "staff"}).text
    answer_id = re.search(r'data-answer-id="([0-9a-f]+)"', staff_page).group(1)
    thread = re.search(r'name="thread_id" id="thread-id" value="([0-9a-f]{40})"', staff_page).group(1)
    assert target.found_in(haystack(without_echo(staff_page, question)))
    audit = client.get(f"/answers/{answer_id}", headers={HEADER: "staff"})
    assert audit.status_code == 200 and target.found_in(haystack(audit.text))
    for groups in ((), ("tenant-acme",), ("tenant-globex",)):
        headers = {HEADER: ",".join(groups)} if groups else {}
        for path in (f"/answers/{answer_id}", "/answers", f"/answers?q={quote_plus(question[:20])}"):
            response = client.get(path, headers=headers)
            assert response.status_code == 403 and not target.found_in(haystack(response.text)), (path, groups)
        for path in (f"/?thread={thread}", f"/ask/thread?thread={thread}"):  # the staff thread's link, opened by others
            shared = client.get(path, headers=headers)
            assert shared.status_code == 200 and not target.found_in(haystack(shared.text)), (path, groups)
        follow_up = client.post("/ask", data={"question": "How do I rotate it?", "thread_id": thread}, headers=headers)
        assert follow_up.status_code == 200 and not target.found_in(haystack(follow_up.text)), groups
        api = client.post("/api/ask", json={"question": "How do I rotate it?", "thread_id": thread}, headers=headers)
        assert api.status_code == 200 and not target.found_in(haystack(api.text)), groups
