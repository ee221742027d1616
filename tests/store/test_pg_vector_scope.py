"""Vector search within a project on PostgreSQL: the project's nearest chunks, as many as asked.

pgvector 0.6 applies a WHERE filter after its HNSW walk, which keeps ``hnsw.ef_search`` rows: a
search within a project holding a tenth of the store used to come back with a handful of hits
(here: 100 asked, fewer found, once the store is large enough for the planner to walk the index).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from postgres_server import new_database

from causantic.store.records import ChunkRecord
from causantic.store.vectors import VectorRecord

CHUNKS = 5000
PROJECTS = 10


def _chunk(i: int, session: str) -> ChunkRecord:
    return ChunkRecord(
        id=f"c{i}",
        session_id=session,
        agent="main",
        agent_id=None,
        team_name=None,
        turn_index=i,
        part=0,
        start_time="2026-01-01T00:00:00.000Z",
        end_time="2026-01-01T00:00:00.000Z",
        content=f"text {i}",
        search_terms="",
        content_hash=f"h{i}",
        approx_tokens=2,
        tool_use_count=0,
        code_block_count=0,
        has_thinking=False,
        message_uuids=(),
    )


@pytest.fixture(scope="module")
def team_vectors(postgres_server: Any) -> Any:
    from causantic.store.postgres.store import PostgresStore
    from causantic.store.postgres.vectors import PgVectorIndex

    url = new_database(postgres_server)
    rng = np.random.default_rng(5)
    matrix = rng.normal(size=(CHUNKS, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    store = PostgresStore(url, member="alice")
    index = PgVectorIndex(url, "all-minilm-l6-v2", 384)
    projects: dict[int, list[int]] = {}
    for p in range(PROJECTS):
        project = store.resolve_project(f"/work/p{p}", f"/work/p{p}")
        rows = list(range(p, CHUNKS, PROJECTS))
        with store.atomic():
            store.save_session(project, f"s{p}", [_chunk(i, f"s{p}") for i in rows])
        projects[project.id] = rows
    index.upsert([VectorRecord(f"c{i}", f"h{i}", matrix[i]) for i in range(CHUNKS)])
    assert index.health(fresh=True).ann == "ready"
    yield index, matrix, projects
    index.close()
    store.close()


@pytest.mark.parametrize("limit", [10, 100])
def test_a_search_within_a_project_returns_its_nearest_chunks_as_many_as_asked(team_vectors: Any, limit: int) -> None:
    index, matrix, projects = team_vectors
    rng = np.random.default_rng(limit)
    for project_id, rows in list(projects.items())[:4]:
        query = matrix[rows[0]] + rng.normal(scale=0.3, size=384).astype(np.float32)
        query /= np.linalg.norm(query)
        exact = sorted(rows, key=lambda i: -float(matrix[i] @ query))[:limit]
        hits = index.search(query, limit=limit, project_ids=[project_id])
        assert [h.chunk_id for h in hits] == [f"c{i}" for i in exact]
        assert all(abs(h.similarity - float(matrix[int(h.chunk_id[1:])] @ query)) < 1e-5 for h in hits)
