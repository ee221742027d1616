"""Cold CLI: how long a person waits for `causantic search`, `stats`, `list-projects` and `reconstruct`.

Usage::

    PYTHONPATH=src python benchmarks/cold_start.py [--json OUT] [--queries 40] [--runs 10]
        [--store-dir DIR] [--corpus PATH]

What it does:

1. **Store.** A ``CAUSANTIC_HOME`` (``--store-dir`` keeps it between runs) holding the example
   sessions and three real Claude Code projects of the shared corpus, ingested with vectors by the
   product's own ``causantic ingest``.
2. **Queries.** ``--queries`` real user prompts of the corpus (fixed seed).
3. **Timing.** Each command is a fresh process, ``python -m causantic …`` (what the ``causantic``
   script runs), timed from spawn to exit. Every search is paired with one run of the baseline
   ``python -c "import numpy, sqlite3"``, so both see the same machine load; the read commands run
   ``--runs`` times each. p50/p95 are over all runs; the load average is printed beside them.
   Modules run from bytecode, as installed (pip compiles on install): written to a private
   ``PYTHONPYCACHEPREFIX`` by untimed first runs, so ``PYTHONDONTWRITEBYTECODE`` in the caller's
   environment does not make every process compile the package from source.
4. **Install size.** ``site_packages_mb`` sums the files of every distribution the default install
   of Causantic pulls in (its requirements, recursively, without extras), as installed here. A fresh
   ``python -m venv`` + ``pip install .`` measures the same thing end to end (docs/architecture.md).

Goals (issue 13): search p95 ≤ 1 s on a quiet machine and ≤ 4x the baseline's p95 in the same run;
stats, list-* and reconstruct ≤ 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _data  # noqa: E402

SEED = 20_261_123
REAL_PROJECTS = "daaain__claude-code-log/test/test_data/real_projects"
FOLDERS = ("-experiments-ideas", "-Users-dain-workspace-JSSoundRecorder", "-experiments-worktrees")
EXAMPLES = REPO / "src" / "causantic" / "examples" / "sessions"
BASELINE = [sys.executable, "-c", "import numpy, sqlite3"]


def load() -> float:
    return round(os.getloadavg()[0], 2)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def prepare_store(home: Path, corpus: Path, env: dict[str, str]) -> None:
    if (home / "memory.db").exists():
        return
    targets = [str(EXAMPLES), *(str(corpus / REAL_PROJECTS / f) for f in FOLDERS)]
    print(f"building the store in {home} (ingest with vectors) …", flush=True)
    subprocess.run(
        [sys.executable, "-m", "causantic", "ingest", "--json", *targets],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def site_packages_mb(root: str = "causantic") -> float:
    """Bytes of every installed distribution the default install needs (requirements without extras)."""
    seen: set[str] = set()
    pending = [root]
    total = 0
    while pending:
        name = re.sub(r"[-_.]+", "-", pending.pop()).lower()
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        if name != root:  # the package itself: count the installed files, not an editable checkout
            total += sum(f.locate().stat().st_size for f in dist.files or [] if f.locate().is_file())
        for requirement in dist.requires or []:
            if "extra ==" in requirement:
                continue
            marker = requirement.split(";", 1)
            if len(marker) == 2 and not _marker_holds(marker[1]):
                continue
            pending.append(re.split(r"[\s<>=!~\[;(]", requirement, maxsplit=1)[0])
    package = REPO / "src" / "causantic"
    total += sum(p.stat().st_size for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return round(total / 1e6, 1)


def _marker_holds(marker: str) -> bool:
    from packaging.markers import Marker

    return Marker(marker).evaluate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", dest="json_out", type=Path)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--runs", type=int, default=10, help="runs of each read command")
    parser.add_argument("--store-dir", type=Path, help="keep the store here between runs")
    parser.add_argument("--corpus", type=Path, default=_data.DEFAULT_CORPUS)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="causantic-cold-") as tmp:
        home = args.store_dir or Path(tmp) / "home"
        env = dict(
            os.environ,
            CAUSANTIC_HOME=str(home),
            HF_HUB_OFFLINE="1",
            PYTHONPATH=os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p),
            # Installed, every module runs from bytecode (pip compiles on install). A checkout run
            # with PYTHONDONTWRITEBYTECODE would compile the package from source in every process,
            # so bytecode goes to a private folder instead, written by the untimed first runs.
            PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"),
        )
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        prepare_store(home, args.corpus, env)
        prompts = _data.corpus_text(args.corpus / REAL_PROJECTS).prompts
        queries = random.Random(SEED).sample(prompts, min(args.queries, len(prompts)))
        cli = [sys.executable, "-m", "causantic"]
        for warm_up in (BASELINE, [*cli, "search", "--", queries[0]], [*cli, "stats"], [*cli, "list-projects"]):
            timed(warm_up, env)
        timed([*cli, "reconstruct", "acme-shop"], env)
        loads = [load()]
        search, baseline = [], []
        for query in queries:
            baseline.append(timed(BASELINE, env))
            search.append(timed([*cli, "search", "--", query], env))
        loads.append(load())
        reads: dict[str, list[float]] = {"stats": [], "list_projects": [], "reconstruct": []}
        for _ in range(args.runs):
            reads["stats"].append(timed([*cli, "stats"], env))
            reads["list_projects"].append(timed([*cli, "list-projects"], env))
            reads["reconstruct"].append(timed([*cli, "reconstruct", "acme-shop"], env))
        loads.append(load())

    result: dict[str, Any] = {
        "search_p50_s": round(statistics.median(search), 3),
        "search_p95_s": round(pct(search, 0.95), 3),
        "baseline_p50_s": round(statistics.median(baseline), 3),
        "baseline_p95_s": round(pct(baseline, 0.95), 3),
        "search_over_baseline_p95": round(pct(search, 0.95) / pct(baseline, 0.95), 2),
        **{f"{name}_p95_s": round(pct(values, 0.95), 3) for name, values in reads.items()},
        **{
            f"{name}_over_baseline_p95": round(pct(values, 0.95) / pct(baseline, 0.95), 2)
            for name, values in reads.items()
        },
        **{f"{name}_p50_s": round(statistics.median(values), 3) for name, values in reads.items()},
        "site_packages_mb": site_packages_mb(),
        "queries": len(queries),
        "load_average": loads,
    }
    print(
        f"cold search      p50 {result['search_p50_s']:.2f} s  p95 {result['search_p95_s']:.2f} s "
        f"(goal ≤ 1 s quiet, ≤ 4x baseline)"
    )
    print(
        f"baseline         p50 {result['baseline_p50_s']:.2f} s  p95 {result['baseline_p95_s']:.2f} s "
        f"(python -c 'import numpy, sqlite3')"
    )
    print(f"search/baseline  {result['search_over_baseline_p95']:.2f}x at p95")
    for name in reads:
        print(
            f"{name:<16} p50 {result[f'{name}_p50_s']:.2f} s  p95 {result[f'{name}_p95_s']:.2f} s (goal ≤ 0.5 s; "
            f"{result[f'{name}_over_baseline_p95']:.2f}x baseline at p95)"
        )
    print(f"site-packages    {result['site_packages_mb']:.0f} MB (goal ≤ 400)")
    print(f"load average     {loads} (2 cores)")
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
