"""PgVectorIndex: one model's vectors in pgvector, the team-memory twin of
:class:`causantic.store.vectors.VectorIndex` (same methods, same answers).

Vectors live in table ``vectors`` beside their chunks (deleted with them) as pgvector values; models
differ in dimensions, so each model gets its own partial HNSW index over the value cast to its
dimensions (cosine distance). The server keeps the index up to date on every write: there is no
derived file to build or lose. A search asks the index for candidates (within a project or agent:
see :meth:`PgVectorIndex._in_scope`), then computes every similarity exactly from the vectors read
back, as SQLite's does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from causantic.store.base import pyformat
from causantic.store.postgres import keyword
from causantic.store.postgres.connection import connect, failure, psycopg_module
from causantic.store.postgres.team import migrated, owner_named
from causantic.store.records import VectorHealth, VectorMatch, VectorRecord
from causantic.store.sqlite import raising_store_errors
from causantic.store.vectors import (
    HealthCache,
    Nesting,
    VectorReads,
    first_by_key,
    nearest,
    table_name,
    unit_query,
)

if TYPE_CHECKING:
    import numpy as np

# Candidates the HNSW walk keeps (pgvector's hnsw.ef_search, default 40): at least twice the rows asked.
_MIN_EF_SEARCH = 64
_MAX_EF_SEARCH = 1000


@raising_store_errors(lambda index: index.url, psycopg_module().Error, failure)
class PgVectorIndex(VectorReads):
    """One model's vectors in the team database; its own connection, thread-safe within a process."""

    def __init__(self, url: str, model_id: str, dims: int, *, connect_timeout: int | None = None) -> None:
        self.url = url
        self.connect_timeout = connect_timeout
        self.model_id = model_id
        self.dims = dims
        self.table_name = table_name(model_id)
        self._conn: Any = None
        self._lock = threading.RLock()
        self._writes = Nesting()
        self._health = HealthCache()

    @property
    def conn(self) -> Any:
        if self._conn is None:
            from pgvector.psycopg import register_vector

            conn = connect(self.url, connect_timeout=self.connect_timeout)
            try:
                migrated(conn, self.url)  # a change members do without leaves vectors as they were
            except BaseException:
                conn.close()
                raise
            register_vector(conn)
            self._conn = conn
            self.ensure_ann_index()
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @property
    def _model(self) -> Any:
        from psycopg import sql

        return sql.Literal(self.model_id)

    @property
    def _cast(self) -> Any:
        from psycopg import sql

        return sql.SQL(f"vector({int(self.dims)})")

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold this model's embedding lock across every member's processes (a session-level advisory
        lock), so two never embed the same chunks at once; nested calls share it."""
        with self._lock, self._writes.outermost(self._write_lock):
            yield

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        key = f"causantic-embed:{self.model_id}"
        self.conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
        try:
            yield
        finally:
            self.conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))

    # ---- writes -------------------------------------------------------------------------------

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Store vectors; a chunk deleted meanwhile gets none (its row would have no chunk).

        The chunks' projects are locked first, as every transaction writing rows of a project's
        chunks does (:meth:`causantic.store.postgres.store.PostgresStore.lock_projects`): beside a
        forget of the same chunks, the check that a chunk exists saw it before the forget committed,
        so the row then broke the foreign key, or the two deadlocked (each held chunk rows the other
        needed). Now a forget under way finishes first, and its chunks get no vector."""
        if not records:
            return
        rows = [(r.chunk_id, self.model_id, r.content_hash, self._vector(r.vector), r.chunk_id) for r in records]
        with self._lock, self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute(
                "SELECT id FROM projects WHERE id IN (SELECT project_id FROM chunks WHERE id = ANY(%s))"
                " ORDER BY id FOR NO KEY UPDATE",
                ([r.chunk_id for r in records],),
            )
            cur.executemany(
                "INSERT INTO vectors(chunk_id, model, content_hash, embedding)"
                " SELECT %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM chunks WHERE id = %s)"
                " ON CONFLICT (chunk_id, model) DO UPDATE SET content_hash = excluded.content_hash,"
                " embedding = excluded.embedding",
                rows,
            )
        self._health.clear()

    def mark_deleting(self) -> None:
        """Nothing to mark: no index file is kept outside the database."""

    def delete(self, chunk_ids: Iterable[str]) -> int:
        with self._lock:
            removed = self.conn.execute(
                "DELETE FROM vectors WHERE model = %s AND chunk_id = ANY(%s)", (self.model_id, list(chunk_ids))
            ).rowcount
        self._health.clear()
        return int(removed)

    def drop(self) -> None:
        with self.writing():
            self.conn.execute("DELETE FROM vectors WHERE model = %s", (self.model_id,))
        self._health.clear()

    # ---- reads --------------------------------------------------------------------------------

    def _measure_health(self) -> VectorHealth:
        with self._lock:
            chunks = int(self._value("SELECT COUNT(*) FROM chunks"))
            vectors = self.count()
            if self.has_ann_index():  # the server keeps it current on each write
                return VectorHealth(chunks, vectors, "ready")
            if not vectors:
                return VectorHealth(chunks, vectors, "not needed")
            # Only the tables' owner may index them: a member's embedding cannot make it.
            return VectorHealth(
                chunks,
                vectors,
                "missing",
                f"the team database has no vector index (HNSW) for {self.model_id}: vector search scans every vector"
                f" until {owner_named(self.conn)} runs `causantic team init`",
            )

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        with self._lock:
            rows = self.conn.execute(
                "SELECT chunk_id, embedding FROM vectors WHERE model = %s ORDER BY seq", (self.model_id,), binary=True
            ).fetchall()
        return [r[0] for r in rows], self._matrix([r[1] for r in rows])

    def drop_deleted_from_ann(self) -> int:
        """Nothing kept outside the database: pgvector's index loses a deleted row with its table."""
        return 0

    def size_bytes(self, *, rows: int | None = None) -> int:
        """Vector bytes, and the HNSW index's; ``rows``: :meth:`count`, when known."""
        from psycopg import sql

        with self._lock:
            index = self._value(
                sql.SQL("SELECT COALESCE(pg_relation_size(to_regclass({})), 0)").format(sql.Literal(self._index_name))
            )
        return (self.count() if rows is None else rows) * self.dims * 4 + int(index)

    def file_bytes(self) -> int:
        """Nothing beside the database: the vectors and their HNSW index are part of its size."""
        return 0

    def search(
        self,
        vector: np.ndarray,
        *,
        limit: int,
        project_ids: Sequence[int] | None = None,
        agent: str | None = None,
        member: str | None = None,
    ) -> list[VectorMatch]:
        """Nearest chunks first, each with its vector and its exact cosine similarity."""

        query = unit_query(vector)
        k = 2 * limit + 16
        with self._lock:
            scoped = project_ids or agent or member
            rows = self._in_scope(query, k, limit, project_ids, agent, member) if scoped else self._walk(query, k)
        if not rows:
            return []
        return nearest([r[0] for r in rows], self._matrix([r[1] for r in rows]), query, limit)

    def _walk(self, query: np.ndarray, k: int, scope: tuple[str, list[Any]] | None = None) -> list[Any]:
        """The ``k`` nearest rows the HNSW index finds; within ``scope`` (a filter over vectors ``v``,
        :func:`_vector_scope`): those among the index's nearest :data:`_MAX_EF_SEARCH` of the whole store."""
        from psycopg import sql

        nearest_first = sql.SQL(
            "SELECT chunk_id, embedding, project_id, embedding::{cast} <=> %s::{cast} AS d FROM vectors"
            " WHERE model = {model} ORDER BY embedding::{cast} <=> %s::{cast} LIMIT %s"
        ).format(model=self._model, cast=self._cast)
        vector = self._vector(query)
        if scope is None:
            statement, params, ef = nearest_first, [vector, vector, k], min(_MAX_EF_SEARCH, max(_MIN_EF_SEARCH, k))
        else:
            statement = sql.SQL(
                "SELECT v.chunk_id, v.embedding FROM ({}) v WHERE TRUE" + scope[0] + " ORDER BY v.d LIMIT %s"
            ).format(nearest_first)
            params, ef = [vector, vector, _MAX_EF_SEARCH, *scope[1], k], _MAX_EF_SEARCH
        with self.conn.transaction():
            self.conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef)))
            return list(self.conn.execute(statement, params, binary=True).fetchall())

    def _in_scope(
        self,
        query: np.ndarray,
        k: int,
        limit: int,
        project_ids: Sequence[int] | None,
        agent: str | None,
        member: str | None,
    ) -> list[Any]:
        """The ``k`` nearest rows within a scope.

        pgvector 0.6 applies a filter after the HNSW walk, which keeps at most ``hnsw.ef_search``
        (≤ 1,000) rows, so a query ordered by the index and filtered returned a handful of rows
        for a project holding a tenth of the store. So: the whole store's nearest 1,000 from the
        index, then the scope; when at least ``limit`` of them are in it, its nearest are among
        them (any closer row of the scope would be among the 1,000 too). A smaller scope (or one
        too small for the 1,000 to hold ``limit`` of its rows) is scanned exactly, its distances
        computed after the filter (an expression the index does not cover, so the planner cannot
        walk the index instead). Vectors carry their chunk's project (migration m004), so that scan
        reads the project's vectors by the (model, project_id) index, not each chunk's vector by id."""
        from psycopg import sql

        # The walk is skipped when the scope's expected share of its 1,000 rows is under ``limit``
        # (most projects of a large store), where it would only delay the exact scan. The store's vector count is the
        # planner's estimate (free; -1 before the first ANALYZE: walk then).
        clause, params = keyword.scope_sql(project_ids, agent, member)
        scope = _vector_scope(project_ids, agent, member)
        in_scope, stored = self.conn.execute(
            f"SELECT (SELECT count(*) FROM chunks c WHERE TRUE{clause}),"
            " (SELECT reltuples FROM pg_class WHERE oid = 'vectors'::regclass)",
            params,
        ).fetchone()
        if stored <= 0 or in_scope * _MAX_EF_SEARCH >= limit * stored:
            rows = self._walk(query, k, scope)
            if len(rows) >= limit:
                return rows
        statement = sql.SQL(
            "SELECT v.chunk_id, v.embedding FROM vectors v WHERE v.model = {model}"
            + scope[0]
            + " ORDER BY v.embedding <=> %s::vector LIMIT %s"
        ).format(model=self._model)
        return list(self.conn.execute(statement, [*scope[1], self._vector(query), k], binary=True).fetchall())

    # ---- the HNSW index -----------------------------------------------------------------------

    @property
    def _index_name(self) -> str:
        return f"vectors_hnsw_{self.table_name}"[:63]

    def ensure_ann_index(self) -> bool:
        """Create this model's HNSW index when it is missing; True when it was made. The server keeps
        it current on every write, so there is nothing to extend or retrain."""
        from psycopg import sql

        with self._lock, self.conn.transaction():
            # One member creates it; the others wait here, then find it.
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self._index_name,))
            if self._value("SELECT to_regclass(%s)", (self._index_name,)) is not None:
                return False
            if not self._value("SELECT pg_has_role(tableowner, 'MEMBER') FROM pg_tables WHERE tablename = 'vectors'"):
                # Only the tables' owner may index them: a member searches exactly until `team init`
                # or the owner's first embedding run creates it.
                return False
            self.conn.execute(
                sql.SQL(
                    "CREATE INDEX {name} ON vectors USING hnsw ((embedding::{cast}) vector_cosine_ops)"
                    " WHERE model = {model}"
                ).format(name=sql.Identifier(self._index_name), cast=self._cast, model=self._model)
            )
            return True

    def has_ann_index(self) -> bool:
        """Whether this model's HNSW index exists (a member's role may not make it: see :func:`index_models`)."""
        with self._lock:
            return self._value("SELECT to_regclass(%s)", (self._index_name,)) is not None

    # ---- helpers ------------------------------------------------------------------------------

    def _query(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(pyformat(sql), params)

    def _value(self, statement: Any, params: Sequence[Any] = ()) -> Any:
        row = self.conn.execute(statement, params).fetchone()
        return row[0] if row else None

    def _fetch(self, column: str, keys: list[str]) -> dict[str, np.ndarray]:
        assert column in ("chunk_id", "content_hash")
        with self._lock:
            rows = self.conn.execute(
                f"SELECT {column}, embedding FROM vectors WHERE model = %s AND {column} = ANY(%s)",
                (self.model_id, keys),
                binary=True,  # a vector as 1,536 bytes, not 4 kB of text parsed in Python
            ).fetchall()
        return first_by_key([r[0] for r in rows], self._matrix([r[1] for r in rows]), {})

    def _vector(self, vector: Any) -> Any:
        import numpy as np

        array = np.asarray(vector, dtype=np.float32)
        if array.shape != (self.dims,):
            raise ValueError(f"a {self.model_id} vector has {self.dims} dimensions, not shape {array.shape}")
        return array

    def _matrix(self, values: Sequence[Any]) -> np.ndarray:
        import numpy as np

        if not values:
            return np.zeros((0, self.dims), dtype=np.float32)
        # pgvector's loader gives Vector values (0.4+) or arrays (older); both become float32 rows.
        return np.stack([np.asarray(getattr(v, "to_numpy", lambda v=v: v)(), dtype=np.float32) for v in values])


def _vector_scope(project_ids: Sequence[int] | None, agent: str | None, member: str | None) -> tuple[str, list[Any]]:
    """SQL over vectors aliased ``v`` restricting a search to projects (the vector's own column, see
    migration m004), an agent and a member (their chunk's)."""
    clause = ""
    params: list[Any] = []
    if project_ids:
        clause += " AND v.project_id = ANY(%s)"
        params.append([int(p) for p in project_ids])
    if agent or member:
        chunk_clause, chunk_params = keyword.scope_sql(None, agent, member)
        clause += f" AND EXISTS (SELECT 1 FROM chunks c WHERE c.id = v.chunk_id{chunk_clause})"
        params += chunk_params
    return clause, params


def index_models(url: str, configured: tuple[str, int], *, connect_timeout: int | None = None) -> list[str]:
    """Create the HNSW index of the ``configured`` model (id, dimensions) and of every model with
    vectors in the team database, where missing; the models indexed now. For `causantic team init`,
    run by the tables' owner: only a table's owner may index it, so the vectors members embed were
    searched by an exact scan of every vector until the owner's own embedding run made the index
    (an owner who only administers the database never made it)."""
    with connect(url, connect_timeout=connect_timeout) as conn:
        models = {str(row[0]) for row in conn.execute("SELECT model FROM vectors GROUP BY model")}
        had = {str(row[0]) for row in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'vectors'")}
        dims = {model: _dims(conn, model) for model in models}
    dims.setdefault(*configured)
    made: list[str] = []
    for model, size in sorted(dims.items()):
        index = PgVectorIndex(url, model, size, connect_timeout=connect_timeout)
        try:
            index.ensure_ann_index()  # (opening it may have made it already)
            if index._index_name not in had and index.has_ann_index():
                made.append(model)
        finally:
            index.close()
    return made


def _dims(conn: Any, model: str) -> int:
    """How many dimensions ``model``'s stored vectors have."""
    row = conn.execute("SELECT vector_dims(embedding) FROM vectors WHERE model = %s LIMIT 1", (model,)).fetchone()
    return int(row[0])
