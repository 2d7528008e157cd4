"""Follow-ups offered after an answer: headings that are questions the docs answer, each checked by a search."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from answer.pipeline import Answerer
from answer.suggest import question_of, suggest
from retrieval.search import DenseRetriever, renumber
from retrieval.viewer import Viewer
from tests.fakes import HashEmbedder, ScriptedGenerator, make_chunk
from tests.memory_index import MemoryIndex
from web.app import create_app
from web.settings import Settings

RETRIES = make_chunk("guides/retries", "schedule", "Failed deliveries are retried up to 8 times over 24 hours.",
                     title="Retries", heading="Retry schedule")
PAUSE = make_chunk("guides/endpoints", "can-i-pause-deliveries", "Pause an endpoint from its settings page; events "
                   "queue for up to 3 days.", title="Endpoints", heading="Can I pause deliveries to an endpoint?")
ROTATE = make_chunk("guides/secrets", "how-to-rotate-a-signing-secret", "Rotate the signing secret from the "
                    "endpoint page; the old one stays valid for 24 hours.", title="Secrets",
                    heading="How to rotate a signing secret")
STAFF = make_chunk("internal/ops", "how-do-we-replay-a-dead-letter-queue", "Run the replay job from the console.",
                   title="Ops", heading="How do we replay a dead-letter queue?", access=("staff",))
ANON = Viewer.anonymous()


@pytest.mark.parametrize(("heading", "question"), [
    ("Can I pause deliveries to an endpoint?", "Can I pause deliveries to an endpoint?"),
    ("How to rotate a signing secret", "How do I rotate a signing secret?"),
    ("How To Configure Webhooks.", "How do I configure Webhooks?"),
    ("Retry schedule", None),  # a noun phrase says too little to be offered as a question
    ("Why?", None),
])
def test_a_heading_is_offered_only_when_it_reads_as_a_question(heading: str, question: str | None):
    assert question_of(heading) == question


class Finds:
    """A search that finds the given chunks, in order, whatever is asked."""

    def __init__(self, *chunks) -> None:  # noqa: ANN002
        self.chunks = chunks

    def search(self, question: str, viewer: Viewer):  # noqa: ANN201
        return renumber(question, viewer, [(c, 1.0) for c in self.chunks])


def _answer(*hits):  # noqa: ANN002, ANN202
    from answer.contract.result import Answer
    from answer.contract.verify import Citation, Claim

    rset = renumber("How many times is a delivery retried?", ANON, [(h, 1.0) for h in hits])
    cite = Citation("c1", RETRIES.id, RETRIES.text, 0, len(RETRIES.text), RETRIES.url, RETRIES.url, "Retries",
                    RETRIES.heading_path, RETRIES.doc_version, RETRIES.hash)
    return Answer("a1", rset.question, "answered", (Claim(RETRIES.text, "supported", (cite,)),), rset)


def test_a_follow_up_is_offered_only_when_searching_for_it_finds_its_own_section_first():
    answer = _answer(RETRIES, PAUSE, ROTATE)
    assert suggest(answer, Finds(PAUSE), ANON) == ("Can I pause deliveries to an endpoint?",)  # rotate: not found
    assert suggest(answer, Finds(RETRIES), ANON) == ()  # the cited section is never offered again


def test_nothing_the_reader_may_not_read_is_offered():
    answer = _answer(RETRIES, STAFF)  # the reader's own hits: a staff section is not among an anonymous reader's
    assert "dead-letter" not in " ".join(suggest(answer, Finds(STAFF), ANON))


def test_the_streamed_turn_offers_the_follow_ups_as_questions_to_ask_in_the_thread():
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [RETRIES, PAUSE, ROTATE])
    reply = ('{"refused": false, "claims": [{"quotes": [{"handle": "c1", "quote": "Failed deliveries are retried '
             'up to 8 times over 24 hours."}], "claim": "Failed deliveries are retried up to 8 times."}]}')
    answerer = Answerer(DenseRetriever(store, embedder, floor=-1.0), ScriptedGenerator(reply, reply))
    with TestClient(create_app(Settings(), answerer=answerer, store=store)) as client:
        body = client.get("/ask/stream", params={"question": "How many times is a failed delivery retried?",
                                                 "turn": "t1"}).text
    done = body[body.index("event: done"):]
    assert "The docs also answer" in done
    offered = [q for q in ("Can I pause deliveries to an endpoint?", "How do I rotate a signing secret?") if q in done]
    assert offered and 'hx-include="#thread-id"' in done  # asked as a follow-up in the same thread
    assert "Retry schedule" not in done.split("The docs also answer", 1)[1].split("</ul>", 1)[0]
