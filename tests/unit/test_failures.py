"""One wording per failure, whichever way the question came: page, stream or API (and the health check)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from answer.pipeline import Answerer
from retrieval.errors import StoreUnavailableError
from tests.fakes import HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.failures import INTERNAL, UNAVAILABLE
from web.render import sentence
from web.settings import Settings

REFUNDS = make_chunk("billing/refunds", "refund-windows", "Refunds are available within 14 days of the charge.",
                     title="Refunds", heading="Refund windows")


class Broken(MemoryIndex):
    """An index that fails the way a real one does: every read raises `failure`."""

    def __init__(self, failure: Exception) -> None:
        super().__init__(HashEmbedder(), [REFUNDS])
        self.failure = failure

    def count(self, groups=None):  # noqa: ANN001, ANN201
        raise self.failure


class BrokenRetriever:
    def __init__(self, failure: Exception) -> None:
        self.failure = failure

    def search(self, question, viewer, *, k=None, version=None):  # noqa: ANN001, ANN201
        raise self.failure


def client(failure: Exception) -> TestClient:
    answerer = Answerer(BrokenRetriever(failure), ScriptedGenerator())
    return TestClient(create_app(Settings(), answerer=answerer, store=Broken(failure)), raise_server_exceptions=False)


@pytest.mark.parametrize("failure, status, message", [
    (StoreUnavailableError("chroma at http://127.0.0.1:1 refused the connection"), 503, UNAVAILABLE),
    (RuntimeError("a bug with a secret path /srv/app/keys"), 500, INTERNAL),
])
def test_every_surface_says_the_same_thing_about_the_same_failure(failure, status, message):
    app = client(failure)
    api = app.post("/api/ask", json={"question": "How long is the refund window?"})
    assert (api.status_code, api.json()) == (status, {"error": message})
    health = app.get("/readyz")  # not ok (a 503, whatever the failure) and worded the same, naming the dependency
    assert health.status_code == 503 and health.json()["error"] == message
    assert health.json()["checks"]["index"]["status"] == "failing" and health.json()["chunks"] is None
    page = app.post("/ask", data={"question": "How long is the refund window?"})
    assert page.status_code == status and message in page.text and "<html" in page.text
    fragment = app.post("/ask", data={"question": "How long is the refund window?"}, headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and "/ask/stream?" in fragment.text  # htmx asks again over the stream
    streamed = app.get("/ask/stream", params={"question": "How long is the refund window?"})
    done = streamed.text.rsplit("event: done", 1)[1]
    assert streamed.status_code == 200 and message in done and 'class="retry"' in done  # worth asking again
    for response in (api, health, page, streamed):
        assert str(failure) not in response.text  # what went wrong inside is for the log, never the visitor


def test_a_bad_question_is_a_400_everywhere_and_the_stream_offers_no_retry():
    app = client(RuntimeError("never reached"))
    api = app.post("/api/ask", json={"question": "   "})
    assert api.status_code == 400 and "question" in api.json()["error"]
    said = sentence(api.json()["error"])  # on a page the same words start with a capital
    page = app.post("/ask", data={"question": "   "})
    assert page.status_code == 400 and f'role="alert">{said}<' in page.text
    streamed = app.get("/ask/stream", params={"question": "   "})
    done = streamed.text.rsplit("event: done", 1)[1]
    assert f'role="alert">{said}<' in done and 'class="retry"' not in done


def test_a_server_pointed_at_another_site_s_index_is_told_to_use_its_own_data_dir():
    from retrieval.errors import SiteMismatchError
    from web.failures import fix_for

    fix = fix_for(SiteMismatchError("this index holds the site 'A', not 'B'"))
    assert "DATA_DIR" in fix and "FULL=1" in fix and "embedding model" not in fix
