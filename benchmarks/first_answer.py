"""Time to first answer: a fresh store, `causantic batch-ingest` of ~10 MB of real sessions, and a
person searching while it runs.

Usage: PYTHONPATH=src python benchmarks/first_answer.py [PATH] [--json OUT] [--query TEXT] [--every 2]

PATH defaults to the real Claude Code projects of daaain__claude-code-log in the shared corpus
(11 MB). ``causantic batch-ingest PATH`` starts in a fresh ``CAUSANTIC_HOME``; every ``--every``
seconds a separate ``causantic search --json`` process asks ``--query`` and records the mode and
notes it answered with. Reported: seconds from the start of batch-ingest to the first search with
hits (goal ≤ 30 s), to the first hybrid answer, and to the end of the ingest (all vectors written),
with the modes seen in between. The baseline in the same run is one ``causantic search`` on the
empty store (what a search costs before any data exists).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
DEFAULT_PATH = CORPUS / "daaain__claude-code-log" / "test" / "test_data" / "real_projects"


def search(env: dict[str, str], query: str) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "causantic", "search", "--json", "--", query],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--query", default="how are the session files parsed")
    parser.add_argument("--every", type=float, default=2.0)
    args = parser.parse_args()
    megabytes = sum(p.stat().st_size for p in args.path.rglob("*.jsonl")) / 1e6
    with tempfile.TemporaryDirectory(prefix="causantic-first-") as home:
        env = dict(
            os.environ,
            CAUSANTIC_HOME=home,
            HF_HUB_OFFLINE="1",
            PYTHONPATH=os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p),
        )
        empty_s, _ = search(env, args.query)
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        ingest = subprocess.Popen(
            [sys.executable, "-m", "causantic", "batch-ingest", "--json", str(args.path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        seen: list[dict[str, object]] = []
        first_hit = first_hybrid = None
        while ingest.poll() is None:
            took, answer = search(env, args.query)
            at = time.perf_counter() - started
            hits = len(answer["hits"])  # type: ignore[arg-type]
            seen.append(
                {
                    "at_s": round(at, 1),
                    "search_s": round(took, 2),
                    "mode": answer["mode"],
                    "hits": hits,
                    "notes": answer["notes"],
                }
            )
            print(f"{at:6.1f} s  {answer['mode']:<13} {hits:>2} hits  {'; '.join(answer['notes'])[:90]}", flush=True)
            if hits and first_hit is None:
                first_hit = at
            if hits and answer["mode"] == "hybrid" and first_hybrid is None:
                first_hybrid = at
            time.sleep(args.every)
        done = time.perf_counter() - started
        report = json.loads(ingest.stdout.read() if ingest.stdout else "{}")
        _, final = search(env, args.query)
    result = {
        "megabytes": round(megabytes, 1),
        "first_keyword_answer_s": round(first_hit, 1) if first_hit is not None else None,
        "first_hybrid_answer_s": round(first_hybrid, 1) if first_hybrid is not None else None,
        "ingest_done_s": round(done, 1),
        "ingest_report_seconds": report.get("seconds"),
        "ingest_embed_seconds": report.get("embed_seconds"),
        "chunks": report.get("chunks_added"),
        "final_mode": final["mode"],
        "final_notes": final["notes"],
        "empty_store_search_s": round(empty_s, 2),
        "polls": seen,
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    print(
        f"\n{megabytes:.1f} MB of real sessions, {result['chunks']} chunks: first answer (keyword) after "
        f"{result['first_keyword_answer_s']} s (goal ≤ 30 s), first hybrid answer after "
        f"{result['first_hybrid_answer_s']} s, ingest with all vectors done after {result['ingest_done_s']} s "
        f"(its summary: {result['ingest_report_seconds']} s, embedding {result['ingest_embed_seconds']} s); "
        f"a search of the empty store takes {result['empty_store_search_s']} s; "
        f"load {result['load_average']} (2 cores)"
    )
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
