"""Where a team member waits: pushing sessions to team memory, a push with nothing new, a search.

Usage: PYTHONPATH=src python benchmarks/team_push.py [--sessions 40] [--queries 20] [--repeat 2] [--embed]
       [--json OUT]

A member's ``causantic batch-ingest`` of ``--sessions`` real Claude Code transcripts of the shared
corpus (the largest real sessions up to 400 KB each, with their sub-agent files; a fixed choice)
is timed three ways, each on PostgreSQL + pgvector (team memory, every project shared) and, in the
same run as the baseline, on a fresh local SQLite store:

- first push: every session new (``--embed`` includes embedding; off by default, as embedding
  costs the same on both backends and would hide the store's share);
- no-change push: the same folder again, which must read nothing;
- search: ``--queries`` searches (each a corpus session's opening words; keyword-only, hybrid with
  ``--embed``) through the ``Memory`` facade in one process, as the MCP server and dashboard search,
  median and 95th percentile; and ``causantic search`` as a command in a fresh process (start-up,
  connecting and one search: what a member typing it waits for), median of three. Besides the time,
  the statements each search sends to the server are counted: on a real network each is a round
  trip, so a search costs about that many round-trip times more than measured here, where the
  server is on this machine (a Unix socket).

Each store is built ``--repeat`` times, PostgreSQL and SQLite alternating (each time a new
database and a new SQLite home); the best time of each figure counts.

The server is a local PostgreSQL 16 from the ``pgserver`` wheel (``benchmarks/_postgres.py``), or
the one ``CAUSANTIC_BENCH_POSTGRES_URL`` names. Prints each figure beside its SQLite baseline with
the ratio, and the load average before and after: the machine is shared, so trust the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import _postgres  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
MAX_SESSION_BYTES = 400_000


def pick_sessions(count: int) -> list[Path]:
    """The ``count`` largest main-session files under MAX_SESSION_BYTES (not sub-agent files), by size
    then path: a fixed, varied choice of real sessions."""
    files = [
        p
        for p in CORPUS.rglob("*.jsonl")
        if not p.name.startswith("agent-") and "subagents" not in p.parts and p.stat().st_size <= MAX_SESSION_BYTES
    ]
    return sorted(files, key=lambda p: (-p.stat().st_size, str(p)))[:count]


def link_folder(sessions: list[Path], folder: Path) -> Path:
    """A folder of links to the chosen sessions (and their sub-agent folders), one per session."""
    for i, path in enumerate(sessions):
        target = folder / f"s{i:03d}"
        target.mkdir(parents=True)
        (target / path.name).symlink_to(path)
        subagents = path.with_suffix("") / "subagents"
        if subagents.is_dir():
            (target / path.stem).mkdir()
            (target / path.stem / "subagents").symlink_to(subagents)
    return folder


@contextmanager
def statement_counter() -> Iterator[list[int]]:
    """Counts the statements psycopg sends (``Cursor.execute`` / ``executemany``) while inside."""
    import psycopg

    counted = [0]
    originals = {name: getattr(psycopg.Cursor, name) for name in ("execute", "executemany")}

    def wrap(original: Any) -> Any:
        def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
            counted[0] += 1
            return original(self, *args, **kwargs)

        return counting

    for name, original in originals.items():
        setattr(psycopg.Cursor, name, wrap(original))
    try:
        yield counted
    finally:
        for name, original in originals.items():
            setattr(psycopg.Cursor, name, original)


def queries(sessions: list[Path], count: int) -> list[str]:
    """The first user prompt's first eight words of each session, up to ``count``."""
    out: list[str] = []
    for path in sessions:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            message = record.get("message") if isinstance(record, dict) else None
            if record.get("type") != "user" or not isinstance(message, dict):
                continue
            content = message.get("content")
            text = content if isinstance(content, str) else ""
            words = [w for w in text.split() if w.isalnum()][:8]
            if len(words) >= 3:
                out.append(" ".join(words))
                break
        if len(out) == count:
            break
    return out


def measure(folder: Path, overrides: dict[str, Any], home: Path, asked: list[str], embed: bool) -> dict[str, Any]:
    """First push, no-change push and searches of one store; statements sent when it is PostgreSQL."""
    os.environ["CAUSANTIC_HOME"] = str(home)
    mode = "hybrid" if embed else "keyword"
    from causantic.config import Config
    from causantic.facade import Memory
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    config = Config().with_overrides(overrides)
    out: dict[str, Any] = {}
    with open_services(config) as services:
        with statement_counter() as sent:
            start = time.perf_counter()
            first = ingest_paths(services, [folder], embed=embed, workers=2)
            out["first_push_s"] = time.perf_counter() - start
        out["first_push_statements"] = sent[0]
        out["chunks"] = first.chunks_added
        with statement_counter() as sent:
            start = time.perf_counter()
            again = ingest_paths(services, [folder], embed=embed, workers=2)
            out["no_change_push_s"] = time.perf_counter() - start
        out["no_change_statements"] = sent[0]
        assert again.chunks_added == 0 and again.files_unchanged == first.files, "the second push read something"
    times: list[float] = []
    statements: list[int] = []
    with Memory(config=config) as memory:
        memory.search(asked[0], mode=mode)  # the first opens connections and loads the search stack
        for query in asked:
            with statement_counter() as sent:
                start = time.perf_counter()
                memory.search(query, mode=mode)
                times.append(time.perf_counter() - start)
            statements.append(sent[0])
    out["search_median_ms"] = statistics.median(times) * 1000
    out["search_p95_ms"] = sorted(times)[max(0, round(0.95 * len(times)) - 1)] * 1000
    out["search_statements"] = statistics.median(statements)
    out["cli_search_s"] = statistics.median(cli_search(home, overrides, asked[0], mode) for _ in range(3))
    return out


def cli_search(home: Path, overrides: dict[str, Any], query: str, mode: str) -> float:
    """Seconds of ``causantic search QUERY`` in a fresh process, configured through the environment."""
    names = {
        "storage.backend": "CAUSANTIC_STORAGE_BACKEND",
        "storage.postgresUrl": "CAUSANTIC_STORAGE_POSTGRES_URL",
        "team.user": "CAUSANTIC_TEAM_USER",
        "team.shareProjects": "CAUSANTIC_TEAM_SHARE_PROJECTS",
    }
    env = {**os.environ, "CAUSANTIC_HOME": str(home), **{names[k]: str(v) for k, v in overrides.items()}}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "causantic", "search", query, "--mode", mode, "--json"],
        env=env,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's best (lowest) over the runs; counts are the same in every run."""
    return {key: min(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=2, help="stores built per backend, alternating")
    parser.add_argument("--embed", action="store_true", help="include embedding in the pushes")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"The corpus is not at {CORPUS}: this benchmark reads ../shared/corpus/claude-code.")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sessions = pick_sessions(args.sessions)
    asked = queries(sessions, args.queries)
    result: dict[str, Any] = {
        "sessions": len(sessions),
        "transcript_mb": round(sum(p.stat().st_size for p in sessions) / 1e6, 1),
        "queries": len(asked),
        "embed": args.embed,
        "load_before": round(os.getloadavg()[0], 2),
    }
    with tempfile.TemporaryDirectory(prefix="causantic-team-push-") as tmp, _postgres.databases() as database:
        folder = link_folder(sessions, Path(tmp) / "sessions")
        runs: dict[str, list[dict[str, Any]]] = {"postgres": [], "sqlite": []}
        for i in range(args.repeat):
            overrides = _postgres.settings(database("team_push")[0])
            runs["postgres"].append(measure(folder, overrides, Path(tmp) / f"team-{i}", asked, args.embed))
            runs["sqlite"].append(measure(folder, {}, Path(tmp) / f"sqlite-{i}", asked, args.embed))
        team, sqlite = best(runs["postgres"]), best(runs["sqlite"])
    result["load_after"] = round(os.getloadavg()[0], 2)
    result["sqlite"], result["postgres"] = sqlite, team
    print(
        f"{len(sessions)} sessions ({result['transcript_mb']} MB, {team['chunks']} chunks), "
        f"{len(asked)} queries; embedding {'on' if args.embed else 'off'}"
    )
    print(f"{'':24}{'PostgreSQL':>12}{'SQLite':>12}{'ratio':>8}")
    for key, label, unit in (
        ("first_push_s", "first push", "s"),
        ("no_change_push_s", "no-change push", "s"),
        ("search_median_ms", "search median", "ms"),
        ("search_p95_ms", "search p95", "ms"),
        ("cli_search_s", "causantic search (CLI)", "s"),
    ):
        ratio = team[key] / sqlite[key] if sqlite[key] else float("nan")
        result[f"{key}_ratio"] = round(ratio, 2)
        print(f"{label:24}{team[key]:>10.3f}{unit:>2}{sqlite[key]:>10.3f}{unit:>2}{ratio:>7.2f}x")
    print(
        f"statements sent to the server: {team['first_push_statements']} for the first push, "
        f"{team['no_change_statements']} for the no-change push, {team['search_statements']:.0f} per search "
        f"(median); at a 10 ms round trip each costs about that many times 10 ms more than here"
    )
    print(f"load average: {result['load_before']} before, {result['load_after']} after")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
