"""A SQLite benchmark store copied into a PostgreSQL database with COPY, then indexed once.

The PostgreSQL runs of ``search_latency.py`` measure the very chunks, sessions, edges and vectors
the SQLite runs measure: the built SQLite store (``--store-dir``'s ``<size>`` or ``scale-<size>``
folder) is streamed table by table into a new database of the team schema (the product's own
migrations), every row tagged with one member. Loading row by row through ``save_session`` would
take most of an hour at 1M chunks on two cores; COPY takes minutes. The keyword index (GIN) and the
vector index (HNSW, made by :meth:`PgVectorIndex.ensure_ann_index`, as the product makes it) are
built after the rows, as a bulk load should, with ``maintenance_work_mem`` large enough for the
HNSW graph to be built in memory (pgvector warns and slows down otherwise).

Run as ``python benchmarks/_pgcopy.py SQLITE_DB URL`` (prints ``RESULT {json}``): in its own process,
so its peak memory is the copy's alone.
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

MEMBER = "bench"
BUILT_KEY = "bench_built"  # meta row written last: a database without it is a half-done copy
MODEL = "all-minilm-l6-v2"
# Enough for pgvector to build a 1M x 384 HNSW graph in memory (~2 GB); the server's default is 64 MB.
MAINTENANCE_WORK_MEM = "3GB"
_BATCH = 20_000
# (table, serial column whose sequence must follow the copied ids, or None)
_TABLES = (
    ("projects", "id"),
    ("project_aliases", None),
    ("sessions", None),
    ("chunks", "rowid"),
    ("edges", "id"),
    ("vectors", "seq"),
)
_VECTOR_TYPES = {"seq": "bigint", "chunk_id": "text", "model": "text", "content_hash": "text", "embedding": "vector"}
_RENAMED = {"vector": "embedding"}  # SQLite's column name -> the team schema's
_GIN = "CREATE INDEX chunks_tsv ON chunks USING gin(tsv)"  # as migration m001 makes it


def copied_store(database: Callable[[str], tuple[str, bool]], name: str, sqlite_db: Path) -> tuple[str, dict[str, Any]]:
    """(URL, how it was built) of database ``name`` holding a copy of ``sqlite_db``: found when an
    earlier run finished it, else (re)made, in a child process (its peak memory is the copy's)."""
    import _postgres
    import psycopg

    url, fresh = database(name)
    if not fresh:
        with psycopg.connect(url) as conn:
            done = (
                conn.execute("SELECT to_regclass('meta')").fetchone()[0]
                and conn.execute("SELECT value FROM meta WHERE key = %s", (BUILT_KEY,)).fetchone()
            )
        if done:
            return url, {**json.loads(done[0]), "reused": True}
        _postgres.drop(url)
        url, fresh = database(name)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    print(f"  copying {sqlite_db} into PostgreSQL database {name} ...", flush=True)
    run = subprocess.run(
        [sys.executable, __file__, str(sqlite_db), url], env=env, stdout=subprocess.PIPE, text=True, check=True
    )
    return url, json.loads(next(x for x in run.stdout.splitlines() if x.startswith("RESULT "))[7:])


def copy_store(sqlite_db: Path, url: str) -> dict[str, Any]:
    """Copy every row of the SQLite store at ``sqlite_db`` into the empty database at ``url``."""
    import numpy as np
    from pgvector.psycopg import register_vector
    from psycopg.conninfo import make_conninfo

    from causantic.store.postgres.connection import connect
    from causantic.store.postgres.migrations import migrate
    from causantic.store.postgres.vectors import PgVectorIndex

    source = sqlite3.connect(f"file:{sqlite_db}?mode=ro", uri=True)
    conn = connect(url)
    migrate(conn)
    register_vector(conn)
    out: dict[str, Any] = {"rows": {}}
    started = time.perf_counter()
    conn.execute("DROP INDEX chunks_tsv")  # rebuilt once after the rows: faster than row by row
    for table, serial in _TABLES:
        target = {
            r[0]
            for r in conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,))
        }
        selected = [r[1] for r in source.execute(f"PRAGMA table_info({table})") if _RENAMED.get(r[1], r[1]) in target]
        columns = [_RENAMED.get(c, c) for c in selected]
        extra = ["member"] if "member" in target else []
        t = time.perf_counter()
        n = 0
        binary = table == "vectors"  # 1,536 bytes a vector instead of ~4 kB of text to format and parse
        with conn.transaction(), conn.cursor() as cur:
            fmt = " WITH (FORMAT BINARY)" if binary else ""
            with cur.copy(f"COPY {table} ({', '.join(columns + extra)}) FROM STDIN{fmt}") as copy:
                if binary:
                    copy.set_types([_VECTOR_TYPES[c] for c in columns])
                rows = source.execute(f"SELECT {', '.join(selected)} FROM {table} ORDER BY rowid")
                while batch := rows.fetchmany(_BATCH):
                    for row in batch:
                        values = list(row)
                        if table == "vectors":
                            at = columns.index("embedding")
                            values[at] = np.frombuffer(values[at], dtype="<f4")
                        if table == "projects":
                            at = columns.index("needs_relink")
                            values[at] = bool(values[at])
                        copy.write_row(values + [MEMBER] * len(extra))
                    n += len(batch)
            if serial:
                cur.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{serial}'),"
                    f" COALESCE(MAX({serial}), 0) + 1, false) FROM {table}"
                )
        out["rows"][table] = n
        print(f"  copied {n:,} {table} rows in {time.perf_counter() - t:.1f} s", flush=True)
    out["rows_s"] = round(time.perf_counter() - started, 1)
    t = time.perf_counter()
    conn.execute(f"SET maintenance_work_mem = '{MAINTENANCE_WORK_MEM}'")
    conn.execute(_GIN)
    out["gin_build_s"] = round(time.perf_counter() - t, 1)
    print(f"  keyword index (GIN) in {out['gin_build_s']} s", flush=True)
    dims = int(conn.execute("SELECT vector_dims(embedding) FROM vectors LIMIT 1").fetchone()[0])
    t = time.perf_counter()
    # Opening the index makes it (ensure_ann_index), on a connection with the larger working memory.
    index = PgVectorIndex(make_conninfo(url, options=f"-c maintenance_work_mem={MAINTENANCE_WORK_MEM}"), MODEL, dims)
    index.count()
    out["ann_build_s"] = round(time.perf_counter() - t, 1)
    print(f"  vector index (HNSW) in {out['ann_build_s']} s", flush=True)
    index.close()
    conn.execute("VACUUM ANALYZE")  # fresh planner statistics and visibility map, as autovacuum would leave
    out["db_mb"] = round(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0] / 1e6, 1)
    out["copy_peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    conn.execute("INSERT INTO meta(key, value) VALUES (%s, %s)", (BUILT_KEY, json.dumps(out)))
    conn.close()
    source.close()
    return out


if __name__ == "__main__":
    print("RESULT " + json.dumps(copy_store(Path(sys.argv[1]), sys.argv[2])), flush=True)
