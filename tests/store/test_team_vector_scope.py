"""Team memory's vector search within a project (PostgreSQL + pgvector, the ``postgres_server`` fixture).

Vectors carry their chunk's project (migration m004) so a project-filtered search reads that
project's vectors alone. What a user would notice: a search within a project returns exactly the
project's nearest chunks, as many as asked, the same as searching everything and keeping the
project's hits; a database made by an older release gets the column filled on upgrade; a chunk that
moves to another project is found there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pytest
from chunk_records import chunk_record
from postgres_server import drop_ann_indexes, new_database

from causantic.store.postgres.store import PostgresStore
from causantic.store.postgres.vectors import PgVectorIndex
from causantic.store.vectors import VectorRecord

DIMS = 32  # small vectors: the index builds in a moment; the search code is the same at any size
MODEL = "all-minilm-l6-v2"
# Project shares of 4,000 chunks: one large (the HNSW walk's case), middling ones and a small one
# (scanned exactly: too few of its rows among the whole store's nearest 1,000).
SHARES = {"big": 2400, "mid": 800, "other": 790, "small": 10}


def _filled(url: str) -> tuple[PostgresStore, PgVectorIndex, np.ndarray, dict[str, list[int]]]:
    """4,000 vectors in four projects of different sizes (every third chunk of a project by a
    sub-agent) in the team database at ``url``, with its HNSW index."""
    rng = np.random.default_rng(11)
    total = sum(SHARES.values())
    matrix = rng.normal(size=(total, DIMS)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    store = PostgresStore(url, member="alice")
    index = PgVectorIndex(url, MODEL, DIMS)
    members: dict[str, list[int]] = {}
    order = rng.permutation(total)  # projects' chunks interleaved in the table, as real ingests leave them
    start = 0
    for name, size in SHARES.items():
        members[name] = sorted(int(i) for i in order[start : start + size])
        start += size
        project = store.resolve_project(f"/work/{name}", f"/work/{name}")
        chunks = [
            chunk_record(i, session_id=f"s-{name}", agent="helper" if n % 3 == 0 else "main")
            for n, i in enumerate(members[name])
        ]
        with store.atomic():
            store.save_session(project, f"s-{name}", chunks)
    drop_ann_indexes(index.conn)  # built again over all 4,000 below, in one pass
    index.upsert([VectorRecord(f"c{i}", f"h{i}", matrix[i]) for i in range(total)])
    assert index.ensure_ann_index()
    store.conn.execute("ANALYZE")
    return store, index, matrix, members


Filled = tuple[str, PostgresStore, PgVectorIndex, np.ndarray, dict[str, list[int]]]


@pytest.fixture(scope="module")
def filled(postgres_server: Any) -> tuple[str, np.ndarray, dict[str, list[int]]]:
    """The filled database, made once per module and closed: each test gets a copy (``new_database``)."""
    url = new_database(postgres_server)
    store, index, matrix, members = _filled(url)
    index.close()
    store.close()
    return url, matrix, members


def _copy_of(postgres_server: Any, filled: tuple[str, np.ndarray, dict[str, list[int]]]) -> Iterator[Filled]:
    template, matrix, members = filled
    url = new_database(postgres_server, template=template)
    store, index = PostgresStore(url, member="alice"), PgVectorIndex(url, MODEL, DIMS)
    try:
        yield url, store, index, matrix, members
    finally:
        index.close()
        store.close()


@pytest.fixture(scope="module")
def shared(postgres_server: Any, filled: tuple[str, np.ndarray, dict[str, list[int]]]) -> Iterator[Filled]:
    """One copy of the filled database for the tests that only search."""
    yield from _copy_of(postgres_server, filled)


@pytest.fixture
def team(postgres_server: Any, filled: tuple[str, np.ndarray, dict[str, list[int]]]) -> Iterator[Filled]:
    """A copy of the filled database of its own, for a test that changes it."""
    yield from _copy_of(postgres_server, filled)


def _exact(matrix: np.ndarray, rows: list[int], query: np.ndarray, limit: int) -> list[str]:
    return [f"c{i}" for i in sorted(rows, key=lambda i: -float(matrix[i] @ query))[:limit]]


def _query(matrix: np.ndarray, row: int, seed: int) -> np.ndarray:
    query = matrix[row] + np.random.default_rng(seed).normal(scale=0.1, size=DIMS).astype(np.float32)
    return np.asarray(query / np.linalg.norm(query), dtype=np.float32)


def _project_id(store: PostgresStore, name: str) -> int:
    project = store.project_by_path(f"/work/{name}")
    assert project is not None
    return project.id


def test_a_search_within_a_project_equals_searching_everything_and_keeping_the_projects_hits(shared: Filled) -> None:
    _, store, index, matrix, members = shared
    everything = len(matrix)
    compared = 0
    for name in SHARES:
        project_id, ids = _project_id(store, name), _ids(members[name])
        for seed, row in enumerate(members[name][:3]):
            query = _query(matrix, row, seed)
            # Unfiltered, the HNSW walk returns at most the nearest 1,000: compare where it found enough.
            unfiltered = [h.chunk_id for h in index.search(query, limit=everything)]
            for limit in (10, 25):
                hits = index.search(query, limit=limit, project_ids=[project_id])
                kept = [c for c in unfiltered if c in ids][:limit]
                assert len(hits) == min(limit, len(members[name]))
                assert [h.chunk_id for h in hits] == _exact(matrix, members[name], query, limit)
                if len(kept) == limit:
                    compared += 1
                    assert [h.chunk_id for h in hits] == kept
    assert compared >= 6  # the large and middling projects


def _ids(rows: list[int]) -> set[str]:
    return {f"c{i}" for i in rows}


def test_an_agent_filter_within_a_project_keeps_only_that_agents_nearest(shared: Filled) -> None:
    _, store, index, matrix, members = shared
    for name in ("big", "small"):
        helper_rows = [i for n, i in enumerate(members[name]) if n % 3 == 0]
        query = _query(matrix, helper_rows[0], 3)
        hits = index.search(query, limit=10, project_ids=[_project_id(store, name)], agent="helper")
        assert [h.chunk_id for h in hits] == _exact(matrix, helper_rows, query, 10)


def test_an_older_database_gets_each_vectors_project_on_upgrade_and_searches_alike(team: Filled) -> None:
    url, store, index, matrix, members = team
    query = _query(matrix, members["mid"][0], 7)
    before = [h.chunk_id for h in index.search(query, limit=20, project_ids=[_project_id(store, "mid")])]
    index.close()
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:  # the database as the previous release left it
        conn.execute("DROP TRIGGER vectors_project ON vectors; DROP TRIGGER chunks_moved ON chunks")
        conn.execute("ALTER TABLE vectors DROP COLUMN project_id")
        conn.execute("DELETE FROM schema_migrations WHERE name = 'm004_vector_projects'")
    upgraded = PostgresStore(url, member="alice")  # opening migrates
    reopened = PgVectorIndex(url, MODEL, DIMS)  # and the HNSW index the upgrade dropped is built again
    try:
        with psycopg.connect(url) as conn:
            unset = conn.execute("SELECT count(*) FROM vectors WHERE project_id IS NULL").fetchone()
            wrong = conn.execute(
                "SELECT count(*) FROM vectors v JOIN chunks c ON c.id = v.chunk_id WHERE v.project_id <> c.project_id"
            ).fetchone()
        assert unset == (0,) and wrong == (0,)
        after = reopened.search(query, limit=20, project_ids=[_project_id(upgraded, "mid")])
        assert [h.chunk_id for h in after] == before == _exact(matrix, members["mid"], query, 20)
        assert reopened.size_bytes() > reopened.count() * DIMS * 4  # the HNSW index is back
    finally:
        reopened.close()
        upgraded.close()


def test_a_chunk_moved_to_another_project_is_found_there(team: Filled) -> None:
    _, store, index, matrix, members = team
    moved = members["small"][0]
    # A project folder renamed and merged into another keeps its chunks (absorb_project), but any
    # writer moving a chunk's project (an older release, plain SQL) must move its vector's too.
    store.conn.execute("UPDATE chunks SET project_id = %s WHERE id = %s", (_project_id(store, "mid"), f"c{moved}"))
    hits = index.search(matrix[moved], limit=5, project_ids=[_project_id(store, "mid")])
    assert hits[0].chunk_id == f"c{moved}"
    assert f"c{moved}" not in {
        h.chunk_id for h in index.search(matrix[moved], limit=5, project_ids=[_project_id(store, "small")])
    }
    # Vectors written after their chunk take its project, whoever writes them.
    new = chunk_record(99_999, session_id="s-small")
    with store.atomic():
        store.save_session(store.resolve_project("/work/small", "/work/small"), "s-small", [new])
    index.upsert([VectorRecord("c99999", "h99999", matrix[moved])])
    found = index.search(matrix[moved], limit=1, project_ids=[_project_id(store, "small")])
    assert [h.chunk_id for h in found] == ["c99999"]
