"""A member's ``causantic forget`` beside another member's ``causantic cluster``, two real processes on
one team memory.

A forget deletes its chunks' topic memberships (the foreign key's cascade), then recounts the topics
they were in; a recluster deletes the topics it keeps nothing of (their memberships with them) and
rewrites the rest. The forget took only its chunks' projects' locks, and the recluster locks the
projects of the chunks it clusters: a chunk in no new topic (noise, here the one blog chunk) leaves
its project to the forget. Each then waited for a row the other held: the recluster for the
membership the forget had deleted, the forget for the topic the recluster had deleted. PostgreSQL
found the deadlock and rolled one of them back: "run the command again".

The race is made to happen: a trigger this test adds holds the forget right after its deletion of
memberships (on an advisory lock the test holds) until the recluster, started then, waits for a lock
or ends. Neither process is changed otherwise.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psycopg
import pytest
from postgres_server import backend_settings
from process_support import subprocess_env
from transcript_files import write_session

from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.services import open_services
from causantic.store.records import ChunkScope, VectorRecord

pytestmark = pytest.mark.slow

PAUSE = (7, 4242)  # the advisory lock the trigger waits on (two int4 keys)


@pytest.fixture
def team_config(request: pytest.FixtureRequest) -> Config:
    return backend_settings(request, "postgres")


def _url(config: Config) -> str:
    assert config.storage.postgres_url is not None
    return config.storage.postgres_url.get_secret_value()


def _member(config: Config, name: str, home: Path, *args: str) -> subprocess.Popen[str]:
    env = subprocess_env(
        CAUSANTIC_HOME=str(home / name),
        CAUSANTIC_STORAGE_BACKEND="postgres",
        CAUSANTIC_STORAGE_POSTGRES_URL=_url(config),
        CAUSANTIC_TEAM_USER=name,
        CAUSANTIC_TEAM_SHARE_PROJECTS="all",
    )
    command = [sys.executable, "-m", "causantic", *args]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _waiting(watcher: psycopg.Connection, count: int, *processes: subprocess.Popen[str]) -> None:
    """Until ``count`` backends wait for a lock, or one of ``processes`` has ended."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in processes):
            return
        (waiting,) = watcher.execute("SELECT COUNT(DISTINCT pid) FROM pg_locks WHERE NOT granted").fetchone() or (0,)
        if waiting >= count:
            return
        time.sleep(0.05)
    raise AssertionError("the members never reached the moment of the race")


def test_a_forget_beside_another_members_recluster_neither_fails_nor_leaves_topics_miscounted(
    team_config: Config, tmp_path: Path
) -> None:
    turns = [(f"shop step {n}: the upload retry", f"done step {n}") for n in range(12)]
    shop = write_session(tmp_path, "/work/shop", "00000001-0000-4000-8000-000000000001", turns)
    blog = write_session(tmp_path, "/work/blog", "00000002-0000-4000-8000-000000000002", [("blog post", "written")])
    with open_services(team_config) as alice:
        assert ingest_paths(alice, [shop, blog], embed=False, workers=1).errors == []
        chunks = list(alice.store.chunks_in(ChunkScope()))
        [post] = [c for c in chunks if c.session_id.startswith("00000002")]
        # Two tight groups of shop chunks (the recluster's two topics) and the blog chunk far from both:
        # noise to the recluster, yet in a topic an earlier run made, which the recluster drops.
        rng = np.random.default_rng(7)
        centres = rng.normal(size=(3, alice.vectors.dims))
        shop_chunks = [c for c in chunks if c is not post]
        points = [centres[n % 2] + rng.normal(scale=0.01, size=alice.vectors.dims) for n in range(len(shop_chunks))]
        records = [
            VectorRecord(c.id, c.content_hash, (p / np.linalg.norm(p)).astype("float32"))
            for c, p in zip([*shop_chunks, post], [*points, centres[2]], strict=True)
        ]
        alice.vectors.upsert(records)
        model = alice.vectors.model_id
        alice.store.replace_clusters(model, [(None, "blog posts", records[-1].vector.tobytes(), [(post.id, 0.0)])])

    with psycopg.connect(_url(team_config), autocommit=True) as watcher:
        watcher.execute(
            "CREATE FUNCTION pause_here() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            f" PERFORM pg_advisory_xact_lock_shared({PAUSE[0]}, {PAUSE[1]}); RETURN NULL; END $$"
        )
        watcher.execute(
            "CREATE TRIGGER pause_after_membership_deleted AFTER DELETE ON chunk_clusters"
            " FOR EACH ROW EXECUTE FUNCTION pause_here()"
        )
        watcher.execute("SELECT pg_advisory_lock(%s, %s)", PAUSE)
        forget = _member(team_config, "alice", tmp_path, "forget", "blog", "--yes")
        _waiting(watcher, 1, forget)  # held right after deleting the blog chunk's membership
        cluster = _member(team_config, "bob", tmp_path, "cluster")
        _waiting(watcher, 2, forget, cluster)  # the recluster waits for a lock (or is done)
        watcher.execute("SELECT pg_advisory_unlock(%s, %s)", PAUSE)
        results = [p.communicate(timeout=300) for p in (forget, cluster)]
        watcher.execute("DROP TRIGGER pause_after_membership_deleted ON chunk_clusters")

    failed = [err for p, (_, err) in zip((forget, cluster), results, strict=True) if p.returncode]
    assert failed == []
    assert "1 chunk in 1 session of the whole project 'blog' deleted." in results[0][0]
    with open_services(team_config) as alice:
        topics = {r.id: r for r in alice.store.cluster_rows(model)}
        members = alice.store.cluster_members(model)
        assert len(topics) == 2 and "blog posts" not in {r.label for r in topics.values()}
        assert all(topics[t].size == len(members.get(t, ())) for t in topics)
        assert post.id not in {c.id for c in alice.store.chunks_in(ChunkScope())}
