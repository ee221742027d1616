"""Whole-session evidence read from the per-session stem counts, against the chunk scan they replace.

Usage::

    PYTHONPATH=src python benchmarks/session_stem_counts.py --store DIR [--queries 100] [--json OUT]

``--store`` is a ``CAUSANTIC_HOME`` holding a built store (the 100k one of ``search_latency.py``;
copy it first: opening it migrates it, and its sessions' stems are counted here if no ingest has
counted them yet, with the time that takes printed). For ``--queries`` real prompts (the seed of
``search_paired.py``), each unfiltered and with a project filter, the real searcher runs with
``retrieval.sessionWords`` 0.5 and every call it makes to ``session_stem_counts`` (the 30 best
candidates' sessions and the query's stems) is answered twice, from the table and by the scan of
every chunk of those sessions that the store ran before it kept the table, timed back to back. It
prints how many answers differ (the table must give the scan's answer exactly), the sessions and
chunks read, and the median time of each with their ratio, and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _data  # noqa: E402
from search_latency import SEED  # noqa: E402

WARMUP = 5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args()
    if not (args.store / "memory.db").exists():
        raise SystemExit(f"No store in {args.store}: build one with search_latency.py --store-dir.")
    os.environ["CAUSANTIC_HOME"] = str(args.store)

    from causantic.config import Config
    from causantic.retrieval.search import SearchRequest
    from causantic.services import open_services

    print(f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)
    chosen = random.Random(SEED).sample(_data.corpus_text(_data.DEFAULT_CORPUS).prompts, args.queries + WARMUP)
    with open_services(Config().with_overrides({"retrieval.sessionWords": "0.5"})) as services:
        store: Any = services.store
        started = time.perf_counter()
        counted = store.fill_session_stems()
        if counted:
            print(f"counted the stems of {counted:,} sessions in {time.perf_counter() - started:.1f} s", flush=True)
        calls: list[tuple[list[str], list[str]]] = []
        asked = store.session_stem_counts
        store.session_stem_counts = lambda sessions, stems: (
            calls.append((list(sessions), list(stems))) or asked(sessions, stems)
        )
        projects = sorted({p.name for p in store.projects_by_id(store.projects_with_chunks())})
        for i, query in enumerate(chosen):
            for project in (None, projects[i % len(projects)]):
                services.searcher.search(SearchRequest(query, project=project, limit=10))
        store.session_stem_counts = asked
        table_ms: list[float] = []
        scan_ms: list[float] = []
        differ = sessions = 0
        for session_ids, stems in [(ids, stems) for ids, stems in calls[2 * WARMUP :] if ids and stems]:
            began = time.perf_counter()
            from_table = store.session_stem_counts(session_ids, stems)
            between = time.perf_counter()
            scanned = store._scanned_session_stem_counts(session_ids, stems)
            scan_ms.append((time.perf_counter() - between) * 1e3)
            table_ms.append((between - began) * 1e3)
            differ += from_table != scanned
            sessions += len(session_ids)
        chunks_read = sum(store.session_sizes(ids)[s][1] for ids, stems in calls[2 * WARMUP :] if stems for s in ids)
    figures = {
        "calls": len(table_ms),
        "differ": differ,
        "sessions_per_call": round(sessions / max(len(table_ms), 1), 1),
        "chunks_per_call": round(chunks_read / max(len(table_ms), 1)),
        "table_ms_p50": round(statistics.median(table_ms), 2),
        "scan_ms_p50": round(statistics.median(scan_ms), 2),
        "ratio_p50": round(statistics.median(t / s for t, s in zip(table_ms, scan_ms, strict=True)), 3),
        "load": round(os.getloadavg()[0], 2),
    }
    print(
        f"{figures['calls']} calls ({figures['sessions_per_call']} sessions, {figures['chunks_per_call']:,} chunks"
        f" each): {differ} answers differ between the table and the scan\n"
        f"p50 table {figures['table_ms_p50']} ms, scan {figures['scan_ms_p50']} ms,"
        f" median ratio table / scan ×{figures['ratio_p50']} (load {figures['load']})"
    )
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
