"""The audit view respects its reader: staff see only what their own groups may read (issue 14, item 6).

A tenant-acme reader asks about Acme's dedicated cluster over the real server
(real model, real Chroma index of content/). The generator here is greedy on
purpose: every retrieved chunk's first sentence becomes a claim and is echoed
in its raw output, so restricted words are in every part of the record. A
staff reader outside tenant-acme then opens the answer and searches the list:
no Acme-only sentence, title, slug or code may appear, while the public parts
of the same answer stay visible.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import httpx
import pytest

from answer.contract.draft import parse_draft
from answer.log.sqlite import SQLiteAnswerLog
from answer.pipeline import Answerer
from ingest.documents import PUBLIC
from retrieval.services import open_retriever
from tests.conftest import CONTENT
from tests.fakes import sentences
from web.app import create_app
from web.settings import Settings

from .conftest import serve

pytestmark = pytest.mark.integration

HEADER = "X-Groups"
QUESTION = "What are the maintenance windows and egress IPs of the Acme dedicated cluster?"


class GreedyGenerator:
    """Claims the first sentence of every hit, quoting it; the raw output repeats all of it."""

    name = "greedy"

    def draft(self, question, rset, *, feedback=()):  # noqa: ANN001, ANN201
        claims = [{"quotes": [{"handle": h.handle, "quote": s}], "claim": s}
                  for h in rset.hits for s in sentences(h.chunk.text)[:1]]
        text = json.dumps({"refused": False, "claims": claims})
        return parse_draft(text)


def acme_markers(corpus) -> list[str]:  # noqa: ANN001
    """Every sentence, title, slug and `code` of tenant-acme chunks that no other readable page also says."""
    others = " ".join(c.text for c in corpus.chunks() if "tenant-acme" not in c.access).lower()
    markers = set()
    for chunk in (c for c in corpus.chunks() if "tenant-acme" in c.access):
        markers.update(s for s in sentences(chunk.text) if len(s) > 25 and s.lower() not in others)
        markers.update(re.findall(r"`([^`\n]{4,60})`", chunk.text))
        markers.update({chunk.title, chunk.doc_id, chunk.url.split("#")[0]})
    return sorted(m for m in markers if m.lower() not in others)


@pytest.fixture(scope="module")
def world(corpus, content_index, real_embedder, tmp_path_factory):
    data = tmp_path_factory.mktemp("audit-data")
    settings = Settings(content_dir=CONTENT, data_dir=data, identity_header=HEADER)
    answerer = Answerer(open_retriever(settings, store=content_index, embedder=real_embedder), GreedyGenerator(),
                        audit=SQLiteAnswerLog(Path(data) / "answers.sqlite3"))
    with serve(create_app(settings, answerer=answerer, store=content_index, corpus=corpus)) as url, \
            httpx.Client(base_url=url, timeout=60) as client:
        yield {"client": client, "markers": acme_markers(corpus)}


def plain(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).replace("`", "").split()).lower() + " " + unescape(html).lower()


def test_staff_see_an_acme_answer_only_as_far_as_their_groups_read(world):
    client, markers = world["client"], world["markers"]
    assert len(markers) > 20
    asked = client.post("/api/ask", json={"question": QUESTION}, headers={HEADER: "tenant-acme"}).json()
    answer_id = asked["answer_id"]
    assert any("acme" in c["citations"][0]["chunk_id"] for c in asked["claims"])  # the control: Acme text was used

    assert client.get("/docs/customers/acme-dedicated-cluster", headers={HEADER: "staff"}).status_code == 404
    audit = client.get(f"/answers/{answer_id}", headers={HEADER: "staff"})
    assert audit.status_code == 200
    seen = plain(audit.text.replace(QUESTION, " "))  # the reader's own question is echoed, not leaked
    leaked = [m for m in markers if " ".join(m.replace("`", "").split()).lower() in seen]
    assert leaked == [], f"{len(leaked)} Acme-only strings in the staff audit view: {leaked[:5]}"
    assert "restricted source" in audit.text
    public_claims = [c for c in asked["claims"] if all("acme" not in x["chunk_id"] for x in c["citations"])]
    for claim in public_claims:  # what staff may read is still shown
        assert " ".join(claim["text"].split()).lower() in seen

    for path in ("/answers", "/answers?q=acme", "/answers?q=maintenance"):
        listing = client.get(path, headers={HEADER: "staff"})
        assert listing.status_code == 200 and answer_id not in listing.text


def test_a_reader_in_both_groups_sees_everything(world):
    client = world["client"]
    answer_id = client.post("/api/ask", json={"question": QUESTION}, headers={HEADER: "tenant-acme"}).json()["answer_id"]
    both = {HEADER: "staff,tenant-acme"}
    audit = client.get(f"/answers/{answer_id}", headers=both)
    assert audit.status_code == 200 and "restricted source" not in audit.text and "acme-prod-1" in audit.text
    assert answer_id in client.get("/answers?q=Acme", headers=both).text


def test_staff_answers_and_public_answers_are_listed_and_shown_in_full(world):
    client = world["client"]
    public = client.post("/api/ask", json={"question": "How do I rotate a signing secret?"}).json()["answer_id"]
    audit = client.get(f"/answers/{public}", headers={HEADER: "staff"})
    assert audit.status_code == 200 and "restricted source" not in audit.text
    assert public in client.get("/answers", headers={HEADER: "staff"}).text
    assert PUBLIC  # anonymous answers only retrieve public chunks, which every reader may read


def test_the_question_and_feedback_of_an_answer_staff_may_not_read_in_full_are_withheld(world):
    """/answers and /gaps hid such an answer, but /answers/<id> showed its question and the visitor's reason (N6)."""
    client = world["client"]
    question = "What are the maintenance windows of the Acme dedicated cluster for Project Heron?"
    asked = client.post("/api/ask", json={"question": question}, headers={HEADER: "tenant-acme"}).json()
    reason = "Heron migration runbook says otherwise"
    rated = client.post(f"/api/answers/{asked['answer_id']}/feedback", json={"rating": "down", "reason": reason},
                        headers={HEADER: "tenant-acme"})
    assert rated.status_code == 201
    audit = client.get(f"/answers/{asked['answer_id']}", headers={HEADER: "staff"})
    assert audit.status_code == 200 and "restricted source" in audit.text
    assert "Heron" not in audit.text and "withheld" in audit.text
    both = client.get(f"/answers/{asked['answer_id']}", headers={HEADER: "staff,tenant-acme"})
    assert "Project Heron" in both.text and reason in both.text  # a reader of every source sees it all
