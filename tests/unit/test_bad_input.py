"""Bad input gets a clear 4xx with a message, never a stack trace or a 500; bad content files cost only themselves.

Questions arrive three ways (form post, JSON API, the stream's query string)
and each is fed what a broken client or an attacker would send. Real text in
any script — right-to-left, zero-width joiners inside words, emoji — is a
question like any other and is answered; only input with no text in it is
refused.
"""

from __future__ import annotations

import json
import re

import pytest
from starlette.testclient import TestClient

from answer.pipeline import Answerer
from ingest.corpus import load_corpus
from retrieval.search import DenseRetriever
from tests.fakes import HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.settings import Settings

REFUNDS = make_chunk("billing/refunds", "refund-windows", "Refunds are available within 14 days of the charge.",
                     title="Refunds", heading="Refund windows")
REFUSAL = json.dumps({"refused": True, "claims": []})
NO_TEXT = ["", "   \t\n  ", "\u200b\u200d\u2060\ufeff", "\u202e\u202d\u2066", "\x01\x02\x7f"]
TOO_LONG = ["x" * 5_000, "refund? " * 2_000]  # over the 1,000-character limit, under the 64 KiB body cap
NOT_TEXT = ["bad\x00byte", "\x00" * 64]
REAL_TEXT = ["كيف أسترد المبلغ خلال 14 يومًا؟", "ref\u200dund window?", "🔥" * 300 + " refund?", "Ｒｅｆｕｎｄ ｗｉｎｄｏｗ？",
             "e\u0301\u0301\u0301 combining marks refund?", "\U0001F468\u200d\U0001F469\u200d\U0001F467 refunds for families?"]


@pytest.fixture
def app() -> TestClient:
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [REFUNDS])
    generator = ScriptedGenerator(*[REFUSAL] * 200)
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0, k=2), generator)
    return TestClient(create_app(Settings(), answerer=answerer, store=store), raise_server_exceptions=False)


def clear_error(response, *, status: int = 400) -> str:  # noqa: ANN001
    """The message of a clear client error: the right status, a human sentence, no trace of the server's insides."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert "Traceback" not in response.text and "File \"" not in response.text
    if response.headers["content-type"].startswith("application/json"):
        message = response.json()["error"]
    else:
        message = re.search(r'role="alert">(.*?)</div>', response.text, re.DOTALL).group(1)
    assert len(message.split()) >= 3, message
    return message


def stream_done(client: TestClient, **params: str) -> str:
    """The final fragment of a streamed answer (the stream itself is always 200; errors arrive in-band)."""
    response = client.get("/ask/stream", params=params)
    assert response.status_code == 200 and "Traceback" not in response.text
    return response.text.rsplit("event: done", 1)[1]


@pytest.mark.parametrize("question", NO_TEXT + TOO_LONG + NOT_TEXT)
def test_a_question_without_usable_text_is_a_clear_400_on_every_route(app, question):
    form = clear_error(app.post("/ask", data={"question": question}))
    fragment = clear_error(app.post("/ask", data={"question": question}, headers={"HX-Request": "true"}))
    api = clear_error(app.post("/api/ask", json={"question": question}))
    assert form == fragment == api[:1].upper() + api[1:]  # the page's sentence starts with a capital, the API's not
    assert 'role="alert"' in stream_done(app, question=question[:4_000])  # longer URLs meet the 16 KiB header cap


def test_the_message_says_what_is_wrong(app):
    assert "please type a question" in clear_error(app.post("/api/ask", json={"question": " \u200b "}))
    assert "5,000 characters" in clear_error(app.post("/api/ask", json={"question": "x" * 5_000}))
    assert "not text" in clear_error(app.post("/api/ask", json={"question": "a\x00b"}))


@pytest.mark.parametrize("question", REAL_TEXT)
def test_real_text_in_any_script_is_answered_not_rejected(app, question):
    response = app.post("/api/ask", json={"question": question})
    assert response.status_code == 200, response.text[:300]
    assert response.json()["state"] in ("answered", "refused", "unverified")
    assert app.post("/ask", data={"question": question}).status_code == 200


@pytest.mark.parametrize("body, content_type", [
    (b'{"question": "\\ud800 lone surrogate"}', "application/json"),
    (b'{"question": "\\udfff\\ud800"}', "application/json"),
    (b'{"question": "caf\xe9 refunds?"}', "application/json"),  # invalid UTF-8 inside JSON
    (b"\xff\xfe\x00\x00garbage", "application/json"),
    (b"question=refunds", "application/json"),  # a form body sent as JSON
    (b"not json at all", "application/json"),
    (b'["question", "refunds?"]', "application/json"),
    (b'"refunds?"', "application/json"),
    (b"null", "application/json"),
    (b'{"question": 42}', "application/json"),
    (b'{"question": ["refunds?"]}', "application/json"),
    (b'{"question": {"text": "refunds?"}}', "application/json"),
    (b"[" * 60_000, "application/json"),  # nested past the parser's recursion limit, under the body cap
    (b"", "application/json"),
])
def test_the_json_api_refuses_malformed_bodies_with_a_clear_400(app, body, content_type):
    clear_error(app.post("/api/ask", content=body, headers={"content-type": content_type}))


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "", "application/octet-stream"])
def test_the_json_api_wants_a_json_content_type(app, content_type):
    message = clear_error(app.post("/api/ask", content=b'{"question": "refunds?"}', headers={"content-type": content_type}), status=415)
    assert "application/json" in message
    assert app.post("/api/ask", content=b'{"question": "refunds?"}',
                    headers={"content-type": "application/json; charset=utf-8"}).status_code == 200


@pytest.mark.parametrize("body, content_type", [
    (b"question=caf%E9+refunds%FF%FE", "application/x-www-form-urlencoded"),  # invalid UTF-8, percent-encoded
    (b"question=caf\xe9\xff refunds", "application/x-www-form-urlencoded"),  # invalid UTF-8, raw
    (b"question=%00%00", "application/x-www-form-urlencoded"),
    (b'{"question": "refunds?"}', "application/json"),  # JSON posted to the form route
    (b"\xff\xfe\xfd", "text/plain"),
    (bytes(range(256)) * 16, "application/octet-stream"),
    (b"--x\r\nContent-Disposition: form-data; name=\"question\"\r\n\r\n\x00\r\n--x--\r\n", "multipart/form-data; boundary=x"),
    (b"--x\r\nbroken multipart", "multipart/form-data; boundary=x"),
])
def test_the_form_route_never_fails_on_malformed_bodies(app, body, content_type):
    response = app.post("/ask", content=body, headers={"content-type": content_type})
    assert response.status_code in (200, 400), (response.status_code, response.text[:300])
    assert "Traceback" not in response.text
    if response.status_code == 400:
        clear_error(response)


@pytest.mark.parametrize("path", [
    "/ask/stream?question=%FF%FE%00", "/ask/stream?question=refunds&turn=%3Cscript%3E", "/ask/stream",
    "/docs/search?q=%00%FF%FE", "/docs/search?q=" + "x" * 10_000, "/docs/%FF%FE", "/docs/..%2F..%2Fetc%2Fpasswd",
    "/docs/%00", "/answers/%00", "/answers?q=%FF&state=%00",
])
def test_odd_urls_get_a_page_or_a_clear_4xx_never_a_500(app, path):
    response = app.get(path)
    assert response.status_code in (200, 403, 404), (path, response.status_code, response.text[:300])
    assert "Traceback" not in response.text and "internal error" not in response.text


def test_wrong_methods_are_4xx(app):
    assert app.get("/api/ask").status_code == 405
    assert app.put("/ask", data={"question": "refunds?"}).status_code == 405


# -- content: every kind of broken file is reported with file:line and a reason ----------------------------

FRONT_MATTER = {
    "bad-yaml.mdx": ("---\ntitle: [unclosed\naccess: staff\n---\n\n# A\n\ntext\n", "bad-yaml.mdx:2: invalid YAML front matter"),
    "never-closed.mdx": ("---\ntitle: Z\n\n# E\n", "never-closed.mdx:1: front matter opened with '---' but never closed"),
    "a-list.mdx": ("---\n- access: [staff]\n- title: Secret\n---\n\n# Secret\n\ntext\n",
                   "a-list.mdx:2: front matter must be a YAML mapping, got list"),
    "a-string.mdx": ("---\naccess staff\n---\n\n# S\n\ntext\n", "a-string.mdx:2: front matter must be a YAML mapping, got str"),
    "access-number.mdx": ("---\naccess: 42\n---\n\n# N\n", "access-number.mdx:2: front matter 'access' must be"),
    "access-empty.mdx": ("---\naccess: []\n---\n\n# N\n", "access-empty.mdx:2: front matter 'access' must be"),
    "python-tag.mdx": ('---\ntitle: !!python/object/apply:os.system ["echo pwned"]\n---\n\n# P\n',
                       "python-tag.mdx:2: invalid YAML front matter"),
}


def test_invalid_front_matter_is_reported_and_never_makes_a_page_public(tmp_path):
    (tmp_path / "good.mdx").write_text("# Good\n\nThis page is fine.\n")
    for name, (text, _) in FRONT_MATTER.items():
        (tmp_path / name).write_text(text)
    corpus = load_corpus(tmp_path)
    assert [p.source for p in corpus.pages] == ["good.mdx"]
    found = {f.source: str(f) for f in corpus.failures}
    for name, (_, reason) in FRONT_MATTER.items():
        assert found[name].startswith(reason), found[name]
