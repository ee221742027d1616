"""Vector search reports the true cosine similarity whether or not the ANN index answers.

LanceDB's ``_distance`` is 1 − cos from an exact scan but 2 − 2·cos from the IVF-HNSW-SQ index; a
similarity read off it was 2·cos − 1 on large stores, so ``forget --query --threshold`` spared
chunks it should have matched and fusion saw most matches as negative.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from causantic.store.vectors import VectorIndex, VectorRecord


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("indexed", [False, True])
def test_similarity_is_the_cosine_with_and_without_the_ann_index(tmp_path: Path, indexed: bool) -> None:
    rng = np.random.default_rng(3)
    matrix = _unit(rng.normal(size=(1200, 384)))
    index = VectorIndex(tmp_path / "vectors", "test-model", 384)
    index.upsert([VectorRecord(f"c{i}", 1, "main", f"h{i}", row) for i, row in enumerate(matrix)])
    if indexed:
        from lancedb.index import IvfHnswSq

        index.table.create_index("vector", config=IvfHnswSq(distance_type="cosine", num_partitions=2))
        assert index._indexed_rows() == 1200
    query = _unit(matrix[:1] + 0.3 * rng.normal(size=(1, 384)) / np.sqrt(384))[0]  # near c0

    matches = index.search(query, limit=20)

    expected = {f"c{i}": float(row @ query) for i, row in enumerate(matrix)}
    assert matches[0].chunk_id == "c0" and matches[0].similarity > 0.9
    assert all(m.similarity == pytest.approx(expected[m.chunk_id], abs=1e-5) for m in matches)
    assert all(np.allclose(m.vector, matrix[int(m.chunk_id[1:])]) for m in matches)
    assert [m.similarity for m in matches] == sorted((m.similarity for m in matches), reverse=True)
