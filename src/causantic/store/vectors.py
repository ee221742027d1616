"""VectorIndex: chunk embeddings in SQLite, and a derived approximate-nearest-neighbour index.

Where vectors live. Table ``vectors`` of ``memory.db`` (migration m005): one row per (chunk, model),
keyed by chunk id, tagged by model and carrying the hash of the text it was computed from (the
embedding cache: identical text is never embedded twice). Vectors of two models never mix: every
statement names the model. A vector is written in the same database as its chunk and deleted with it
(foreign key), so no crash can leave the two out of step, and there is no second store to lose.
The choice and its figures are in ``docs/architecture.md``.

The ANN index. From :data:`ANN_INDEX_MIN_ROWS` rows an exact scan costs too much per query, so a
faiss IVF index with 8-bit scalar quantisation is built from the table into
``<vector folder>/<table name>.faiss``, beside a JSON sidecar naming the highest ``vectors.seq`` it
holds (its *watermark*; ``seq`` only grows, and a rewritten vector gets a new one). The index is
derived: a search asks it for candidates among rows up to the watermark, scans newer rows exactly,
and reads every candidate's vector back from SQLite, so a row deleted or replaced since the build
drops out and every similarity is the exact cosine. Losing the file loses nothing: search scans
exactly meanwhile (and says so in its notes) and the next ``causantic embed`` or ingest rebuilds it.
Without faiss installed, search always scans exactly. A process killed while it writes the index
leaves at worst no sidecar (exact scans until the next run builds it afresh), a temporary file (the
next write replaces it) or, after a forget, a mark that the file still holds deleted rows (the next run
takes them out); ``tests/store/test_ann_kills.py`` kills one at each point.

Scopes. Beside the index lies its *scope map* (``<table name>.scopes.npz``): each indexed row's
``seq`` with its chunk's project and agent, sorted by project. A project or agent filter takes its
rows from the map (a slice) instead of reading them from SQLite per query (seconds for a large
project at 1M rows), and hands them to faiss as a bitmap. Like the index it is derived: a chunk that
changes project loses its vector (so its row is newer than the map), and every candidate is read
back from SQLite with the filter applied again, so a stale map can cost recall, never a wrong hit.

numpy and faiss are imported on first use; constructing an index imports neither.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causantic import write_waits
from causantic.errors import raise_if_interrupted
from causantic.files import file_lock
from causantic.store import common
from causantic.store import sqlite as sqlite_util
from causantic.store.migrations import migrate
from causantic.store.records import VectorHealth, VectorMatch, VectorRecord

if TYPE_CHECKING:
    import numpy as np

ANN_INDEX_MIN_ROWS = 10_000
"""Below this many vectors an exact scan answers in milliseconds and no ANN index is kept."""
ANN_TAIL_MAX_ROWS = 2_000
"""Rows newer than the index that search scans exactly before they are added to it."""
ANN_RETRAIN_GROWTH = 4
"""The index is trained afresh once the table holds this many times the rows it was trained on."""
ANN_STALE_SHARE = 0.3
"""...or once this share of the rows it holds were deleted or replaced."""
ANN_PROBES = 24
"""IVF lists searched per query (of 2·√rows); a project filter probes more (see :meth:`_ann_rows`)."""
ANN_SCOPE_MAX_PROBE_SHARE = 0.25
"""A filtered search probes at most this share of the lists. At 1M rows probing all 2,000 lists
for a 5,000-row project took 90 ms; a fourth took 11 ms and still found 97% of the scope's exact
top 50 (99–100% for scopes of 14,000 and 27,000 rows), more than an unfiltered search finds."""
EXACT_SCAN_MAX_ROWS = 2_000
"""A filtered search whose scope holds at most this many vectors scans them exactly. Larger scopes
go through the index with a bitmap of their rows: reading 14,000 vectors from SQLite took longer
than faiss scanning every list of a 100k-row index for the scope's rows."""
HEALTH_TTL_S = 30.0
"""How long a process trusts its count of chunks without vectors (counting 1M rows takes ~20 ms)."""
# A scoped read walks the scope's chunks (by their project or agent index) and looks up each one's
# vector: CROSS JOIN keeps SQLite from scanning every vector of the model instead (seconds at 1M rows).
_SCOPED_FROM = "chunks c CROSS JOIN vectors v ON v.chunk_id = c.id AND v.model = ?"
_BUILD_BATCH = 50_000
_lock_waits_for: ContextVar[str] = ContextVar("causantic_vector_lock_wait", default=write_waits.EMBED)
"""What a wait for the embedding lock is for (:data:`causantic.write_waits.EMBED`, or ``UNINDEX``)."""


class UpkeepSkipped(Exception):
    """Ctrl-C while upkeep waited for the embedding lock: the upkeep is left for a later write."""


@dataclass(frozen=True, slots=True)
class _ScopeMap:
    """The indexed rows' projects and agents, sorted by (project, seq)."""

    projects: Any  # np.ndarray int64, ascending
    seqs: Any  # np.ndarray int64, ascending within each project
    agents: Any  # np.ndarray int32: position in ``agent_names``
    agent_names: tuple[str, ...]

    def members(self, project_ids: Sequence[int] | None, agent: str | None) -> np.ndarray:
        """The indexed seqs in the scope, ascending."""
        import numpy as np

        if project_ids:
            parts = []
            for pid in sorted(set(project_ids)):
                lo, hi = np.searchsorted(self.projects, [pid, pid + 1])
                parts.append((self.seqs[lo:hi], self.agents[lo:hi]))
            seqs = np.concatenate([p[0] for p in parts])
            agents = np.concatenate([p[1] for p in parts])
        else:
            seqs, agents = self.seqs, self.agents
        if agent is not None:
            code = self.agent_names.index(agent) if agent in self.agent_names else -1
            seqs = seqs[agents == code]
        if not project_ids or len(project_ids) > 1:
            seqs = np.sort(seqs)
        return seqs


@dataclass(slots=True)
class _Ann:
    index: Any  # faiss.IndexIVF
    watermark: int  # highest vectors.seq the index holds
    trained_rows: int
    stamp: tuple[int, int]  # (mtime_ns, size) of the sidecar when loaded
    scopes: _ScopeMap | None = None  # loaded on the first filtered search
    scopes_read: bool = False


class VectorReads(ABC):
    """The reads SQLite's :class:`VectorIndex` and team memory's
    :class:`~causantic.store.postgres.vectors.PgVectorIndex` answer alike, over table ``vectors``
    (one row per chunk and model). A subclass runs a ``?``-placeholder statement (:meth:`_query`) and
    reads vectors by a key column (:meth:`_fetch`); its ``_lock`` guards its connection."""

    model_id: str
    _lock: threading.RLock
    _health: HealthCache

    @abstractmethod
    def _query(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement written with ``?`` placeholders; the driver's cursor."""

    @abstractmethod
    def _fetch(self, column: str, keys: list[str]) -> dict[str, np.ndarray]:
        """This model's stored vectors whose ``column`` (chunk_id or content_hash) is among ``keys``."""

    @abstractmethod
    def _measure_health(self) -> VectorHealth: ...

    def count(self) -> int:
        with self._lock:
            return int(self._query("SELECT COUNT(*) FROM vectors WHERE model = ?", (self.model_id,)).fetchone()[0])

    def newest_seq(self) -> int:
        with self._lock:
            return int(self._query("SELECT MAX(seq) FROM vectors WHERE model = ?", (self.model_id,)).fetchone()[0] or 0)

    def written_after(self, seq: int) -> list[str]:
        with self._lock:
            rows = self._query("SELECT chunk_id FROM vectors WHERE model = ? AND seq > ?", (self.model_id, seq))
            return [r[0] for r in rows]

    def has_vectors(self) -> bool:
        with self._lock:
            return self._query("SELECT 1 FROM vectors WHERE model = ? LIMIT 1", (self.model_id,)).fetchone() is not None

    def health(self, *, fresh: bool = False) -> VectorHealth:
        """How many chunks have no vector of this model, and the state of the ANN index."""
        return self._health.get(fresh, self._measure_health)

    def ids(self) -> set[str]:
        with self._lock:
            return {r[0] for r in self._query("SELECT chunk_id FROM vectors WHERE model = ?", (self.model_id,))}

    def vectors(self, chunk_ids: Iterable[str]) -> dict[str, np.ndarray]:
        return self._fetch("chunk_id", list(chunk_ids))

    def vectors_by_content(self, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Stored vectors keyed by content hash: the cache that spares re-embedding identical text."""
        return self._fetch("content_hash", list(hashes))


@sqlite_util.raising_store_errors(lambda index: f"at {index.db_path}")
class VectorIndex(VectorReads):
    """One model's vectors. Opens its own SQLite connection on first use (thread-safe within a process)."""

    def __init__(self, db_path: Path, folder: Path, model_id: str, dims: int, *, busy_timeout_ms: int = 30_000) -> None:
        self.db_path = db_path
        self.folder = folder
        self.model_id = model_id
        self.dims = dims
        self.table_name = table_name(model_id)
        self.busy_timeout_ms = busy_timeout_ms
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        self._writes = Nesting()
        self._ann: _Ann | None = None
        self._health = HealthCache()

    @property
    def ann_path(self) -> Path:
        return self.folder / f"{self.table_name}.faiss"

    @property
    def _sidecar(self) -> Path:
        return self.folder / f"{self.table_name}.faiss.json"

    @property
    def _scopes_path(self) -> Path:
        return self.folder / f"{self.table_name}.scopes.npz"

    @property
    def _deleted_marker(self) -> Path:
        """Present while the index file may hold rows deleted from the table (:meth:`delete`)."""
        return self.folder / f"{self.table_name}.faiss.deleted"

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite_util.connect(self.db_path, busy_timeout_ms=self.busy_timeout_ms)
            migrate(conn)
            self._conn = conn
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._ann = None

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold this model's embedding lock (other processes wait), so two processes never embed the
        same chunks or build the ANN index at once; nested calls share it."""
        with self._lock, self._writes.outermost(self._write_lock):
            yield

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        """The embedding lock, waiting for another process that holds it (as long as it embeds).

        Trigger: another process embeds (a hook's or a batch ingest) when this one would embed, or
        take a forget's vectors out of the ANN index file. Why: the wait has no limit, and the CLI
        sat silent through all of another ingest's embedding (a forget, after its deletion was done).
        Outcome: where someone listens, a wait past :data:`~causantic.write_waits.NOTICE_AFTER_MS` is
        told, with what most likely holds the lock; inside :meth:`drop_deleted_from_ann` as upkeep
        that Ctrl-C skips (:class:`UpkeepSkipped`: the file stays marked, the next index write takes
        the rows out)."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self.folder / f".{self.table_name}.write.lock"
        with ExitStack() as held:
            telling = write_waits.listening()
            if not held.enter_context(file_lock(path, write_waits.NOTICE_AFTER_MS / 1000 if telling else None)):
                why = _lock_waits_for.get()
                try:  # Ctrl-C may come while the wait is being told
                    write_waits.waiting(0, why=why)
                    held.enter_context(file_lock(path))
                except KeyboardInterrupt:
                    if why != write_waits.UNINDEX:
                        raise
                    raise UpkeepSkipped from None
            # Lance creates its files with the process umask (0644 by default); vectors and
            # chunk ids are as private as the text. The umask is process-wide, so it is set
            # only while this write lock is held.
            umask = os.umask(0o077)
            try:
                yield
            finally:
                os.umask(umask)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    # ---- writes -------------------------------------------------------------------------------

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Store vectors; a chunk deleted meanwhile gets none (its row would have no chunk)."""
        if not records:
            return
        rows = [(r.chunk_id, self.model_id, r.content_hash, self._blob(r.vector), r.chunk_id) for r in records]
        with self._lock, sqlite_util.atomic(self.conn):
            # REPLACE gives a rewritten vector a new seq, so the ANN index sees it as new.
            self.conn.executemany(
                "INSERT OR REPLACE INTO vectors(chunk_id, model, content_hash, vector)"
                " SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?)",
                rows,
            )
        self._health.clear()

    def mark_deleting(self) -> None:
        """With an ANN index file, mark it as holding deleted rows until :meth:`drop_deleted_from_ann`
        takes them out (killed before, the next :meth:`ensure_ann_index` does). Called before chunks
        are deleted (their vectors go with them): a process killed right after the deletion commits
        leaves the mark."""
        if self._sidecar.exists():
            self._deleted_marker.touch(mode=0o600)

    def delete(self, chunk_ids: Iterable[str]) -> int:
        """Delete these chunks' vectors (marked first: :meth:`mark_deleting`)."""
        removed = 0
        self.mark_deleting()
        with self._lock, sqlite_util.atomic(self.conn):
            for batch in common.batches(list(chunk_ids)):
                marks = ",".join("?" * len(batch))
                removed += self.conn.execute(
                    f"DELETE FROM vectors WHERE model = ? AND chunk_id IN ({marks})", [self.model_id, *batch]
                ).rowcount
        self._health.clear()
        return removed

    def drop(self) -> None:
        """Delete every vector of this model and its ANN index (``causantic reindex`` rebuilds them)."""
        with self.writing():
            with sqlite_util.atomic(self.conn):
                self.conn.execute("DELETE FROM vectors WHERE model = ?", (self.model_id,))
            self._remove_ann()
        self._health.clear()

    # ---- reads --------------------------------------------------------------------------------

    def _measure_health(self) -> VectorHealth:
        with self._lock:
            chunks = self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            vectors = self.count()
            ann = "not needed" if vectors < ANN_INDEX_MIN_ROWS else self._ann_state()
        return VectorHealth(chunks, vectors, ann)

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every (chunk id, vector) of this model, as ids and one matrix (for clustering)."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT chunk_id, vector FROM vectors WHERE model = ? ORDER BY seq", (self.model_id,)
            ).fetchall()
        return [r[0] for r in rows], self._matrix([r[1] for r in rows])

    def size_bytes(self, *, rows: int | None = None) -> int:
        """Vector bytes in SQLite plus the ANN index files; ``rows``: :meth:`count`, when known."""
        return (self.count() if rows is None else rows) * self.dims * 4 + self.file_bytes()

    def file_bytes(self) -> int:
        """The ANN index files beside memory.db: of :meth:`size_bytes`, what the database's size leaves out."""
        return sum(p.stat().st_size for p in (self.ann_path, self._sidecar, self._scopes_path) if p.exists())

    def search(
        self,
        vector: np.ndarray,
        *,
        limit: int,
        project_ids: Sequence[int] | None = None,
        agent: str | None = None,
        member: str | None = None,
    ) -> list[VectorMatch]:
        """Nearest chunks first, each with its vector and its exact cosine similarity. ``member``:
        team memory's filter; local memory holds no member's rows, so none match."""
        if member is not None:
            return []
        query = unit_query(vector)
        scope, params = _scope(project_ids, agent)
        with self._lock:
            ann = self._current_ann()
            watermark = ann.watermark if ann is not None else 0
            rows = self._rows("v.seq > ?", [watermark], scope, params, newest=True)
            if ann is not None:
                rows += self._ann_rows(ann, query, limit, project_ids, agent)
        if not rows:
            return []
        seen: set[int] = set()
        unique: list[tuple[int, str, bytes]] = []
        for row in rows:
            if row[0] not in seen:
                seen.add(row[0])
                unique.append(row)
        return nearest([r[1] for r in unique], self._matrix([r[2] for r in unique]), query, limit)

    # ---- the ANN index ------------------------------------------------------------------------

    def ensure_ann_index(self) -> bool:
        """Build, extend or retrain the ANN index when the table needs one; True when it was written."""
        try:
            import faiss  # noqa: F401
        except ImportError as exc:
            raise_if_interrupted(exc)
            return False
        with self.writing():
            if self._deleted_marker.exists():  # a forget killed before its rows left the index file
                self.drop_deleted_from_ann()
            rows = self.count()
            if rows < ANN_INDEX_MIN_ROWS:
                self._remove_ann()
                return False
            ann = self._current_ann()
            if ann is None or rows > ann.trained_rows * ANN_RETRAIN_GROWTH or self._stale_share(ann) > ANN_STALE_SHARE:
                self._build(rows)
                return True
            newer = self.conn.execute(
                "SELECT COUNT(*) FROM vectors WHERE model = ? AND seq > ?", (self.model_id, ann.watermark)
            ).fetchone()[0]
            if newer > ANN_TAIL_MAX_ROWS:
                self._extend(ann)
                return True
            if self._load_scopes(ann) is None:  # an index written before scope maps existed
                self._write_scopes(0, ann.watermark, None)
                return True
            return False

    def drop_deleted_from_ann(self) -> int:
        """Take the rows deleted since the build out of the ANN index file (a forget's: search already
        skips them, but their quantised vectors would stay on disk until a retrain); how many rows the
        file no longer holds (all of them when too few rows are left to keep an index)."""
        try:
            import faiss  # noqa: F401
        except ImportError as exc:
            raise_if_interrupted(exc)
            return 0
        waits_for = _lock_waits_for.set(write_waits.UNINDEX)  # a forget's upkeep: Ctrl-C skips the wait
        try:
            with self.writing():
                dropped = self._drop_deleted()
                with suppress(FileNotFoundError):
                    self._deleted_marker.unlink()
                return dropped
        except UpkeepSkipped:
            return 0  # still marked (mark_deleting): the next ensure_ann_index takes the rows out
        finally:
            _lock_waits_for.reset(waits_for)

    def _drop_deleted(self) -> int:
        import faiss
        import numpy as np

        ann = self._current_ann()
        if ann is None:
            return 0
        if self.count() < ANN_INDEX_MIN_ROWS:
            dropped = int(ann.index.ntotal)
            self._remove_ann()
            return dropped
        scopes = self._load_scopes(ann)
        live = np.fromiter(
            (
                r[0]
                for r in self.conn.execute(
                    "SELECT seq FROM vectors WHERE model = ? AND seq <= ?", (self.model_id, ann.watermark)
                )
            ),
            dtype=np.int64,
        )
        if scopes is None:  # an index written before scope maps: which rows it holds is not at hand
            dropped = int(ann.index.ntotal) - len(live)
            if dropped:
                self._build(self.count())
            return dropped
        gone = np.setdiff1d(scopes.seqs, live, assume_unique=True)
        if not len(gone):
            return 0
        index = faiss.read_index(str(self.ann_path))  # in memory: the mapped copy is read-only
        index.remove_ids(faiss.IDSelectorBatch(len(gone), faiss.swig_ptr(gone)))
        keep = ~np.isin(scopes.seqs, gone)
        kept = _ScopeMap(scopes.projects[keep], scopes.seqs[keep], scopes.agents[keep], scopes.agent_names)
        self._save_scopes(ann.watermark, kept)
        self._write_ann(index, ann.watermark, ann.trained_rows)
        return len(gone)

    def _ann_state(self) -> str:
        try:
            import faiss  # noqa: F401
        except ImportError as exc:
            raise_if_interrupted(exc)
            return "unavailable"
        return "ready" if self._current_ann() is not None else "missing"

    def _current_ann(self) -> _Ann | None:
        """The index on disk, loaded (memory-mapped) once per change of its sidecar; None without one."""
        try:
            stat = self._sidecar.stat()
        except OSError:
            self._ann = None
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if self._ann is not None and self._ann.stamp == stamp:
            return self._ann
        self._ann = None
        try:
            import faiss

            meta = json.loads(self._sidecar.read_text(encoding="utf-8"))
            if meta.get("model") != self.model_id or meta.get("dims") != self.dims:
                return None
            index = faiss.read_index(str(self.ann_path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
            self._ann = _Ann(index, int(meta["watermark"]), int(meta["trained_rows"]), stamp)
        except (ImportError, OSError, ValueError, KeyError, RuntimeError):
            # A damaged or foreign file is no worse than none: exact scans until the next rebuild.
            return None
        return self._ann

    def _ann_rows(
        self, ann: _Ann, query: np.ndarray, limit: int, project_ids: Sequence[int] | None, agent: str | None
    ) -> list[tuple[int, str, bytes]]:
        """Candidate rows up to the watermark: from the index, or exactly when the scope is small."""
        import faiss
        import numpy as np

        k = 2 * limit + 16  # headroom for rows deleted or replaced since the build
        nlist = ann.index.nlist
        scope, params = _scope(project_ids, agent)
        selector = None
        probes = ANN_PROBES
        if scope:
            allowed = self._scope_members(ann, project_ids, agent, scope, params)
            if len(allowed) <= max(EXACT_SCAN_MAX_ROWS, 4 * limit):
                return self._rows_by_seq(allowed.tolist(), scope, params)
            # A bitmap over seqs: a constant-time membership test for each row faiss scans.
            present = np.zeros(int(allowed[-1]) + 1, dtype=bool)
            present[allowed] = True
            bitmap = np.packbits(present, bitorder="little")
            selector = faiss.IDSelectorBitmap(len(bitmap), faiss.swig_ptr(bitmap))  # bitmap outlives the search
            # A scope holding a share s of the rows leaves about s of each list: probe 1/s as many,
            # up to a share of all lists.
            cap = max(ANN_PROBES, math.ceil(nlist * ANN_SCOPE_MAX_PROBE_SHARE))
            probes = min(cap, math.ceil(ANN_PROBES * ann.index.ntotal / len(allowed)))
        # faiss's stub declares a no-argument __init__, but its Python wrapper sets attributes from keyword
        # arguments; older faiss releases keep the selector alive only when it is passed this way.
        search_params = faiss.SearchParametersIVF(nprobe=min(nlist, probes), sel=selector)  # type: ignore[call-arg]
        _, labels = ann.index.search(query[None, :], min(k, ann.index.ntotal), params=search_params)
        return self._rows_by_seq([int(s) for s in labels[0] if s >= 0], scope, params)

    def _scope_members(
        self, ann: _Ann, project_ids: Sequence[int] | None, agent: str | None, scope: str, params: list[object]
    ) -> np.ndarray:
        """The indexed seqs in a scope, ascending: from the scope map, or from SQLite without one."""
        import numpy as np

        scopes = self._load_scopes(ann)
        if scopes is not None:
            return scopes.members(project_ids, agent)
        rows = self.conn.execute(
            f"SELECT v.seq FROM {_SCOPED_FROM} WHERE v.seq <= ?{scope} ORDER BY v.seq",
            [self.model_id, ann.watermark, *params],
        )
        return np.fromiter((r[0] for r in rows), dtype=np.int64)

    def _load_scopes(self, ann: _Ann) -> _ScopeMap | None:
        """The scope map of ``ann``, read once; None when it is missing or belongs to another build."""
        import numpy as np

        if not ann.scopes_read:
            ann.scopes_read = True
            try:
                with np.load(self._scopes_path, allow_pickle=False) as data:
                    if int(data["watermark"]) == ann.watermark:
                        ann.scopes = _ScopeMap(
                            data["projects"], data["seqs"], data["agents"], tuple(str(a) for a in data["agent_names"])
                        )
            except (OSError, ValueError, KeyError):
                ann.scopes = None  # searched through SQLite until the next ensure_ann_index writes it
        return ann.scopes

    def _write_scopes(self, after: int, upto: int, previous: _ScopeMap | None) -> None:
        """Write the scope map of rows up to ``upto``: ``previous`` (rows up to ``after``) plus newer rows."""
        import numpy as np

        rows = self.conn.execute(
            "SELECT v.seq, c.project_id, c.agent FROM vectors v CROSS JOIN chunks c ON c.id = v.chunk_id"
            " WHERE v.model = ? AND v.seq > ? AND v.seq <= ?",
            (self.model_id, after, upto),
        ).fetchall()
        names = list(previous.agent_names) if previous is not None else []
        codes = {name: i for i, name in enumerate(names)}
        seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        projects = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        agents = np.fromiter((codes.setdefault(r[2], len(codes)) for r in rows), dtype=np.int32, count=len(rows))
        names = list(codes)
        if previous is not None:
            seqs = np.concatenate([previous.seqs, seqs])
            projects = np.concatenate([previous.projects, projects])
            agents = np.concatenate([previous.agents, agents])
        order = np.lexsort((seqs, projects))
        self._save_scopes(upto, _ScopeMap(projects[order], seqs[order], agents[order], tuple(names)))

    def _save_scopes(self, watermark: int, scopes: _ScopeMap) -> None:
        import numpy as np

        tmp = self._scopes_path.with_suffix(".tmp.npz")
        names = list(scopes.agent_names)
        np.savez(
            tmp,
            watermark=np.int64(watermark),
            projects=scopes.projects,
            seqs=scopes.seqs,
            agents=scopes.agents,
            agent_names=np.asarray(names, dtype=str) if names else np.zeros(0, dtype="<U1"),
        )
        tmp.chmod(0o600)
        os.replace(tmp, self._scopes_path)
        if self._ann is not None:
            self._ann.scopes_read = False  # read the new map on the next filtered search

    def _build(self, rows: int) -> None:
        """Train an IVF index on a sample spread over the whole table, then add every row in batches."""
        import faiss

        watermark = self.conn.execute("SELECT MAX(seq) FROM vectors WHERE model = ?", (self.model_id,)).fetchone()[0]
        # 2·√rows lists of ~√rows/2 vectors; k-means trains on 40 points a list (faiss wants >= 39),
        # so training stays seconds even at 1M rows.
        nlist = max(1, min(int(2 * math.sqrt(rows)), rows // 40))
        stride = max(1, rows // (nlist * 40))
        sample = self._matrix(
            [
                r[0]
                for r in self.conn.execute(
                    "SELECT vector FROM vectors WHERE model = ? AND seq <= ? AND seq % ? = 0",
                    (self.model_id, watermark, stride),
                )
            ]
        )
        index = faiss.index_factory(self.dims, f"IVF{nlist},SQ8", faiss.METRIC_INNER_PRODUCT)
        index.train(sample)
        self._add_rows(index, 0, watermark)
        self._write_scopes(0, watermark, None)
        self._write_ann(index, watermark, rows)

    def _extend(self, ann: _Ann) -> None:
        import faiss

        index = faiss.read_index(str(self.ann_path))  # in memory: the mapped copy is read-only
        watermark = self.conn.execute("SELECT MAX(seq) FROM vectors WHERE model = ?", (self.model_id,)).fetchone()[0]
        self._add_rows(index, ann.watermark, watermark)
        previous = self._load_scopes(ann)  # none (lost, or a run killed after writing the next one): all rows'
        self._write_scopes(ann.watermark if previous is not None else 0, watermark, previous)
        self._write_ann(index, watermark, ann.trained_rows)

    def _add_rows(self, index: Any, after: int, upto: int) -> None:
        import numpy as np

        while after < upto:
            batch = self.conn.execute(
                "SELECT seq, vector FROM vectors WHERE model = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
                (self.model_id, after, upto, _BUILD_BATCH),
            ).fetchall()
            if not batch:
                break
            index.add_with_ids(self._matrix([r[1] for r in batch]), np.asarray([r[0] for r in batch], np.int64))
            after = batch[-1][0]

    def _write_ann(self, index: Any, watermark: int, trained_rows: int) -> None:
        """Index first, sidecar second, each by atomic rename, the old sidecar removed before the index
        is replaced: a sidecar only ever describes the index file beside it.

        Trigger: a process killed between the two renames (SIGKILL, a power cut). Why: the new index
        beside the old sidecar looked like the old index with its newer rows not yet added, and the
        next run added them again (an extended index held 2,500 rows twice). Outcome: no sidecar, so
        searches scan exactly until the next run builds the index afresh."""
        import faiss

        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.ann_path.with_suffix(".faiss.tmp")
        faiss.write_index(index, str(tmp))
        tmp.chmod(0o600)
        with suppress(FileNotFoundError):
            self._sidecar.unlink()
        os.replace(tmp, self.ann_path)
        meta = {
            "model": self.model_id,
            "dims": self.dims,
            "watermark": watermark,
            "trained_rows": trained_rows,
            "rows": int(index.ntotal),
        }
        tmp_meta = self._sidecar.with_suffix(".json.tmp")
        tmp_meta.write_text(json.dumps(meta), encoding="utf-8")
        tmp_meta.chmod(0o600)
        os.replace(tmp_meta, self._sidecar)
        self._ann = None

    def _remove_ann(self) -> None:
        """Every file of the index, a killed write's temporary ones too (a later write would replace them)."""
        temporary = (".faiss.tmp", ".faiss.json.tmp", ".scopes.tmp.npz")
        for path in (
            self._sidecar,
            self.ann_path,
            self._scopes_path,
            self._deleted_marker,
            *(self.folder / f"{self.table_name}{suffix}" for suffix in temporary),
        ):
            with suppress(FileNotFoundError):
                path.unlink()
        self._ann = None

    def _stale_share(self, ann: _Ann) -> float:
        live = self.conn.execute(
            "SELECT COUNT(*) FROM vectors WHERE model = ? AND seq <= ?", (self.model_id, ann.watermark)
        ).fetchone()[0]
        total = int(ann.index.ntotal)
        return (total - live) / total if total else 0.0

    # ---- helpers ------------------------------------------------------------------------------

    def _rows(
        self, condition: str, values: list[object], scope: str, params: list[object], *, newest: bool = False
    ) -> list[tuple[int, str, bytes]]:
        """Rows matching ``condition`` in a scope. ``newest``: the condition picks a few recent rows
        (the tail past the index), so SQLite walks those and checks each one's chunk, instead of
        walking the scope's chunks."""
        if not scope:
            source = "vectors v WHERE v.model = ? AND"
        elif newest:
            source = "vectors v CROSS JOIN chunks c ON c.id = v.chunk_id WHERE v.model = ? AND"
        else:
            source = f"{_SCOPED_FROM} WHERE"
        return [
            tuple(r)
            for r in self.conn.execute(
                f"SELECT v.seq, v.chunk_id, v.vector FROM {source} {condition}{scope}",
                [self.model_id, *values, *params],
            )
        ]

    def _rows_by_seq(self, seqs: Sequence[int], scope: str, params: list[object]) -> list[tuple[int, str, bytes]]:
        """The rows of ``seqs`` still present, with the scope checked against their chunks again."""
        source = "vectors v CROSS JOIN chunks c ON c.id = v.chunk_id" if scope else "vectors v"
        out: list[tuple[int, str, bytes]] = []
        for batch in common.batches(seqs):
            marks = ",".join("?" * len(batch))
            out.extend(
                tuple(r)
                for r in self.conn.execute(
                    f"SELECT v.seq, v.chunk_id, v.vector FROM {source} WHERE v.model = ? AND v.seq IN ({marks}){scope}",
                    [self.model_id, *batch, *params],
                )
            )
        return out

    def _fetch(self, column: str, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for batch in common.batches(keys):
                marks = ",".join("?" * len(batch))
                rows = self.conn.execute(
                    f"SELECT {column}, vector FROM vectors WHERE model = ? AND {column} IN ({marks})",
                    [self.model_id, *batch],
                ).fetchall()
                first_by_key([r[0] for r in rows], self._matrix([r[1] for r in rows]), out)
        return out

    def _blob(self, vector: Any) -> bytes:
        import numpy as np

        array = np.asarray(vector, dtype="<f4")
        if array.shape != (self.dims,):
            raise ValueError(f"a {self.model_id} vector has {self.dims} dimensions, not shape {array.shape}")
        return array.tobytes()

    def _matrix(self, blobs: Sequence[bytes]) -> np.ndarray:
        import numpy as np

        if not blobs:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), self.dims).astype(np.float32)


def _scope(project_ids: Sequence[int] | None, agent: str | None) -> tuple[str, list[object]]:
    """SQL over chunks aliased ``c`` restricting a search to projects and an agent."""
    clause = ""
    params: list[object] = []
    if project_ids:
        clause += f" AND c.project_id IN ({','.join('?' * len(project_ids))})"
        params.extend(int(p) for p in project_ids)
    if agent:
        clause += " AND c.agent = ?"
        params.append(agent)
    return clause, params


def table_name(model_id: str) -> str:
    """The name a model's vectors go by (index files, index names): its id in ``[A-Za-z0-9_]``."""
    return "chunks_" + re.sub(r"[^A-Za-z0-9_]", "_", model_id)


class HealthCache:
    """An index's last :class:`VectorHealth`, trusted for :data:`HEALTH_TTL_S`; writes :meth:`clear` it."""

    def __init__(self) -> None:
        self._last: tuple[float, VectorHealth] | None = None

    def clear(self) -> None:
        self._last = None

    def get(self, fresh: bool, measure: Callable[[], VectorHealth]) -> VectorHealth:
        """The cached health, or ``measure()`` when ``fresh``, when none is cached or it is too old."""
        now = time.monotonic()
        if not fresh and self._last is not None and now - self._last[0] < HEALTH_TTL_S:
            return self._last[1]
        health = measure()
        self._last = (now, health)
        return health


class Nesting:
    """Nested ``with`` blocks of one holder (under its thread lock) of which only the outermost takes
    a cross-process lock: a writer calling another writer shares the lock instead of waiting on itself."""

    def __init__(self) -> None:
        self.depth = 0

    @contextmanager
    def outermost(self, take: Callable[[], AbstractContextManager[None]]) -> Iterator[None]:
        if self.depth:
            self.depth += 1
            try:
                yield
            finally:
                self.depth -= 1
            return
        with take():
            self.depth = 1
            try:
                yield
            finally:
                self.depth = 0


def unit_query(vector: Any) -> np.ndarray:
    """A query vector as float32 of length 1 (a zero vector stays zero)."""
    import numpy as np

    query = np.asarray(vector, dtype=np.float32)
    return query / (np.linalg.norm(query) or 1.0)


def nearest(ids: Sequence[str], matrix: np.ndarray, query: np.ndarray, limit: int) -> list[VectorMatch]:
    """The ``limit`` rows of ``matrix`` (unit vectors, ``ids`` in order) most like the unit ``query``,
    best first, each with its exact cosine similarity; ties keep their order."""
    import numpy as np

    similarities = matrix @ query
    top = np.argsort(-similarities, kind="stable")[:limit]
    return [VectorMatch(ids[i], float(similarities[i]), matrix[i]) for i in top]


def first_by_key(keys: Sequence[str], matrix: np.ndarray, out: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Add each row of ``matrix`` to ``out`` under its key unless the key is there (several chunks can
    share one content hash: any one of their vectors serves)."""
    for key, row in zip(keys, matrix, strict=True):
        out.setdefault(key, row)
    return out
