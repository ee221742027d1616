"""Listing projects at scale: ``list-projects`` and the dashboard's Projects page count each project's
chunks and sessions (``MemoryStore.project_summaries``), before and after SQLite m014 widened the
project/time index so the count reads the index alone.

Usage::

    PYTHONPATH=src python benchmarks/project_listing.py [--store DIR] [--rounds 15]

``--store`` is a store's folder (``memory.db`` in it; default the 100k-chunk store
``benchmarks/search_latency.py --store-dir`` keeps). It is copied twice into a temporary folder:
one copy opened by this code (every migration, m014 included), the other given back the index as
it was before m014. The two are asked in turn, so both see the same machine load; the figure is
each one's median and their ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from causantic.store.memory import MemoryStore

BEFORE_M014 = (
    "DROP INDEX chunks_project_time",
    "CREATE INDEX chunks_project_time ON chunks(project_id, start_time)",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path("/work/bench-stores/100000"))
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
