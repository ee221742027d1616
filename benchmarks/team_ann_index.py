"""Team memory's vector search with its HNSW index and without it, in the same run.

    PYTHONPATH=src python benchmarks/team_ann_index.py [--store /work/bench-stores/100000/memory.db]
        [--queries 50] [--limit 20] [--json OUT]

Only the team tables' owner may index them, and until this release only the owner's own embedding
run made the HNSW index: a team whose owner ran `causantic team init` and never ingested had none,
and every member's vector search scanned every vector exactly. `team init` now makes it. This
measures what that costs a member: the SQLite benchmark store is copied into a new PostgreSQL
database (``_pgcopy.py``: the product's schema, the HNSW index made by the product), then the
product's ``PgVectorIndex.search`` (whole store, as an unscoped search asks) is timed for
``--queries`` query vectors (stored chunk vectors with noise added, fixed seed) with the index, then
with it dropped, as members searched before. It prints each median and p95, their ratio, and how
many of the exact search's top 10 the index finds (recall@10: what the index costs in answers).
The server is ``CAUSANTIC_BENCH_POSTGRES_URL`` or a local one from pgserver (``_postgres.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pgcopy  # noqa: E402
import _postgres  # noqa: E402

DEFAULT_STORE = Path("/work/bench-stores/100000/memory.db")


def _timed(index: object, queries: list[object], limit: int) -> tuple[list[float], list[list[str]]]:
    times, found = [], []
    for query in queries:
        started = time.perf_counter()
        matches = index.search(query, limit=limit)  # type: ignore[attr-defined]
        times.append((time.perf_counter() - started) * 1000)
        found.append([m.chunk_id for m in matches])
    return times, found


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE, help="a SQLite store with vectors (read only)")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--limit", type=int, default=20, help="rows a search asks the index for")
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args()

    import numpy as np
    import psycopg

    from causantic.store.postgres.vectors import PgVectorIndex

    with _postgres.databases() as database:
        url, built = _pgcopy.copied_store(database, "ann_bench", args.store)
        index = PgVectorIndex(url, _pgcopy.MODEL, 384)
        ids, matrix = index.all_vectors()
        rng = np.random.default_rng(7)
        picked = matrix[rng.choice(len(ids), args.queries, replace=False)]
        noisy = picked + rng.normal(0, 0.3 / np.sqrt(matrix.shape[1]), picked.shape).astype(np.float32)
        queries = list(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
        _timed(index, queries[:5], args.limit)  # warm-up: the index's pages in the server's cache
        with_index, indexed = _timed(index, queries, args.limit)
        with psycopg.connect(url, autocommit=True) as conn:  # as a team whose owner never embedded
            for (name,) in conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%'"):
                conn.execute(f'DROP INDEX "{name}"')
        _timed(index, queries[:5], args.limit)
        without, exact = _timed(index, queries, args.limit)
        index.close()
    recall = statistics.mean(len(set(a[:10]) & set(b[:10])) / 10 for a, b in zip(indexed, exact, strict=True))
    out = {
        "vectors": len(ids),
        "queries": args.queries,
        "hnsw_p50_ms": round(statistics.median(with_index), 1),
        "hnsw_p95_ms": round(_p95(with_index), 1),
        "exact_p50_ms": round(statistics.median(without), 1),
        "exact_p95_ms": round(_p95(without), 1),
        "exact_over_hnsw_p50": round(statistics.median(without) / statistics.median(with_index), 1),
        "hnsw_recall_at_10": round(recall, 3),
        "copy": built,
    }
    print(f"{len(ids):,} vectors, {args.queries} queries (limit {args.limit}), the product's PgVectorIndex.search:")
    print(f"  with the HNSW index (`team init` makes it): p50 {out['hnsw_p50_ms']} ms, p95 {out['hnsw_p95_ms']} ms")
    print(
        f"  without it (members' searches before):         p50 {out['exact_p50_ms']} ms, p95 {out['exact_p95_ms']} ms"
    )
    print(f"  exact / HNSW, median: {out['exact_over_hnsw_p50']}x; HNSW recall@10 of the exact top 10: {recall:.3f}")
    if args.json_out:
        args.json_out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
