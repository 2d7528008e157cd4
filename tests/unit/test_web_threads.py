"""Thread ids are signed and checked on every surface; only the browser that started a thread extends it."""

from __future__ import annotations

import multiprocessing
import re
import sqlite3
import stat
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from answer.log.secret_file import FileSecrets
from web.owner import COOKIE
from web.settings import Settings
from web.thread_ids import SECRET_FILE, ThreadIds, ThreadSecretError, thread_secret

from .test_web import GOOD, QUOTE, client, events, thread_of

UNMINTED = ("0123456789abcdef", "aaaaaaaaaaaaaaaa\n", "0" * 40, "../etc", "a" * 16 + " ")


def stranger(app: TestClient) -> TestClient:
    """Another browser on the same server: its own cookie jar, the same groups."""
    return TestClient(app.app)


def questions(page: str) -> list[str]:
    return re.findall(r'<h2 class="question">([^<]+)</h2>', page)


@pytest.mark.parametrize("logged", [True, False], ids=["answer-log", "memory"])
def test_a_follow_up_from_another_browser_forks_and_never_lands_in_the_askers_thread(tmp_path, logged):
    app = client(*[GOOD] * 6, tmp_path=tmp_path if logged else None)
    thread = thread_of(app.post("/ask", data={"question": "refund window?"}).text)
    assert app.cookies.get(COOKIE)  # the chat page's browser now holds its owner token
    other = stranger(app)
    assert questions(other.get(f"/?thread={thread}").text) == ["refund window?"]  # a shared link still shows it
    forked = other.post("/ask", data={"question": "B asks in the same thread?", "thread_id": thread}).text
    assert thread_of(forked) != thread and questions(forked) == ["refund window?", "B asks in the same thread?"]
    api = stranger(app).post("/api/ask", json={"question": "B via the API?", "thread_id": thread}).json()
    assert api["thread_id"] != thread and api["owner_token"]
    widget = events(stranger(app).get("/ask/stream", params={"question": "B from a widget?",
                                                                               "thread": thread}).text)
    assert [n for n, _ in widget][:2] == ["owner", "thread"] and widget[1][1] != thread
    assert questions(app.get(f"/?thread={thread}").text) == ["refund window?"]  # A's reload: none of B's text
    again = app.post("/ask", data={"question": "A follows up?", "thread_id": thread}).text
    assert thread_of(again) == thread and questions(again) == ["refund window?", "A follows up?"]


def test_an_api_client_or_widget_keeps_its_thread_with_the_owner_token_it_was_given(tmp_path):
    app = client(*[GOOD] * 6, tmp_path=tmp_path)
    first = app.post("/api/ask", json={"question": "What is the refund window?"}).json()
    same = app.post("/api/ask", json={"question": "Does it apply to annual plans?", "thread_id": first["thread_id"],
                                      "owner_token": first["owner_token"]}).json()
    assert same["thread_id"] == first["thread_id"] and "owner_token" not in same
    widget = TestClient(app.app)
    opened = events(widget.get("/ask/stream", params={"question": "refund window?", "thread": "new"}).text)
    token, tid = opened[0][1], opened[1][1]
    follow = events(widget.get("/ask/stream", params={"question": "And annual plans?", "thread": tid, "owner": token}).text)
    assert [n for n, _ in follow][0] == "thread" and follow[0][1] == tid  # no new token, the same thread
    assert widget.get("/ask/stream", params={"question": "x?", "thread": tid, "owner": "not-a-token"}).status_code == 400


@pytest.mark.parametrize("value", UNMINTED)
def test_an_id_this_server_did_not_mint_is_a_400_on_every_surface_and_never_a_thread(tmp_path, value):
    app = client(*[GOOD] * 4, tmp_path=tmp_path)
    minted = thread_of(app.post("/ask", data={"question": "refund window?"}).text)
    threads = app.app.state.services.threads
    for sent in (value, minted + "\n", minted[:-1] + ("0" if minted[-1] != "0" else "1")):
        api = app.post("/api/ask", json={"question": "refund window?", "thread_id": sent})
        assert api.status_code == 400 and "not minted by this server" in api.json()["error"], sent
        form = app.post("/ask", data={"question": "refund window?", "thread_id": sent})
        assert form.status_code == 400 and "not minted by this server" in form.text, sent
        shell = app.post("/ask", data={"question": "refund window?", "thread_id": sent}, headers={"HX-Request": "true"})
        assert shell.status_code == 400 and shell.headers["HX-Retarget"] == "#ask-error", sent
        for path in ("/ask/stream?question=refund&thread=", "/?thread=", "/ask/thread?thread="):
            response = app.get(path + quote(sent))
            assert response.status_code == 400 and "not minted by this server" in response.text, (path, sent)
        assert threads.rows(sent) == [], sent
    assert questions(app.get(f"/?thread={minted}").text) == ["refund window?"]


def test_a_thread_from_a_log_without_owners_still_opens_and_every_follow_up_forks_it(tmp_path):
    legacy = "0123456789abcdef"
    with sqlite3.connect(tmp_path / "answers.sqlite3") as db:  # the previous version's turns table, one thread in it
        db.execute("CREATE TABLE turns (thread_id TEXT NOT NULL, position INTEGER NOT NULL, answer_id TEXT NOT NULL,"
                   " asked TEXT NOT NULL, question TEXT NOT NULL, groups TEXT NOT NULL, created REAL NOT NULL,"
                   " PRIMARY KEY (thread_id, position))")
        db.execute("INSERT INTO turns VALUES (?, 1, 'pending', 'refund window?', 'refund window?', 'public', 0)", (legacy,))
    app = client(*[GOOD] * 3, tmp_path=tmp_path)
    answer_id = app.post("/api/ask", json={"question": "refund window?"}).json()["answer_id"]
    with sqlite3.connect(tmp_path / "answers.sqlite3") as db:
        db.execute("UPDATE turns SET answer_id = ? WHERE thread_id = ?", (answer_id, legacy))
    page = app.get(f"/?thread={legacy}").text
    assert questions(page) == ["refund window?"] and f"<blockquote>{QUOTE}</blockquote>" in page
    followed = app.post("/ask", data={"question": "And annual plans?", "thread_id": legacy}).text
    assert thread_of(followed) != legacy and questions(followed) == ["refund window?", "And annual plans?"]
    assert [t.asked for t in app.app.state.services.threads.rows(legacy)] == ["refund window?"]
    assert app.get("/?thread=fedcba9876543210").status_code == 400  # legacy-shaped, but no such thread was ever made


def _secret_of(folder: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from pathlib import Path

    from answer.log.secret_file import FileSecrets

    out.put(thread_secret("", FileSecrets(Path(folder))))


def test_workers_starting_at_once_share_one_secret_file_that_only_its_owner_may_read(tmp_path):
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    workers = [context.Process(target=_secret_of, args=(str(tmp_path / "data"), out)) for _ in range(4)]
    for worker in workers:
        worker.start()
    secrets = {out.get(timeout=60) for _ in workers}
    for worker in workers:
        worker.join(timeout=60)
    path = tmp_path / "data" / SECRET_FILE
    assert secrets == {path.read_text().strip().encode()} and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == [SECRET_FILE]  # nothing left aside


def test_replicas_with_the_same_thread_secret_accept_each_others_ids_and_a_different_one_refuses_them(tmp_path):
    shared = "s" * 40
    one = client(GOOD, tmp_path=tmp_path / "one", thread_secret=shared)
    thread = thread_of(one.post("/ask", data={"question": "refund window?"}).text)
    assert ThreadIds(shared.encode()).signed(thread) and not (tmp_path / "one" / SECRET_FILE).exists()
    assert client(tmp_path=tmp_path / "two", thread_secret=shared).get(f"/?thread={thread}").status_code == 200
    assert client(tmp_path=tmp_path / "three", thread_secret="t" * 40).get(f"/?thread={thread}").status_code == 400
    with pytest.raises(ValueError, match="THREAD_SECRET must be at least 32 characters"):
        Settings.from_env({"THREAD_SECRET": "short"}, dotenv=False)


def test_a_thread_secret_file_too_short_to_sign_with_is_an_error_naming_the_fix(tmp_path):
    (tmp_path / SECRET_FILE).write_text("abc\n")
    with pytest.raises(ThreadSecretError, match="delete it .* or set THREAD_SECRET"):
        thread_secret("", FileSecrets(tmp_path))
