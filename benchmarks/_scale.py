"""The vector store at scale (1M chunks): build once, then time vector search in a fresh process.

Run by ``search_latency.py --scale-sizes`` (with ``--backend postgres`` also on the same store copied
into PostgreSQL: ``measure-postgres``); each step is its own process so that ``ru_maxrss`` is
the peak of that step alone. Chunk rows are minimal (a short unique text: the keyword index gets
1M tiny rows), because what grows with a million chunks here is the vector side: SQLite rows of
1,536 bytes and the faiss IVF index derived from them. Vectors are synthesised from real ones:
``normalise(w·a + (1−w)·b + e)`` for two real chunk vectors a, b (w uniform, |e| ≈ 0.05), so
they cluster as real text does. Queries are real user prompts through the product's query embedder.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROJECTS = 50
SESSION = 1000  # chunks per synthetic session
BATCH = 20_000


def build(home: Path, size: int, base_path: Path) -> dict[str, float]:
    import numpy as np

    from causantic.store.memory import MemoryStore
    from causantic.store.records import ChunkRecord
    from causantic.store.vectors import VectorIndex, VectorRecord

    base = np.load(base_path)
    rng = np.random.default_rng(size)
    store = MemoryStore(home / "memory.db")
    index = VectorIndex(home / "memory.db", home / "vectors", "all-minilm-l6-v2", base.shape[1])
    projects = [store.resolve_project(f"/bench/p{i:02d}", f"/bench/p{i:02d}") for i in range(PROJECTS)]
    weights = 1 / np.arange(1, PROJECTS + 1) ** 0.8
    started = time.perf_counter()
    for start in range(0, size, BATCH):
        n = min(BATCH, size - start)
        a, b = base[rng.integers(0, len(base), n)], base[rng.integers(0, len(base), n)]
        w = rng.random((n, 1), dtype=np.float32)
        v = w * a + (1 - w) * b + rng.normal(0, 0.05 / np.sqrt(base.shape[1]), (n, base.shape[1])).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        with store.atomic():
            for s0 in range(start, start + n, SESSION):
                project = projects[int(rng.choice(PROJECTS, p=weights / weights.sum()))]
                chunks = [
                    ChunkRecord(
                        id=f"c{i}",
                        session_id=f"s{s0}",
                        agent="main",
                        agent_id=None,
                        team_name=None,
                        turn_index=i - s0,
                        part=0,
                        start_time="2026-01-01T00:00:00.000Z",
                        end_time="2026-01-01T00:00:00.000Z",
                        content=f"chunk {i}",
                        search_terms="",
                        content_hash=f"h{i}",
                        approx_tokens=3,
                        tool_use_count=0,
                        code_block_count=0,
                        has_thinking=False,
                        message_uuids=(),
                    )
                    for i in range(s0, min(s0 + SESSION, start + n))
                ]
                store.save_session(project, f"s{s0}", chunks)
        index.upsert([VectorRecord(f"c{start + j}", f"h{start + j}", v[j]) for j in range(n)])
    rows_s = time.perf_counter() - started
    t = time.perf_counter()
    index.ensure_ann_index()
    ann_s = time.perf_counter() - t
    index.close()
    store.close()
    disk = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    return {
        "rows_s": round(rows_s, 1),
        "ann_build_s": round(ann_s, 1),
        "disk_mb": round(disk / 1e6, 1),
        "build_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def measure(home: Path, queries: list[str], baseline_queries: int) -> dict[str, object]:
    """Vector search times without and with a project filter (the 50 projects in turn), then the
    baseline: the project filter read from SQLite per query, as before the scope map (fewer queries:
    it takes seconds each)."""
    from causantic.embedding import load_embedder
    from causantic.retrieval.blas import use_one_blas_thread
    from causantic.store.memory import MemoryStore
    from causantic.store.vectors import VectorIndex

    use_one_blas_thread()
    embedder = load_embedder()
    vectors = [embedder.embed_query(q) for q in queries]
    store = MemoryStore(home / "memory.db")
    index = VectorIndex(home / "memory.db", home / "vectors", "all-minilm-l6-v2", embedder.dims)
    # What every embed or ingest runs: a store indexed before scope maps existed gets its map here.
    t = time.perf_counter()
    index.ensure_ann_index()
    out: dict[str, object] = {"ensure_index_s": round(time.perf_counter() - t, 1)}
    project_ids = sorted(store.projects_with_chunks())
    out.update({"ann": index.health(fresh=True).ann, "load_before": os.getloadavg()[0]})
    for v in vectors[:5]:
        index.search(v, limit=50)
        index.search(v, limit=50, project_ids=[project_ids[0]])

    def timed(kind: str, n: int) -> list[float]:
        times = []
        for i, v in enumerate(vectors[:n]):
            scope = [project_ids[i % len(project_ids)]] if kind != "all" else None
            t = time.perf_counter()
            index.search(v, limit=50, project_ids=scope)
            times.append((time.perf_counter() - t) * 1e3)
        return times

    runs = {"all": timed("all", len(vectors)), "project": timed("project", len(vectors))}
    # The baseline: the same index with its scope map withheld, as a store indexed before it.
    with_map = VectorIndex._load_scopes
    VectorIndex._load_scopes = lambda self, ann: None  # type: ignore[method-assign,assignment]
    try:
        runs["project_sqlite"] = timed("project_sqlite", baseline_queries)
    finally:
        VectorIndex._load_scopes = with_map  # type: ignore[method-assign]
    for kind, times in runs.items():
        times.sort()
        out[f"{kind}_p50_ms"] = round(statistics.median(times), 2)
        out[f"{kind}_p95_ms"] = round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))], 2)
    out["load_after"] = os.getloadavg()[0]
    out["search_peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def measure_postgres(url: str, queries: list[str]) -> dict[str, object]:
    """The same vector searches on the store copied into PostgreSQL (``_pgcopy.py``): pgvector's
    HNSW index, without and with a project filter. Peak memory is this process's and that of the
    server process serving its connection (``VmHWM``: shared buffers it touched included)."""
    from causantic.embedding import load_embedder
    from causantic.store.postgres.store import PostgresStore
    from causantic.store.postgres.vectors import PgVectorIndex

    embedder = load_embedder()
    vectors = [embedder.embed_query(q) for q in queries]
    store = PostgresStore(url, member="bench")
    index = PgVectorIndex(url, "all-minilm-l6-v2", embedder.dims)
    project_ids = sorted(store.projects_with_chunks())
    out: dict[str, object] = {"ann": "pgvector HNSW", "load_before": os.getloadavg()[0]}
    for v in vectors[:5]:
        index.search(v, limit=50)
        index.search(v, limit=50, project_ids=[project_ids[0]])
    runs: dict[str, list[float]] = {"all": [], "project": []}
    found: dict[str, list[int]] = {"all": [], "project": []}
    for kind, times in runs.items():
        for i, v in enumerate(vectors):
            scope = [project_ids[i % len(project_ids)]] if kind == "project" else None
            t = time.perf_counter()
            hits = index.search(v, limit=50, project_ids=scope)
            times.append((time.perf_counter() - t) * 1e3)
            found[kind].append(len(hits))
    for kind, times in runs.items():
        times.sort()
        out[f"{kind}_p50_ms"] = round(statistics.median(times), 2)
        out[f"{kind}_p95_ms"] = round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))], 2)
        out[f"{kind}_hits_mean"] = round(statistics.fmean(found[kind]), 1)
    out["load_after"] = os.getloadavg()[0]
    out["search_peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    pid = index.conn.execute("SELECT pg_backend_pid()").fetchone()[0]
    out["server_peak_mb"] = _peak_mb(pid)
    out["disk_mb"] = round(store.size_bytes() / 1e6, 1)
    index.close()
    store.close()
    return out


def _peak_mb(pid: int) -> float | None:
    """A process's peak resident memory (VmHWM) in MB; None when /proc does not show it."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


if __name__ == "__main__":
    step, home = sys.argv[1], Path(sys.argv[2])
    if step == "build":
        result = build(home, int(sys.argv[3]), Path(sys.argv[4]))
    elif step == "measure-postgres":  # home: the database's URL
        result = measure_postgres(sys.argv[2], json.loads(Path(sys.argv[3]).read_text()))
    else:
        result = measure(home, json.loads(Path(sys.argv[3]).read_text()), int(sys.argv[4]))
    print("RESULT " + json.dumps(result), flush=True)
