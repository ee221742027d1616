"""Episodic retrieval on the real corpus: how often recall finds a chain, and how fast it answers.

Usage: python benchmarks/episodic.py [PATH] [--queries N] [--store DIR] [--json OUT]

PATH defaults to ../shared/corpus/claude-code. The corpus is ingested with embeddings into a store
(``--store DIR`` keeps it for reruns; default a temporary folder). Queries are real user prompts
from the transcripts (first line, 20–200 characters), sampled with a fixed seed. For each query the
script runs ``recall`` and ``predict`` (chain walking) and ``reconstruct`` of the prompt's project,
then prints the share of recalls that returned a qualifying chain, the chain lengths, and warm
p50/p95 latencies, beside the latency of a plain ``search`` measured in the same run (the walk's
own cost is the difference). Goal: recall and reconstruct p95 ≤ 100 ms warm.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"


def sample_prompts(store: object, count: int, seed: int = 7) -> list[tuple[str, str]]:
    """(prompt, project name) pairs from stored user prompts, one per session at most."""
    rows = store.conn.execute(  # type: ignore[attr-defined]
        "SELECT c.session_id, p.path, c.content FROM chunks c JOIN projects p ON p.id = c.project_id"
        " WHERE c.agent = 'main' AND c.part = 0 AND c.content LIKE '[User]%' ORDER BY c.rowid").fetchall()
    by_session: dict[str, tuple[str, str]] = {}
    for session_id, project, content in rows:
        first = content.split("\n", 2)[1].strip() if "\n" in content else ""
        if 20 <= len(first) <= 200 and session_id not in by_session and not first.startswith(("<", "/", "[")):
            by_session[session_id] = (first, project)
    pairs = sorted(by_session.values())
    random.Random(seed).shuffle(pairs)
    return pairs[:count]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--store", type=Path, help="keep (or reuse) the ingested store in this folder")
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args()
    home = args.store or Path(tempfile.mkdtemp(prefix="causantic-episodic-"))
    os.environ["CAUSANTIC_HOME"] = str(home)

    from causantic.config import Config
    from causantic.ingest.service import ingest_paths
    from causantic.retrieval.reconstruct import ReconstructRequest, reconstruct
    from causantic.retrieval.search import SearchRequest
    from causantic.services import open_services

    with open_services(Config()) as services:
        started = time.perf_counter()
        report = ingest_paths(services, [args.path], workers=2)
        print(f"store            {home} ({services.store.counts()['chunks']} chunks, "
              f"{services.vectors.count()} vectors; ingest {time.perf_counter() - started:.0f} s, "
              f"{report.chunks_added} new)", file=sys.stderr)
        queries = sample_prompts(services.store, args.queries)
        walker = services.chains
        for prompt, _ in queries[:3]:  # warm-up: model, LanceDB, SQLite caches
            walker.recall(SearchRequest(prompt))
        timings: dict[str, list[float]] = {"search": [], "recall": [], "predict": [], "reconstruct": []}
        lengths: list[int] = []
        reasons: Counter[str] = Counter()
        chains = 0
        budget = services.config.tokens.mcp_max_response
        for prompt, project in queries:
            request = SearchRequest(prompt)
            t = time.perf_counter()
            services.searcher.search(request)
            timings["search"].append(time.perf_counter() - t)
            t = time.perf_counter()
            result = walker.recall(request)
            timings["recall"].append(time.perf_counter() - t)
            t = time.perf_counter()
            walker.predict(request)
            timings["predict"].append(time.perf_counter() - t)
            t = time.perf_counter()
            reconstruct(services.store, ReconstructRequest(project), budget)
            timings["reconstruct"].append(time.perf_counter() - t)
            if result.mode == "chain":
                chains += 1
                lengths.append(len(result.chunks))
            else:
                reasons[result.diagnostics.fallback_reason or "?"] += 1
    n = len(queries)
    figures: dict[str, object] = {
        "queries": n,
        "chain_share": round(chains / n, 3) if n else 0.0,
        "chain_length_median": statistics.median(lengths) if lengths else 0,
        "chain_length_p95": percentile([float(x) for x in lengths], 0.95) if lengths else 0,
        "fallback_reasons": dict(reasons),
    }
    for name, values in timings.items():
        figures[f"{name}_p50_ms"] = round(1000 * percentile(values, 0.5), 1)
        figures[f"{name}_p95_ms"] = round(1000 * percentile(values, 0.95), 1)
    print(f"queries          {n} real user prompts")
    print(f"qualifying chain {chains} of {n} ({100 * chains / max(n, 1):.0f}%); "
          f"fallbacks: {dict(reasons) or 'none'}")
    print(f"chain length     median {figures['chain_length_median']}, p95 {figures['chain_length_p95']} chunks")
    base = figures["search_p95_ms"]
    for name in ("search", "recall", "predict", "reconstruct"):
        p50, p95 = figures[f"{name}_p50_ms"], figures[f"{name}_p95_ms"]
        ratio = f"{p95 / base:.2f}× search" if name != "search" and base else "baseline"  # type: ignore[operator]
        print(f"{name:<16} p50 {p50:>7.1f} ms   p95 {p95:>7.1f} ms   ({ratio})")
    print("goal             recall and reconstruct p95 ≤ 100 ms warm")
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
