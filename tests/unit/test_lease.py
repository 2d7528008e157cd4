"""The writer lease of a Chroma server's index: one holder at a time, a dead holder taken over, a clean release.

The client here keeps collections in a dict and answers as Chroma does (a
second create of a name is "already exists", a missing one "does not exist");
the real server is exercised by tests/integration/test_replicas.py, where three
replicas race for an empty index.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from retrieval.errors import IndexBusyError, StoreUnavailableError
from retrieval.lease import Lease


class Collection:
    def __init__(self, metadata: dict[str, Any]) -> None:
        self.metadata = metadata

    def modify(self, metadata: dict[str, Any]) -> None:
        self.metadata = metadata


class Client:
    """Chroma's collection calls, atomic like the server's (one lock around each)."""

    def __init__(self) -> None:
        self.collections: dict[str, Collection] = {}
        self.lock = threading.Lock()

    def create_collection(self, name: str, metadata: dict[str, Any], embedding_function: Any = None) -> Collection:
        with self.lock:
            if name in self.collections:
                raise ValueError(f"Collection [{name}] already exists")
            self.collections[name] = Collection(dict(metadata))
            return self.collections[name]

    def get_collection(self, name: str, embedding_function: Any = None) -> Collection:
        with self.lock:
            if name not in self.collections:
                raise ValueError(f"Collection [{name}] does not exist")
            return self.collections[name]

    def delete_collection(self, name: str) -> None:
        with self.lock:
            if self.collections.pop(name, None) is None:
                raise ValueError(f"Collection [{name}] does not exist")


def test_one_holder_at_a_time_the_others_wait_and_are_told_who_holds_it():
    client = Client()
    order: list[str] = []
    told: list[str] = []
    first_in = threading.Event()
    release = threading.Event()

    def first() -> None:
        with Lease(client, "docs").held(wait=True):
            order.append("first in")
            first_in.set()
            release.wait(5)
            order.append("first out")

    def second() -> None:
        first_in.wait(5)
        with Lease(client, "docs").held(wait=True, on_wait=told.append):
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # the second is polling for the lease meanwhile
    assert order == ["first in"]
    release.set()
    for thread in threads:
        thread.join(10)
    assert order == ["first in", "first out", "second in"]
    assert len(told) == 1 and "pid" in told[0]  # told once, with the holder's host and pid
    assert "docs-writer" not in client.collections  # released


def test_without_waiting_a_held_lease_is_an_error_naming_the_holder():
    client = Client()
    with Lease(client, "docs").held(wait=False), pytest.raises(IndexBusyError, match="another ingest is writing"), \
            Lease(client, "docs").held(wait=False):
        pass


def test_a_dead_holders_lease_is_taken_over_once_expired_and_never_deleted_by_it_later():
    client = Client()
    clock = [1000.0]
    dead = Lease(client, "docs", ttl=30, clock=lambda: clock[0])
    dead._take("dead-token")  # a holder killed while it wrote: nobody renews or releases
    clock[0] += 31
    with Lease(client, "docs", ttl=30, clock=lambda: clock[0]).held(wait=True):
        assert client.collections["docs-writer"].metadata["token"] != "dead-token"
        dead._drop("dead-token")  # the old holder coming back does not delete the new holder's lease
        assert "docs-writer" in client.collections


def test_an_unreachable_server_is_reported_through_the_index_call_wrapper():
    class Down(Client):
        def create_collection(self, name: str, metadata: dict[str, Any], embedding_function: Any = None) -> Collection:
            raise ConnectionError("could not connect to 127.0.0.1:8001")

    def call(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ConnectionError as exc:
            raise StoreUnavailableError(f"Chroma is unavailable ({what}): {exc}") from exc

    with pytest.raises(StoreUnavailableError, match="take the writer lease"), Lease(Down(), "docs", call=call).held(wait=True):
        pass
