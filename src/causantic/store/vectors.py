"""VectorIndex: chunk embeddings in LanceDB, one table per embedding model.

Vectors of two models never mix: the table name carries the model id, so changing
``embedding.model`` starts an empty table and ``causantic reindex`` fills it. Rows are keyed by
chunk id and carry the chunk's content hash (the embedding cache: identical text is never embedded
twice), project id and agent (for filtered search). The index never calls the embedder.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causantic.files import file_lock

if TYPE_CHECKING:
    import numpy as np

_ID_BATCH = 1000
# Below this many rows an exact scan is fast enough and exact; above it an ANN index keeps a
# query in milliseconds (an exact scan of 100k 384-d vectors takes hundreds of ms here).
ANN_INDEX_MIN_ROWS = 20_000
# Rebuild the index when more than this share of rows arrived after it was built (Lance scans
# unindexed rows exactly and merges them, so they are found meanwhile, only more slowly).
ANN_REBUILD_SHARE = 0.2


@dataclass(frozen=True, slots=True)
class VectorRecord:
    chunk_id: str
    project_id: int
    agent: str
    content_hash: str
    vector: Any  # np.ndarray (dims,), float32, unit length


@dataclass(frozen=True, slots=True)
class VectorMatch:
    chunk_id: str
    similarity: float  # cosine similarity, 1 = same direction
    vector: Any  # np.ndarray (dims,), float32, unit length


class VectorIndex:
    """Opened lazily: constructing it imports nothing heavy; the first call opens LanceDB.

    Several processes write the same table (an MCP server per Claude Code session, hook workers,
    the CLI). Lance commits optimistically: two concurrent merge-inserts can both add a row for the
    same id, and compaction beside a delete fails with a commit conflict. So every write runs under
    one cross-process file lock (:meth:`writing`, re-entrant within a process) and first refreshes
    the table to the latest committed version.
    """

    def __init__(self, folder: Path, model_id: str, dims: int) -> None:
        self.folder = folder
        self.model_id = model_id
        self.dims = dims
        self.table_name = "chunks_" + re.sub(r"[^A-Za-z0-9_]", "_", model_id)
        self._table: Any = None
        self._write_depth = 0
        self._thread_lock = threading.RLock()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the table's write lock (other processes wait); nested calls share it."""
        with self._thread_lock:
            if self._write_depth:
                self._write_depth += 1
                try:
                    yield
                finally:
                    self._write_depth -= 1
                return
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            with file_lock(self.folder / f".{self.table_name}.write.lock"):
                self._write_depth = 1
                # Lance creates its files with the process umask (0644 by default); vectors and
                # chunk ids are as private as the text. The umask is process-wide, so it is set
                # only while this write lock is held.
                umask = os.umask(0o077)
                try:
                    if self._table is not None:
                        self._table.checkout_latest()
                    yield
                finally:
                    os.umask(umask)
                    self._write_depth = 0

    @property
    def table(self) -> Any:
        if self._table is None:
            os.environ.setdefault("LANCE_LOG", "error")  # lance logs routine notices as warnings
            import lancedb
            import pyarrow as pa

            schema = pa.schema([
                pa.field("id", pa.string()),
                pa.field("project_id", pa.int64()),
                pa.field("agent", pa.string()),
                pa.field("content_hash", pa.string()),
                pa.field("vector", pa.list_(pa.float32(), self.dims)),
            ], metadata={"model": self.model_id})
            if not self._write_depth and not (self.folder / f"{self.table_name}.lance").is_dir():
                # A read of a store without vectors writes nothing (on a full disk it could not):
                # it sees an empty table in memory; the first write creates the real one.
                return lancedb.connect("memory://").create_table(self.table_name, schema=schema)
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            db = lancedb.connect(str(self.folder))
            self._table = db.create_table(self.table_name, schema=schema, exist_ok=True)
        return self._table

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        if not records:
            return
        import numpy as np
        import pyarrow as pa

        matrix = np.stack([np.asarray(r.vector, dtype=np.float32) for r in records])
        data = pa.table({
            "id": [r.chunk_id for r in records],
            "project_id": pa.array([r.project_id for r in records], pa.int64()),
            "agent": [r.agent for r in records],
            "content_hash": [r.content_hash for r in records],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), self.dims),
        })
        with self.writing():
            self.table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)

    def search(self, vector: np.ndarray, *, limit: int, project_ids: Sequence[int] | None = None,
               agent: str | None = None) -> list[VectorMatch]:
        """Nearest chunks first (by exact cosine), each with its vector and its cosine similarity.

        The similarity is computed from the returned vectors, not from Lance's ``_distance``: with
        the IVF-HNSW-SQ index that is the squared L2 distance (2 − 2·cos for unit vectors), without
        it the cosine distance (1 − cos), so one formula cannot serve both.
        """
        import numpy as np

        # No count() guard: an empty table answers with no rows, and each LanceDB call is a
        # round trip to its runtime thread, which costs milliseconds on a busy machine.
        query = (self.table.search(vector).distance_type("cosine").limit(limit).nprobes(16)
                 .select(["id", "vector", "_distance"]))  # naming _distance keeps lance from warning
        conditions = []
        if project_ids:
            conditions.append(f"project_id IN ({', '.join(str(int(p)) for p in project_ids)})")
        if agent:
            conditions.append(f"agent = {_sql_string(agent)}")
        if conditions:
            query = query.where(" AND ".join(conditions), prefilter=True)
        result = query.to_arrow()
        ids = result["id"].to_pylist()
        if not ids:
            return []
        matrix = _matrix(result["vector"], self.dims)
        unit = np.asarray(vector, dtype=np.float32)
        similarities = matrix @ (unit / (np.linalg.norm(unit) or 1.0))
        # The index ranks by quantised vectors; the exact similarities put near ties right.
        order = np.argsort(-similarities, kind="stable")
        return [VectorMatch(ids[i], float(similarities[i]), matrix[i]) for i in order]

    def vectors(self, chunk_ids: Iterable[str]) -> dict[str, np.ndarray]:
        return self._fetch("id", list(chunk_ids))

    def vectors_by_content(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Stored vectors keyed by content hash: the cache that spares re-embedding identical text."""
        return self._fetch("content_hash", list(hashes))

    def _fetch(self, column: str, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        if not keys:
            return out
        for start in range(0, len(keys), _ID_BATCH):
            batch = keys[start:start + _ID_BATCH]
            where = f"{column} IN ({', '.join(_sql_string(k) for k in batch)})"
            result = self.table.search().where(where).select([column, "vector"]).limit(len(batch) * 4).to_arrow()
            for key, row in zip(result[column].to_pylist(), _matrix(result["vector"], self.dims), strict=True):
                out.setdefault(key, row)
        return out

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every (chunk id, vector) of this model, as ids and one matrix (for clustering)."""
        import numpy as np

        if self.count() == 0:
            return [], np.zeros((0, self.dims), dtype=np.float32)
        data = self.table.to_arrow().select(["id", "vector"])
        return data["id"].to_pylist(), _matrix(data["vector"], self.dims)

    def ids(self) -> set[str]:
        if self.count() == 0:
            return set()
        return set(self.table.search().select(["id"]).limit(self.count() + 1).to_arrow()["id"].to_pylist())

    def delete(self, chunk_ids: Iterable[str]) -> int:
        ids = list(chunk_ids)
        with self.writing():
            for start in range(0, len(ids), _ID_BATCH):
                batch = ids[start:start + _ID_BATCH]
                self.table.delete(f"id IN ({', '.join(_sql_string(i) for i in batch)})")
        return len(ids)

    def drop(self) -> None:
        """Delete this model's whole table (``causantic reindex`` rebuilds it)."""
        import lancedb

        with self.writing():
            db = lancedb.connect(str(self.folder))
            db.drop_table(self.table_name, ignore_missing=True)
            self._table = None

    def count(self) -> int:
        return int(self.table.count_rows())

    def compact(self) -> None:
        """Merge small fragments many appends leave behind, and keep the ANN index current."""
        with self.writing():
            self.table.optimize()
            self.ensure_ann_index()

    def ensure_ann_index(self) -> bool:
        """Build (or rebuild) the IVF-HNSW index once the table is large; True when (re)built."""
        rows = self.count()
        if rows < ANN_INDEX_MIN_ROWS:
            return False
        self._ensure_scalar_indices()
        indexed = self._indexed_rows()
        if indexed is not None and rows - indexed <= ANN_REBUILD_SHARE * rows:
            return False
        from lancedb.index import IvfHnswSq

        partitions = max(1, min(256, rows // 4096))
        self.table.create_index("vector", config=IvfHnswSq(distance_type="cosine", num_partitions=partitions),
                                replace=True)
        return True

    def _ensure_scalar_indices(self) -> None:
        """Scalar indices for the filters every search runs: a project filter (a pre-filter of the
        ANN search) and the id lookup of candidates' vectors; without them each scans its whole
        column (at 100k rows about half of a filtered vector search, and 9 → 5 ms per lookup).
        Lance's optimize() adds later rows to them."""
        from lancedb.index import Bitmap, BTree

        present = {column for index in self.table.list_indices() for column in getattr(index, "columns", [])}
        for column, config in (("project_id", Bitmap()), ("id", BTree())):
            if column not in present:
                self.table.create_index(column, config=config, replace=True)

    def _indexed_rows(self) -> int | None:
        for index in self.table.list_indices():
            if "vector" in getattr(index, "columns", []):
                stats = self.table.index_stats(index.name)
                return int(stats.num_indexed_rows) if stats is not None else None
        return None

    def size_bytes(self) -> int:
        path = self.folder / f"{self.table_name}.lance"
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def _matrix(column: Any, dims: int) -> np.ndarray:
    """A fixed-size-list vector column as one float32 matrix, a row per vector."""
    import numpy as np

    flat = column.combine_chunks().flatten().to_numpy(zero_copy_only=False)  # flatten() honours slices
    return np.asarray(flat, dtype=np.float32).reshape(-1, dims)


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
