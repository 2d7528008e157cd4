"""The in-memory store filters like Chroma: on the encoded access keys, not on the chunk's access list alone."""

from __future__ import annotations

import retrieval.records as records
from tests.fakes import HashEmbedder, make_chunk
from tests.memory_index import MemoryIndex

DASH = make_chunk("teams/dash", "rota", "The dash team rotates the pager weekly.", access=("team-a",))


def test_a_colliding_key_encoding_would_show_in_the_fakes(monkeypatch):
    embedder = HashEmbedder()
    probe = embedder.embed(["pager rota"])[0]
    assert MemoryIndex(embedder, [DASH]).nearest(probe, 5, ["team_a"]) == []
    assert MemoryIndex(embedder, [DASH]).count(["team_a"]) == MemoryIndex(embedder, [DASH]).count(["team_a"]) == 0
    # The escaping that once let `team_a` read `team.a`: both fakes must see the collision, as Chroma would.
    monkeypatch.setattr(records, "acl_key", lambda group: "acl_" + group.replace("-", "_"))
    aliased = MemoryIndex(embedder, [DASH])
    assert [i for i, _ in aliased.nearest(probe, 5, ["team_a"])] == [DASH.id]
    assert aliased.count(["team_a"]) == MemoryIndex(embedder, [DASH]).count(["team_a"]) == 1
    # ... while the stored access list, checked after the key, still keeps the chunk from the wrong group.
    assert aliased.chunks(groups=["team_a"]) == [] and aliased.query(probe, 5, ["team_a"]) == []
    assert MemoryIndex(embedder, [DASH]).query(probe, 5, ["team_a"]) == []


def test_a_fresh_build_serves_only_once_committed_and_drops_the_old_one():
    embedder = HashEmbedder()
    store = MemoryIndex(embedder, [DASH])
    before = store.generation()
    writer = store.open_for_write(store.manifest(), fresh=True)
    writer.upsert([], [])
    assert [c.id for c in store.chunks()] == [DASH.id]  # the live index serves until the commit
    writer.commit()
    assert store.chunks() == [] and store.generation() != before
    assert len([name for name in store.collections() if not name.endswith("-active")]) == 1
