"""Warm search latency of this tree against another commit, query by query on the same store.

Usage::

    PYTHONPATH=src python benchmarks/search_paired.py --base REF [--store DIR] [--rounds 2]
        [--queries 100] [--set KEY=VALUE ...] [--json OUT]

Why: on a shared machine the load moves by a factor of several within a minute, so two runs of
``search_latency.py`` minutes apart cannot show a change of 10 %. Here two warm processes, one
running ``REF``'s code (``git archive`` into a temporary folder) and one running this tree's
``src/``, search the same store turn about: every query is asked of both back to back (which goes
first alternates), so both see the same load, and the figure is the median of the per-query ratios
(this tree / base) beside each side's p50/p95 wall and CPU time.

Queries are ``search_latency.py``'s (real user prompts from ``../shared/corpus/claude-code``, the same
seed), each unfiltered and then with a project filter (the store's projects in turn), after 5 warm-up
queries. ``--store`` is a ``CAUSANTIC_HOME`` holding a built store, by default the 100k real-text
store ``search_latency.py --store-dir`` keeps (``/work/bench-stores/100000``); searching only reads it,
and both trees must share its schema. ``--set`` overrides a setting in this tree's searcher only (a
setting still off by default, measured against the base's default: ``--base HEAD
--set retrieval.termFeedbackWeight=0.5``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _data  # noqa: E402
from search_latency import SEED, pct  # noqa: E402

WARMUP = 5

# One warm searcher: reads [query, project or null] per line, answers [wall ms, CPU ms, hit ids].
_WORKER = """
import json, os, sys, time
from causantic.config import Config
from causantic.retrieval.search import SearchRequest
from causantic.services import open_services
with open_services(Config().with_overrides(json.loads(os.environ.get("PAIRED_SET", "{}")))) as services:
    store = services.store
    print(json.dumps(sorted({p.name for p in store.projects_by_id(store.projects_with_chunks())})), flush=True)
    for line in sys.stdin:
        query, project = json.loads(line)
        cpu, wall = time.process_time(), time.perf_counter()
        hits = services.searcher.search(SearchRequest(query, project=project, limit=10)).hits
        wall, cpu = (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3
        print(json.dumps([wall, cpu, [h.chunk.id for h in hits]]), flush=True)
"""


class Worker:
    def __init__(self, src: Path, home: Path, overrides: dict[str, str] | None = None) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(src),
            "CAUSANTIC_HOME": str(home),
            "PAIRED_SET": json.dumps(overrides or {}),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        self.projects: list[str] = json.loads(self._line())

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"search worker exited ({self.proc.wait()}); see its error above")
        return line

    def search(self, query: str, project: str | None) -> tuple[float, float, list[str]]:
        """(wall ms, CPU ms, the hits' chunk ids in order)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps([query, project]) + "\n")
        self.proc.stdin.flush()
        wall, cpu, ids = json.loads(self._line())
        return wall, cpu, ids

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def summary(base: list[tuple[float, float, list[str]]], ours: list[tuple[float, float, list[str]]]) -> dict[str, float]:
    def side(times: list[tuple[float, float, list[str]]], name: str) -> dict[str, float]:
        wall, cpu = [t[0] for t in times], [t[1] for t in times]
        return {
            f"{name}_p50_ms": round(pct(wall, 50), 1),
            f"{name}_p95_ms": round(pct(wall, 95), 1),
            f"{name}_cpu_p50_ms": round(pct(cpu, 50), 1),
            f"{name}_cpu_p95_ms": round(pct(cpu, 95), 1),
        }

    ratio = statistics.median(o[0] / b[0] for b, o in zip(base, ours, strict=True))
    differ = sum(b[2] != o[2] for b, o in zip(base, ours, strict=True))  # hits or their order
    return {**side(base, "base"), **side(ours, "this"), "median_ratio": round(ratio, 3), "hits_differ": differ}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare with (any git revision)")
    parser.add_argument("--store", type=Path, default=Path("/work/bench-stores/100000"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a setting for this tree's searcher only"
    )
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.set)
    if not (args.store / "memory.db").exists():
        raise SystemExit(f"No store in {args.store}: build one with search_latency.py --store-dir.")

    from causantic.store.memory import MemoryStore

    # Migrated, with the text features stored and the sessions' stems counted, as the next ingest
    # leaves a store built by older code: both trees then read the same rows (this tree's m009 and
    # m011 leave the filling to ingest).
    with MemoryStore(args.store / "memory.db") as store:
        store.fill_text_features(pending_only=True)
        store.fill_session_stems()
    corpus = _data.corpus_text(_data.DEFAULT_CORPUS)
    chosen = random.Random(SEED).sample(corpus.prompts, args.queries + WARMUP)  # as search_latency.py
    queries, warmup = chosen[: args.queries], chosen[args.queries :]
    loads = [round(os.getloadavg()[0], 2)]
    print(
        f"load {loads[0]} on {os.cpu_count()} cores; base {args.base} against {REPO / 'src'} {overrides or ''}",
        flush=True,
    )

    with tempfile.TemporaryDirectory(prefix="causantic-base-") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.base, "src"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        base, ours = Worker(Path(tmp) / "src", args.store), Worker(REPO / "src", args.store, overrides)
        try:
            for query in warmup:
                base.search(query, None)
                ours.search(query, None)
            times: dict[str, dict[str, list[tuple[float, float, list[str]]]]] = {
                kind: {"base": [], "this": []} for kind in ("all", "project")
            }
            for r in range(args.rounds):
                for kind in ("all", "project"):
                    for i, query in enumerate(queries):
                        project = base.projects[i % len(base.projects)] if kind == "project" else None
                        pair = [("base", base), ("this", ours)]
                        for name, worker in pair if (i + r) % 2 == 0 else reversed(pair):
                            times[kind][name].append(worker.search(query, project))
                loads.append(round(os.getloadavg()[0], 2))
                print(f"  round {r + 1} done (load {loads[-1]})", flush=True)
        finally:
            base.close()
            ours.close()

    figures: dict[str, Any] = {
        "base": args.base,
        "set": overrides,
        "loads": loads,
        "queries": args.queries,
        "rounds": args.rounds,
    }
    print(
        f"\n{'pass':10s} {'base p50':>9s} {'p95':>7s} {'this p50':>9s} {'p95':>7s}  cpu p50 base/this  ratio"
        "  hits differ"
    )
    for kind, t in times.items():
        s = summary(t["base"], t["this"])
        figures[kind] = s
        print(
            f"{kind:10s} {s['base_p50_ms']:9.1f} {s['base_p95_ms']:7.1f} {s['this_p50_ms']:9.1f} "
            f"{s['this_p95_ms']:7.1f}  {s['base_cpu_p50_ms']:7.1f} / {s['this_cpu_p50_ms']:<7.1f} "
            f"x{s['median_ratio']:.3f}  {s['hits_differ']:>5d}/{len(t['this'])}"
        )
    print("ratio: median over queries of this tree's wall time / base's for the same query, asked back to back")
    print("hits differ: searches whose hits (ids, in order) differ between the two trees")
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2))
        print(f"wrote {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
