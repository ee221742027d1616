"""A forgotten chunk's vector leaves the faiss index file too, not only the database: search already
skipped it, but its quantised vector stayed on disk until the index was retrained (once 30% of its
rows were gone). Real SQLite and faiss files; the index threshold lowered from 10,000 to 1,000 rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from chunk_records import chunk_record

from causantic.retrieval.forget import ForgetRequest, forget
from causantic.store import vectors as vectors_module
from causantic.store.memory import MemoryStore
from causantic.store.vectors import VectorIndex, VectorRecord

faiss = pytest.importorskip("faiss", reason="the ANN index needs faiss-cpu (a default dependency)")


def _indexed(tmp_path: Path, projects: int, per_project: int) -> tuple[MemoryStore, VectorIndex]:
    rng = np.random.default_rng(5)
    store = MemoryStore(tmp_path / "memory.db")
    with store.atomic():
        for p in range(projects):
            project = store.resolve_project(f"/work/p{p}", f"/work/p{p}")
            ids = range(p * per_project, (p + 1) * per_project)
            store.save_session(project, f"s{p}", [chunk_record(i, session_id=f"s{p}") for i in ids])
    index = VectorIndex(tmp_path / "memory.db", tmp_path / "vectors", "test-model", 384)
    rows = rng.normal(size=(projects * per_project, 384)).astype(np.float32)
    index.upsert([VectorRecord(f"c{i}", f"h{i}", row / np.linalg.norm(row)) for i, row in enumerate(rows)])
    assert index.ensure_ann_index()
    return store, index


def _in_file(index: VectorIndex) -> int:
    return int(faiss.read_index(str(index.ann_path)).ntotal)


def test_forgetting_a_project_takes_its_vectors_out_of_the_index_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors_module, "ANN_INDEX_MIN_ROWS", 1000)
    store, index = _indexed(tmp_path, projects=8, per_project=200)
    try:
        assert _in_file(index) == 1600
        done = forget(store, index, None, ForgetRequest("p3", dry_run=False))  # 12.5%: no retrain
        assert done.deleted == 200
        assert _in_file(index) == 1400
        # The index still answers, and a project filter through it still finds its rows.
        query = index.vectors(["c1000"])["c1000"]
        assert index.search(query, limit=1)[0].chunk_id == "c1000"
        p5 = store.find_projects("p5")[0].id
        assert index.search(query, limit=1, project_ids=[p5])[0].chunk_id == "c1000"
    finally:
        index.close()
        store.close()


def test_forgetting_below_the_index_threshold_removes_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_module, "ANN_INDEX_MIN_ROWS", 1000)
    store, index = _indexed(tmp_path, projects=2, per_project=600)
    try:
        forget(store, index, None, ForgetRequest("p0", dry_run=False))
        assert not index.ann_path.exists()
        assert index.health(fresh=True).ann == "not needed"
    finally:
        index.close()
        store.close()
