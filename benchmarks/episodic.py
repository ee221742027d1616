"""Episodic retrieval on the real corpus: how often recall answers, how big its answers are, how fast.

Usage: python benchmarks/episodic.py [PATH] [--queries N] [--store DIR] [--json OUT]

PATH defaults to ../shared/corpus/claude-code. The corpus is ingested with embeddings into a store
(``--store DIR`` keeps it for reruns; default a temporary folder). Queries are real user prompts
from the transcripts (first line, 20–200 characters), sampled with a fixed seed. For each query the
script runs ``recall`` and ``predict`` (episodes around the best search hits) and ``reconstruct`` of
the prompt's project, then prints the share of recalls that answered (a prompt is real work, so
memory should hold it), the answers' sizes in episodes, chunks and tokens, and warm p50/p95
latencies, beside the latency of a plain ``search`` measured in the same run (the episodes' own
cost is the difference). Goal: recall and reconstruct p95 ≤ 100 ms warm.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"


def sample_prompts(db: Path, count: int, seed: int = 7) -> list[tuple[str, str]]:
    """(prompt, project path) pairs from stored user prompts, one per session at most (read from the
    SQLite file itself: the benchmark's own sampling, not a question the product answers)."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT c.session_id, p.path, c.content FROM chunks c JOIN projects p ON p.id = c.project_id"
            " WHERE c.agent = 'main' AND c.part = 0 AND c.content LIKE '[User]%' ORDER BY c.rowid"
        ).fetchall()
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

    from causantic import Memory
    from causantic.config import Config, db_path

    with Memory(config=Config()) as memory:
        started = time.perf_counter()
        report = memory.ingest([args.path], workers=2)
        stats = memory.stats()
        print(
            f"store            {home} ({stats.chunk_count} chunks, {stats.vector_count} vectors; ingest "
            f"{time.perf_counter() - started:.0f} s, {report.chunks_added} new)",
            file=sys.stderr,
        )
        queries = sample_prompts(db_path(memory.config), args.queries)
        for prompt, _ in queries[:3]:  # warm-up: model, vector index, SQLite caches
            memory.recall(prompt)
        timings: dict[str, list[float]] = {"search": [], "recall": [], "predict": [], "reconstruct": []}
        sizes: dict[str, list[int]] = {"episodes": [], "chunks": [], "tokens": []}
        answered = 0
        for prompt, project in queries:
            t = time.perf_counter()
            memory.search(prompt)
            timings["search"].append(time.perf_counter() - t)
            t = time.perf_counter()
            answer = memory.recall(prompt)
            timings["recall"].append(time.perf_counter() - t)
            t = time.perf_counter()
            memory.predict(prompt)
            timings["predict"].append(time.perf_counter() - t)
            t = time.perf_counter()
            memory.reconstruct(project)
            timings["reconstruct"].append(time.perf_counter() - t)
            if not answer.nothing_relevant:
                answered += 1
                sizes["episodes"].append(len(answer.episodes))
                sizes["chunks"].append(len(answer.chunks))
                sizes["tokens"].append(answer.tokens)
    n = len(queries)
    figures: dict[str, object] = {"queries": n, "answered_share": round(answered / n, 3) if n else 0.0}
    for name, values in sizes.items():
        figures[f"{name}_median"] = statistics.median(values) if values else 0
    for name, values in timings.items():
        figures[f"{name}_p50_ms"] = round(1000 * percentile(values, 0.5), 1)
        figures[f"{name}_p95_ms"] = round(1000 * percentile(values, 0.95), 1)
    print(f"queries          {n} real user prompts")
    print(f"answered         {answered} of {n} ({100 * answered / max(n, 1):.0f}%); the rest: nothing relevant")
    print(
        f"answer size      median {figures['episodes_median']} episodes, {figures['chunks_median']} chunks, "
        f"{figures['tokens_median']} tokens"
    )
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
