"""Memory's size on disk: the SQLite file and its write-ahead log through an ingest and forgets, with a
reader holding the store open, for this tree and another commit in the same run.

Usage::

    PYTHONPATH=src python benchmarks/storage.py [--base REF] [--corpus DIR | --store DIR] [--forget N]
        [--embed] [--json OUT]

Each tree (``REF``'s code from ``git archive``, default ``main``; then this tree's ``src/``) gets a new
``CAUSANTIC_HOME`` and runs, as real processes, what a user does:

1. an MCP server (``causantic serve``, as each Claude Code session starts one) connects and answers
   one ``list-projects`` call, then stays idle until the end; a reader opens the store and holds one
   read transaction (a database browser, a long export, a reader mid-query) until the ingest ends,
   then stays connected, idle;
2. ``causantic batch-ingest CORPUS`` (``--no-embed`` unless ``--embed``), sampling the log's size
   every 50 ms (its peak); then the reader lets go, nothing runs for :data:`IDLE_WAIT` seconds (the
   idle MCP server may empty the log), and the same ingest runs again (nothing new: what a
   session-end hook runs);
3. ``causantic forget PROJECT --yes`` for the ``N`` largest projects, then ``forget --before`` the
   median chunk time of the next one;
4. ``causantic stats --json``; for the base tree's file, FTS5's ``merge`` and ``optimize`` each on a
   copy of it (what they give back of the keyword index), then this tree's ``causantic vacuum``.

With ``--store DIR`` (a store built before, e.g. /work/bench-stores/100000) each tree forgets in its
own copy of it instead: steps 3 and 4 only. The forgets' CPU seconds are printed with their ratio.

It prints the file and log sizes after each step, side by side, the free space inside the file
(``PRAGMA freelist_count``) and the keyword index's share of the file (FTS5's tables, from
``dbstat``). Sizes, not times (but the forgets' CPU ratio): nothing else depends on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus"

# The reader: holds a read transaction until told (a line on stdin), then stays connected until EOF.
_READER = """
import sqlite3, sys, time
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
print("holding", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
print("idle", flush=True)
sys.stdin.read()
"""


IDLE_WAIT = 25.0  # seconds: twice storage.idleCheckpointSeconds' default, and some
_MCP_HELLO = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "benchmarks/storage.py", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list-projects", "arguments": {}}},
]


@dataclass
class Run:
    name: str
    src: Path
    home: Path
    rows: list[tuple[str, int, int, int, int]] = field(default_factory=list)  # step, file, log, free, fts
    wal_peak: int = 0
    forget_cpu: float = 0.0  # CPU seconds of the forget commands

    def env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self.src), "CAUSANTIC_HOME": str(self.home)}

    def causantic(self, *args: str, src: Path | None = None) -> str:
        env = self.env() if src is None else {**self.env(), "PYTHONPATH": str(src)}
        cpu = _children_cpu()
        done = subprocess.run(
            [sys.executable, "-m", "causantic", *args], env=env, capture_output=True, text=True, check=False
        )
        if args[0] == "forget":
            self.forget_cpu += _children_cpu() - cpu
        if done.returncode:
            raise SystemExit(f"{self.name}: causantic {' '.join(args)} failed:\n{done.stderr}")
        return done.stdout

    def record(self, step: str) -> None:
        db = self.home / "memory.db"
        self.rows.append((step, _size(db), _size(db.with_name("memory.db-wal")), _free(db), _fts(db)))


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _free(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        pages = conn.execute("PRAGMA freelist_count").fetchone()[0]
        return int(pages * conn.execute("PRAGMA page_size").fetchone()[0])


def _fts(db: Path) -> int:
    """Bytes of the file the keyword index (FTS5's shadow tables) takes."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        row = conn.execute("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'chunks_fts%'").fetchone()
        return int(row[0] or 0)


def _mcp_server(run: Run) -> subprocess.Popen[str]:
    """``causantic serve`` after the handshake and one answered tool call, as a Claude Code session leaves it."""
    server = subprocess.Popen(
        [sys.executable, "-m", "causantic", "serve", "--no-warm"],
        env=run.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    for message in _MCP_HELLO:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        if "id" in message:
            server.stdout.readline()
    return server


def _largest_projects(run: Run, n: int) -> list[dict[str, Any]]:
    listing = json.loads(run.causantic("list-projects", "--json"))
    projects = listing if isinstance(listing, list) else listing["projects"]
    return sorted(projects, key=lambda p: (-_chunk_count(p), p["name"]))[:n]


def _chunk_count(project: dict[str, Any]) -> int:
    """A listed project's chunks: chunk_count, or chunks from a release before the JSON keys said counts."""
    return int(project.get("chunk_count", project.get("chunks", 0)))


def measure(run: Run, corpus: Path, forget: int, embed: bool, vacuum_src: Path | None) -> None:
    run.home.mkdir(parents=True)
    run.causantic("stats", "--json")  # creates the store, as the first command a user runs does
    db = run.home / "memory.db"
    server = _mcp_server(run)
    reader = subprocess.Popen(
        [sys.executable, "-c", _READER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert reader.stdin is not None and reader.stdout is not None
    try:
        reader.stdout.readline()
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                run.wal_peak = max(run.wal_peak, _size(db.with_name("memory.db-wal")))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            run.causantic("batch-ingest", str(corpus), *([] if embed else ["--no-embed"]))
        finally:
            stop.set()
            sampler.join()
        run.record("ingest, reader holding a snapshot")
        reader.stdin.write("release\n")
        reader.stdin.flush()
        reader.stdout.readline()
        run.record("reader idle, still connected")
        time.sleep(IDLE_WAIT)
        run.record(f"nothing runs for {IDLE_WAIT:.0f} s (an MCP server idle)")
        run.causantic("batch-ingest", str(corpus), "--no-embed")
        run.record("ingest again, nothing new (as a hook does)")
        forget_and_vacuum(run, forget, vacuum_src)
    finally:
        reader.stdin.close()
        reader.wait(timeout=60)
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)


def forget_and_vacuum(run: Run, forget: int, vacuum_src: Path | None) -> None:
    """Step 3 and 4: the forgets (their processes' CPU seconds in ``run.forget_cpu``), stats, vacuum."""
    *largest, next_one = _largest_projects(run, forget + 1)
    for project in largest:
        run.causantic("forget", project["name"], "--yes")
        run.record(f"forget {project['name'][:28]} ({_chunk_count(project)})")
    before = next_one["last_seen"] if "last_seen" in next_one else None
    if before:
        run.causantic("forget", next_one["name"], "--before", before[:19], "--yes")
        run.record(f"forget --before ({next_one['name'][:20]})")
    stats = json.loads(run.causantic("stats", "--json"))
    run.rows.append(("stats: database size", stats["sqlite_bytes"], -1, stats.get("free_bytes", -1), -1))
    if vacuum_src is not None:
        for name, statement in FTS_OPERATIONS.items():
            run.rows.append((f"on a copy: {name}", *_fts_operation(run.home / "memory.db", statement)))
        run.causantic("vacuum", src=vacuum_src)
        run.record("vacuum (this tree's code)")


FTS_OPERATIONS = {  # what FTS5 offers to drop deleted rows' tombstones from its index
    "FTS5 merge, -16": "INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('merge', -16)",
    "FTS5 optimize": "INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')",
}


def _fts_operation(db: Path, statement: str) -> tuple[int, int, int, int]:
    """What one FTS5 command gives back, run on a copy of ``db`` followed by an incremental vacuum:
    the copy's file, log (none), free space and keyword index."""
    copy = db.with_name("fts-copy.db")
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    try:
        with sqlite3.connect(copy, isolation_level=None) as conn:
            conn.execute(statement)
            conn.executescript("PRAGMA incremental_vacuum")
        return _size(copy), -1, _free(copy), _fts(copy)
    finally:
        copy.unlink()


def measure_copy(run: Run, store: Path, forget: int, vacuum_src: Path | None) -> None:
    """Steps 3 and 4 only, on a copy of the store in ``store`` (the reader, the server and the
    ingests left out)."""
    shutil.copytree(store, run.home)
    run.record(f"copy of {store.name}")
    forget_and_vacuum(run, forget, vacuum_src)


def mb(n: int) -> str:
    return "-" if n < 0 else f"{n / 1e6:.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", default="main", help="the commit to compare with (any git revision)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--forget", type=int, default=3, help="forget this many of the largest projects")
    parser.add_argument("--embed", action="store_true", help="embed while ingesting (vectors live in memory.db too)")
    parser.add_argument("--store", type=Path, help="forget in copies of this store (no reader, server or ingest)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="causantic-storage-") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.base, "src"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        runs = [
            Run(f"base {args.base}", Path(tmp) / "src", Path(tmp) / "home-base"),
            Run("this tree", REPO / "src", Path(tmp) / "home-this"),
        ]
        print(f"{args.store or args.corpus}; load {os.getloadavg()[0]:.2f}", flush=True)
        for run in runs:
            vacuum_src = REPO / "src" if run is runs[0] else None
            if args.store:
                measure_copy(run, args.store, args.forget, vacuum_src)
            else:
                measure(run, args.corpus, args.forget, args.embed, vacuum_src)
            print(f"  {run.name} done", flush=True)
    width = max(len(step) for run in runs for step, *_ in run.rows)
    header = f"{'':{width}}" + "".join(f"  {run.name:>43}" for run in runs)
    print(header)
    print(f"{'':{width}}" + "  {:>10} {:>10} {:>10} {:>10}".format("file", "log", "free", "keywords") * len(runs))
    peaks = "".join(f"  {'':>10} {mb(run.wal_peak):>10} {'':>10} {'':>10}" for run in runs)
    if not args.store:
        print(f"{'log peak during ingest':{width}}{peaks}")
    steps = list(dict.fromkeys(step for run in runs for step, *_ in run.rows))
    for step in steps:
        cells = []
        for run in runs:
            row = next((r for r in run.rows if r[0] == step), None)
            cells.append("  {:>10} {:>10} {:>10} {:>10}".format(*(mb(v) for v in row[1:])) if row else f"  {'':>43}")
        print(f"{step:{width}}" + "".join(cells))
    base, this = runs
    print(
        f"forgets' CPU: {this.forget_cpu:.1f} s against {base.forget_cpu:.1f} s "
        f"(×{this.forget_cpu / max(base.forget_cpu, 1e-9):.2f}); load {os.getloadavg()[0]:.2f}"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {run.name: {"wal_peak": run.wal_peak, "forget_cpu": run.forget_cpu, "rows": run.rows} for run in runs},
                indent=1,
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
