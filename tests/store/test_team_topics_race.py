"""Two members writing the topics of team memory at once: one's ingest joins its new chunks to the
topics while the other's ``causantic cluster`` replaces them.

SQLite's writer holds the whole database, so reading the topics in the transaction that writes the
memberships was enough there (tests/cluster/test_topics_two_processes.py). On PostgreSQL a read waits
for no writer: the ingest read a topic, the other member's run deleted it and committed, and the
ingest's memberships then failed on the foreign key, a ``StoreError`` after its chunks were stored.
Here each race is made to happen: one side's transaction is held open at the moment that matters while
the other works on its own connection, until the other waits for a lock (``pg_locks``) or is done.
The ingest's new chunk is in another project than the clustered ones, so their projects' locks alone
kept nothing apart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from postgres_server import backend_settings
from transcript_files import write_session

from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.ingest.topics import assign_new_chunks, recluster
from causantic.services import Services, open_services
from causantic.store.records import ChunkScope, ClusterRecord, VectorRecord

pytestmark = pytest.mark.slow

SHOP = "/work/shop"  # its chunks form the topics
BLOG = "/work/blog"  # its one new chunk joins them


@pytest.fixture
def team_config(request: pytest.FixtureRequest) -> Config:
    return backend_settings(request, "postgres")


class _Unseen:
    """The vector index as the other member's run read it: before this ingest embedded its chunk."""

    def __init__(self, index: Any, unseen: str) -> None:
        self._index, self._unseen = index, unseen

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def all_vectors(self) -> tuple[list[str], Any]:
        ids, matrix = self._index.all_vectors()
        keep = [n for n, i in enumerate(ids) if i != self._unseen]
        return [ids[n] for n in keep], matrix[keep]


class _OtherStepAfterReading:
    """The ingest's store; right after it reads the topics, ``other`` runs until it waits or ends."""

    def __init__(self, store: Any, other: Callable[[], None]) -> None:
        self._store, self._other = store, other

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def cluster_rows(self, model: str) -> list[ClusterRecord]:
        rows: list[ClusterRecord] = self._store.cluster_rows(model)
        self._other()
        return rows


@contextmanager
def _beside(other: Services, step: Callable[[], object], failures: list[BaseException]) -> Iterator[Callable[[], None]]:
    """A starter of ``step`` on ``other``'s connection that returns once ``step`` waits for a lock or
    has finished; on leaving, ``step`` is let finish. What it raised goes to ``failures``."""
    pid = other.store.conn.info.backend_pid  # type: ignore[attr-defined]

    def run() -> None:
        try:
            step()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    thread = threading.Thread(target=run)
    with psycopg.connect(other.store.url, autocommit=True) as watcher:  # type: ignore[attr-defined]

        def start() -> None:
            thread.start()
            while thread.is_alive():
                locks = watcher.execute("SELECT granted FROM pg_locks WHERE pid = %s", (pid,)).fetchall()
                if not all(granted for (granted,) in locks):
                    return
                time.sleep(0.02)

        try:
            yield start
        finally:
            if thread.ident is not None:
                thread.join(60)
    assert not thread.is_alive(), "the other member is stuck"


@contextmanager
def _two_members(team_config: Config, tmp_path: Path) -> Iterator[tuple[Services, Services, str, int, np.ndarray]]:
    """Alice (ingesting) and Bob (clustering) on one team memory: two topics' worth of shop chunks,
    an old topic around the first that the next full run keeps nothing of, and Alice's new blog chunk
    beside that topic. Yields both, the blog chunk's id, the old topic's id and the first centre."""
    turns = [(f"shop step {n}: the upload retry", f"done step {n}") for n in range(12)]
    shop = write_session(tmp_path, SHOP, "00000001-0000-4000-8000-000000000001", turns)
    blog = write_session(tmp_path, BLOG, "00000002-0000-4000-8000-000000000002", [("blog post", "written")])
    with open_services(team_config) as alice, open_services(team_config.with_overrides({"team.user": "bob"})) as bob:
        yield alice, bob, *_fill(alice, shop, blog)


def _fill(alice: Services, shop: Path, blog: Path) -> tuple[str, int, np.ndarray]:
    report = ingest_paths(alice, [shop, blog], embed=False, workers=1)
    assert report.errors == [], report.errors
    chunks = sorted(alice.store.chunks_in(ChunkScope()), key=lambda c: (c.session_id, c.id))
    [new] = [c for c in chunks if c.project_id != chunks[0].project_id]
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(2, alice.vectors.dims))
    records = []
    for n, chunk in enumerate(c for c in chunks if c is not new):
        vector = centres[n % 2] + rng.normal(scale=0.01, size=alice.vectors.dims)
        records.append(VectorRecord(chunk.id, chunk.content_hash, (vector / np.linalg.norm(vector)).astype("float32")))
    first = (centres[0] / np.linalg.norm(centres[0])).astype(np.float32)
    records.append(VectorRecord(new.id, new.content_hash, first))
    alice.vectors.upsert(records)
    [old] = alice.store.replace_clusters(alice.vectors.model_id, [(None, "old topic", first.tobytes(), [])])
    return new.id, old, first


def _assert_consistent(services: Services) -> dict[int, set[str]]:
    """Every topic's size is its count of members, and every membership is in a stored topic."""
    model = services.vectors.model_id
    topics = {r.id: r.size for r in services.store.cluster_rows(model)}
    members: dict[int, set[str]] = services.store.cluster_members(model)
    assert set(members) <= set(topics)
    assert all(len(members.get(t, ())) == size for t, size in topics.items())
    return members


def test_another_members_recluster_committing_between_an_ingests_read_and_write_of_the_topics(
    team_config: Config, tmp_path: Path
) -> None:
    """Alice's ingest has read the topics; Bob's run replaces them before she writes. It used to
    commit at once, deleting the old topic, and her ingest failed on the foreign key."""
    failures: list[BaseException] = []
    with _two_members(team_config, tmp_path) as (alice, bob, new, old, _):
        other = _Unseen(bob.vectors, new)
        with _beside(bob, lambda: recluster(bob.store, other, bob.config.clustering), failures) as start:
            racing = _OtherStepAfterReading(alice.store, start)
            try:
                joined = assign_new_chunks(racing, alice.vectors, [new], alice.config.clustering)
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)
        assert failures == [], [f"{type(e).__name__}: {e}" for e in failures]
        assert joined == 1
        topics = {r.id for r in alice.store.cluster_rows(alice.vectors.model_id)}
        assert old not in topics and len(topics) == 2  # Bob's run, after Alice's ingest, dropped the old topic
        _assert_consistent(alice)


def test_an_ingest_beside_another_members_uncommitted_recluster_joins_the_topics_it_leaves(
    team_config: Config, tmp_path: Path
) -> None:
    """Bob's run has replaced the topics, not committed yet, when Alice's ingest reads them: she read
    the old topic, then her membership in it waited for his commit and failed on the foreign key."""
    failures: list[BaseException] = []
    joined: list[int] = []
    with _two_members(team_config, tmp_path) as (alice, bob, new, old, first):

        def ingest() -> None:
            joined.append(assign_new_chunks(alice.store, alice.vectors, [new], alice.config.clustering))

        with _beside(alice, ingest, failures) as start:
            with bob.store.atomic():
                recluster(bob.store, _Unseen(bob.vectors, new), bob.config.clustering)
                start()
        assert failures == [], [f"{type(e).__name__}: {e}" for e in failures]
        assert joined == [1]
        rows = alice.store.cluster_rows(alice.vectors.model_id)
        assert old not in {r.id for r in rows} and len(rows) == 2
        members = _assert_consistent(alice)
        # Her chunk is in the topic of its own kind: the one whose centre it lies on.
        [topic] = [t for t, ids in members.items() if new in ids]
        centre = next(np.frombuffer(r.centroid, dtype=np.float32) for r in rows if r.id == topic)
        assert float(centre @ first) / float(np.linalg.norm(centre)) > 0.99
