"""Listing projects at scale: ``list-projects`` and the dashboard's Projects page count each project's
chunks and sessions (``MemoryStore.project_summaries``), before and after SQLite m014 widened the
project/time index so the count reads the index alone; with ``--postgres``, team memory's listing
(``PostgresStore.project_summaries``: the totals, then each project's sessions by member) before and
after PostgreSQL's m009 did the same there.

Usage::

    PYTHONPATH=src python benchmarks/project_listing.py [--store DIR] [--rounds 15] [--postgres [--keep DIR]]

``--store`` is a store's folder (``memory.db`` in it; default the 100k-chunk store
``benchmarks/search_latency.py --store-dir`` keeps). It is copied twice into a temporary folder:
one copy opened by this code (every migration, m014 included), the other given back the index as
it was before m014. The two are asked in turn, so both see the same machine load; the figure is
each one's median and their ratio.

With ``--postgres`` the store is copied into a PostgreSQL database instead (``_pgcopy.py``, every
migration of this code; the server as ``_postgres.py`` says: ``CAUSANTIC_BENCH_POSTGRES_URL``, else
a local one from pgserver; minutes at 100k chunks), and that database into a second one given back
the index and totals statement as they were before m009; both vacuumed, as autovacuum leaves them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from causantic.store import common
from causantic.store.memory import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parent))

BEFORE_M014 = (
    "DROP INDEX chunks_project_time",
    "CREATE INDEX chunks_project_time ON chunks(project_id, start_time)",
)
BEFORE_M009 = (*BEFORE_M014, "VACUUM ANALYZE chunks")
# The totals as they were counted before m009: COUNT(c.rowid) reads a column no index carries.
BEFORE_M009_TOTALS = common.PROJECT_TOTALS_SQL.replace("COUNT(*) AS chunks", "COUNT(c.rowid) AS chunks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path("/work/bench-stores/100000"))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--postgres", action="store_true", help="measure team memory's listing (m009)")
    parser.add_argument(
        "--keep", type=Path, help="--postgres: keep the copy (a server in DIR, as _postgres.py keeps one) and reuse it"
    )
    args = parser.parse_args()
    if args.postgres:
        postgres(args.store / "memory.db", args.rounds, args.keep)
        return
    with tempfile.TemporaryDirectory(prefix="causantic-listing-") as tmp:
        stores: dict[str, MemoryStore] = {}
        for name in ("before m014", "m014"):
            db = Path(tmp) / name.replace(" ", "-") / "memory.db"
            db.parent.mkdir()
            shutil.copyfile(args.store / "memory.db", db)
            MemoryStore(db).close()  # every migration
            if name == "before m014":
                with sqlite3.connect(db) as conn:
                    for statement in BEFORE_M014:
                        conn.execute(statement)
            stores[name] = MemoryStore(db)
        times: dict[str, list[float]] = {name: [] for name in stores}
        for _ in range(args.rounds):
            for name, store in stores.items():
                start = time.perf_counter()
                listed = store.project_summaries()
                times[name].append((time.perf_counter() - start) * 1000)
        chunks = sum(p.chunks for p in listed)
        print(f"{len(listed)} projects, {chunks:,} chunks; {args.rounds} listings each, asked in turn")
        for name, spent in times.items():
            print(f"  {name:<12} p50 {statistics.median(spent):7.1f} ms   max {max(spent):7.1f} ms")
        ratio = statistics.median(times["m014"]) / statistics.median(times["before m014"])
        print(f"m014 / before: x{ratio:.3f}   load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        for store in stores.values():
            store.close()


def postgres(sqlite_db: Path, rounds: int, keep: Path | None) -> None:
    import _pgcopy
    import _postgres
    import psycopg

    from causantic.store.postgres.store import PostgresStore

    with _postgres.databases(keep) as database:
        url, _ = _pgcopy.copied_store(database, "listing", sqlite_db)
        name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
        before_url = psycopg.conninfo.make_conninfo(url, dbname=f"{name}_before")
        with psycopg.connect(psycopg.conninfo.make_conninfo(url, dbname="postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}_before" TEMPLATE "{name}"')
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE chunks")
            with psycopg.connect(before_url, autocommit=True) as conn:
                for statement in BEFORE_M009:  # m009 stays recorded: opening the store keeps this index
                    conn.execute(statement)
            stores = {
                "before m009": PostgresStore(before_url, member="bench"),
                "m009": PostgresStore(url, member="bench"),
            }
            times: dict[str, list[float]] = {name: [] for name in stores}
            totals = common.PROJECT_TOTALS_SQL
            for _ in range(rounds):
                for label, store in stores.items():
                    common.PROJECT_TOTALS_SQL = BEFORE_M009_TOTALS if label == "before m009" else totals
                    start = time.perf_counter()
                    listed = store.project_summaries()
                    times[label].append((time.perf_counter() - start) * 1000)
            common.PROJECT_TOTALS_SQL = totals
            for store in stores.values():
                store.close()
        finally:
            with psycopg.connect(psycopg.conninfo.make_conninfo(url, dbname="postgres"), autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}_before" WITH (FORCE)')
    chunks = sum(p.chunks for p in listed)
    print(f"PostgreSQL: {len(listed)} projects, {chunks:,} chunks; {rounds} listings each, asked in turn")
    for label, spent in times.items():
        print(f"  {label:<12} p50 {statistics.median(spent):7.1f} ms   max {max(spent):7.1f} ms")
    ratio = statistics.median(times["m009"]) / statistics.median(times["before m009"])
    print(f"m009 / before: x{ratio:.3f}   load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
