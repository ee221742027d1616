"""Vectors in SQLite with a derived ANN index: exact cosines, scopes, and an index that can be lost.

Search reports the true cosine whether the ANN index or an exact scan answered; rows written, deleted
or replaced after the index was built are seen (or dropped) at once; deleting the index file loses
nothing, and `ensure_ann_index` (run by every embed and ingest) writes it again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from chunk_records import chunk_record

from causantic.store import vectors as vectors_module
from causantic.store.memory import MemoryStore
from causantic.store.vectors import VectorIndex, VectorRecord

pytest.importorskip("faiss", reason="the ANN index needs faiss-cpu (a default dependency)")


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _store_with_vectors(
    tmp_path: Path, n: int, *, projects: int = 1, agents: tuple[str, ...] = ("main",)
) -> tuple[MemoryStore, VectorIndex, np.ndarray]:
    rng = np.random.default_rng(3)
    matrix = _unit(rng.normal(size=(n, 384)))
    store = MemoryStore(tmp_path / "memory.db")
    per_project = n // projects
    with store.atomic():
        for p in range(projects):
            project = store.resolve_project(f"/work/p{p}", f"/work/p{p}")
            chunks = [
                chunk_record(i, session_id=f"s{p}", agent=agents[i % len(agents)])
                for i in range(p * per_project, (p + 1) * per_project)
            ]
            store.save_session(project, f"s{p}", chunks)
    index = VectorIndex(tmp_path / "memory.db", tmp_path / "vectors", "test-model", 384)
    index.upsert([VectorRecord(f"c{i}", f"h{i}", row) for i, row in enumerate(matrix)])
    return store, index, matrix


@pytest.fixture
def indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MemoryStore, VectorIndex, np.ndarray]]:
    """1,200 vectors with their ANN index built (the threshold lowered from 10,000 to 1,000)."""
    monkeypatch.setattr(vectors_module, "ANN_INDEX_MIN_ROWS", 1000)
    store, index, matrix = _store_with_vectors(tmp_path, 1200)
    assert index.ensure_ann_index()
    yield store, index, matrix
    store.close()


def _near(matrix: np.ndarray, i: int, seed: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return _unit(matrix[i : i + 1] + 0.3 * rng.normal(size=(1, 384)) / np.sqrt(384))[0]


@pytest.mark.parametrize("indexed", [False, True])
def test_similarity_is_the_cosine_with_and_without_the_ann_index(
    tmp_path: Path, indexed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_module, "ANN_INDEX_MIN_ROWS", 1000 if indexed else 10**9)
    store, index, matrix = _store_with_vectors(tmp_path, 1200)
    assert index.ensure_ann_index() is indexed
    assert index.ann_path.exists() is indexed
    query = _near(matrix, 0)

    matches = index.search(query, limit=20)

    expected = {f"c{i}": float(row @ query) for i, row in enumerate(matrix)}
    assert matches[0].chunk_id == "c0" and matches[0].similarity > 0.9
    assert all(m.similarity == pytest.approx(expected[m.chunk_id], abs=1e-5) for m in matches)
    assert all(np.allclose(m.vector, matrix[int(m.chunk_id[1:])]) for m in matches)
    assert [m.similarity for m in matches] == sorted((m.similarity for m in matches), reverse=True)
    store.close()


def test_rows_written_deleted_or_replaced_after_the_build_are_seen_at_once(
    indexed: tuple[MemoryStore, VectorIndex, np.ndarray],
) -> None:
    store, index, matrix = indexed
    # c5 now points where c7 pointed; c7 goes with its chunk.
    index.upsert([VectorRecord("c5", "h5-new", matrix[7])])
    store.delete_chunks(["c7"])

    matches = index.search(matrix[7], limit=5)

    assert matches[0].chunk_id == "c5" and matches[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert "c7" not in {m.chunk_id for m in matches}
    assert index.count() == 1199


def test_a_lost_ann_index_is_noted_searched_exactly_and_rebuilt(
    indexed: tuple[MemoryStore, VectorIndex, np.ndarray],
) -> None:
    _, index, matrix = indexed
    index.ann_path.unlink()

    assert index.health(fresh=True).ann == "missing"
    assert index.search(_near(matrix, 3), limit=3)[0].chunk_id == "c3"
    assert index.ensure_ann_index() is True
    assert index.health(fresh=True).ann == "ready"


def test_a_project_scope_returns_only_its_chunks_through_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_module, "ANN_INDEX_MIN_ROWS", 1000)
    monkeypatch.setattr(vectors_module, "EXACT_SCAN_MAX_ROWS", 100)  # make the scoped ANN path answer
    store, index, matrix = _store_with_vectors(tmp_path, 1200, projects=4)
    index.ensure_ann_index()
    second = store.find_projects("p1")[0].id

    matches = index.search(_near(matrix, 310), limit=10, project_ids=[second])

    assert matches[0].chunk_id == "c310"
    assert all(300 <= int(m.chunk_id[1:]) < 600 for m in matches)
    store.close()


@pytest.fixture
def scoped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MemoryStore, VectorIndex, np.ndarray]]:
    """1,200 vectors in 4 projects of 300, agents alternating main / Explore, indexed; scopes of
    more than 100 rows go through the index."""
    monkeypatch.setattr(vectors_module, "ANN_INDEX_MIN_ROWS", 1000)
    monkeypatch.setattr(vectors_module, "EXACT_SCAN_MAX_ROWS", 100)
    store, index, matrix = _store_with_vectors(tmp_path, 1200, projects=4, agents=("main", "Explore"))
    assert index.ensure_ann_index()
    yield store, index, matrix
    store.close()


def test_a_project_and_agent_scope_through_the_index_keeps_to_both(
    scoped: tuple[MemoryStore, VectorIndex, np.ndarray],
) -> None:
    store, index, matrix = scoped
    third = store.find_projects("p2")[0].id

    explore = index.search(_near(matrix, 611), limit=10, project_ids=[third], agent="Explore")
    main = index.search(_near(matrix, 611), limit=10, project_ids=[third], agent="main")

    assert explore[0].chunk_id == "c611"
    assert all(600 <= int(m.chunk_id[1:]) < 900 and int(m.chunk_id[1:]) % 2 == 1 for m in explore)
    assert main and all(600 <= int(m.chunk_id[1:]) < 900 and int(m.chunk_id[1:]) % 2 == 0 for m in main)
    assert index.search(_near(matrix, 611), limit=10, agent="Plan") == []


def test_a_chunk_moved_to_another_project_is_found_only_under_its_new_one(
    scoped: tuple[MemoryStore, VectorIndex, np.ndarray],
) -> None:
    store, index, matrix = scoped
    first, second = store.find_projects("p0")[0], store.find_projects("p1")[0]
    with store.atomic():
        store.absorb_project("/work/p1", first)  # p1's chunks move to p0 and lose their vectors
    index.upsert([VectorRecord(f"c{i}", f"h{i}", matrix[i]) for i in range(300, 600)])  # embedded again

    in_first = index.search(_near(matrix, 310), limit=10, project_ids=[first.id])

    assert in_first[0].chunk_id == "c310"
    assert index.search(_near(matrix, 310), limit=10, project_ids=[second.id]) == []


def test_an_index_without_a_scope_map_filters_through_sqlite_until_the_map_is_written(
    scoped: tuple[MemoryStore, VectorIndex, np.ndarray],
) -> None:
    store, index, matrix = scoped
    scopes = next(index.folder.glob("*.scopes.npz"))
    scopes.unlink()
    index.close()  # a fresh process: the index was written before scope maps existed
    second = store.find_projects("p1")[0].id

    matches = index.search(_near(matrix, 310), limit=10, project_ids=[second])

    assert matches[0].chunk_id == "c310" and all(300 <= int(m.chunk_id[1:]) < 600 for m in matches)
    assert index.ensure_ann_index() is True and scopes.exists()
    assert index.ensure_ann_index() is False


def test_rows_added_to_the_index_later_join_their_scope(
    scoped: tuple[MemoryStore, VectorIndex, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, index, matrix = scoped
    monkeypatch.setattr(vectors_module, "ANN_TAIL_MAX_ROWS", 50)
    second = store.find_projects("p1")[0].id
    rng = np.random.default_rng(9)
    extra = _unit(rng.normal(size=(200, 384)))
    later = "2026-01-02T00:00:00.000Z"
    chunks = [
        chunk_record(
            i,
            id=f"n{i}",
            session_id="s1-more",
            start_time=later,
            end_time=later,
            content=f"more text {i}",
            content_hash=f"n{i}",
            approx_tokens=3,
        )
        for i in range(200)
    ]
    with store.atomic():
        store.save_session(store.find_projects("p1")[0], "s1-more", chunks)
    index.upsert([VectorRecord(f"n{i}", f"n{i}", row) for i, row in enumerate(extra)])
    assert index.ensure_ann_index() is True  # extended: the new rows are in the index and its map

    matches = index.search(_near(extra, 7), limit=10, project_ids=[second])

    assert matches[0].chunk_id == "n7"
    assert all(m.chunk_id.startswith("n") or 300 <= int(m.chunk_id[1:]) < 600 for m in matches)


def test_health_counts_chunks_without_vectors(tmp_path: Path) -> None:
    store, index, _ = _store_with_vectors(tmp_path, 50)
    index.delete(["c1", "c2"])

    health = index.health(fresh=True)

    assert (health.chunks, health.vectors, health.missing, health.ann) == (50, 48, 2, "not needed")
    assert {r.id for r in store.chunks_needing_vectors("test-model", 10)} == {"c1", "c2"}
    store.close()
