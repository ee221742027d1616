"""`causantic ingest` killed (SIGKILL) at random moments, then run again: does memory end as one
uninterrupted ingest leaves it?

Usage: python benchmarks/ingest_kills.py [--runs 20] [--kills 1] [--seed 1] [--target DIR] [--base DIR] [--keep DIR]

One uninterrupted ``causantic ingest TARGET`` (embedding, topics) into a fresh CAUSANTIC_HOME is the
reference: its files, chunks to embed, and the seconds it spent after embedding (topics, the ANN
index, giving space back). Each run then starts from an empty home and kills ``--kills`` ingests of
the same target, each at a random moment of one phase, taken in turn: while files are read and their
chunks and edges written (after a random number of files, as the run's status file counts them),
while vectors are embedded (after a random number of them), after embedding (a random delay within
the reference's tail), and at a random delay over the whole run. It checks the store each kill left,
then runs the ingest once more to its end and compares the store with the reference. The target is
read where it lies (``../shared/corpus`` by default); nothing is copied. With ``--base``, every home
(the reference's too) first holds an uninterrupted ingest of that folder: the killed ingests then add
to a memory with topics, as the hooks' ingests do, instead of forming its first topics.

Checked after each kill: SQLite's integrity check, foreign keys, FTS5's integrity check against the
chunks table, no vector or edge without its chunk. Checked after the completing run: the same chunk
ids and texts, edges, sessions and titles, file marks, per-session stem counts, a vector for every
chunk and none else, one keyword-index row per chunk, the same topics (their members), no leftover
temporary files in the home, ``causantic stats`` and ``causantic search`` succeed.

Printed: each run's kill moments (seconds, and the phase the killed run's status file showed), and
what differed; then runs, kills, and failed runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
CORPUS = REPO.parent / "shared" / "corpus"


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    env.update(CAUSANTIC_HOME=str(home), HF_HUB_OFFLINE="1")
    return env


def _ingest(home: Path, target: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "causantic", "ingest", "--json", str(target)],
        env=_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _status(home: Path, pid: int) -> dict[str, Any] | None:
    """The ingest's status file (causantic.ingest_runs), or None before it is written."""
    try:
        return json.loads((home / "run" / f"ingest-{pid}.json").read_text())  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return None


def _phase(run: dict[str, Any] | None) -> str:
    """What an ingest's status file says it is doing."""
    if run is None:
        return "starting"
    if run["phase"] == "embedding":
        if run["embedTotal"] and run["embedded"] >= run["embedTotal"]:
            return "after embedding"
        return f"embedding {run['embedded']}/{run['embedTotal']}"
    if run["phase"] == "reading":
        return f"reading {run['filesDone']}/{run['filesTotal']}"
    return str(run["phase"])


@dataclass
class Timeline:
    """The reference run, as its status file showed it."""

    files: int = 0
    to_embed: int = 0
    seconds: float = 0.0
    tail: float = 0.0  # after the last vector: topics, the ANN index, giving space back


def _reference(home: Path, target: Path) -> Timeline:
    proc = _ingest(home, target)
    started = time.perf_counter()
    timeline = Timeline()
    embedded_at = None
    while proc.poll() is None:
        run = _status(home, proc.pid)
        if run is not None:
            timeline.files = run["filesTotal"] or timeline.files
            timeline.to_embed = run["embedTotal"] or timeline.to_embed
            if embedded_at is None and _phase(run) == "after embedding":
                embedded_at = time.perf_counter()
        time.sleep(0.02)
    if proc.returncode != 0:
        raise SystemExit(f"the uninterrupted ingest failed ({proc.returncode}): {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
    ended = time.perf_counter()
    timeline.seconds = ended - started
    timeline.tail = ended - (embedded_at or ended)
    return timeline


def _kill_somewhere(home: Path, target: Path, phase: int, reference: Timeline, rng: random.Random) -> tuple[str, bool]:
    """Start an ingest and kill it at a random moment of ``phase`` (0 reading, 1 embedding, 2 after
    embedding, 3 anywhere); what it was doing then, and whether it was still running."""
    files = rng.randrange(max(reference.files, 1))
    vectors = rng.randrange(max(reference.to_embed, 1))
    delay = rng.uniform(0, 0.7 * reference.tail) if phase == 2 else rng.uniform(0, 1.1 * reference.seconds)
    proc = _ingest(home, target)
    started = time.perf_counter()
    run = None
    while proc.poll() is None:
        run = _status(home, proc.pid)
        if phase == 3 and time.perf_counter() - started >= delay:
            break
        if run is not None and run["phase"] != "finding files":
            if phase == 0 and (run["phase"] != "reading" or run["filesDone"] >= files):
                break
            if phase == 1 and run["phase"] == "embedding" and run["embedded"] >= vectors:
                break
            if phase == 2 and _phase(run) == "after embedding":
                time.sleep(delay)
                break
        time.sleep(0.005)
    if phase == 0:  # the status file is written at most once a second: land anywhere within that second
        time.sleep(rng.uniform(0, 1))
    said = _phase(_status(home, proc.pid) or run)
    proc.send_signal(signal.SIGKILL)
    code = proc.wait()
    return (said if code == -signal.SIGKILL else f"(had ended: {code})"), code == -signal.SIGKILL


def _check_after_kill(db: Path) -> list[str]:
    if not db.exists():
        return []
    problems = []
    with sqlite3.connect(db, timeout=30) as conn:
        if (ok := conn.execute("PRAGMA integrity_check").fetchall()) != [("ok",)]:
            problems.append(f"integrity_check: {ok[:3]}")
        if fk := conn.execute("PRAGMA foreign_key_check").fetchall():
            problems.append(f"foreign keys: {len(fk)} rows")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "chunks_fts" in tables:
            try:
                conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
            except sqlite3.DatabaseError as exc:
                problems.append(f"fts: {exc}")
        if "vectors" in tables:
            orphans = conn.execute("SELECT COUNT(*) FROM vectors WHERE chunk_id NOT IN (SELECT id FROM chunks)")
            if n := orphans.fetchone()[0]:
                problems.append(f"{n} vectors without a chunk")
        if "edges" in tables:
            dangling = conn.execute(
                "SELECT COUNT(*) FROM edges WHERE source_chunk_id NOT IN (SELECT id FROM chunks)"
                " OR target_chunk_id NOT IN (SELECT id FROM chunks)"
            )
            if n := dangling.fetchone()[0]:
                problems.append(f"{n} edges without a chunk")
    return problems


def _contents(db: Path) -> dict[str, Any]:
    """What a user's memory is, table by table, free of row ids and times."""
    with sqlite3.connect(db, timeout=30) as conn:
        q = conn.execute
        return {
            "chunks": sorted(q("SELECT id, content_hash, turn_index, part FROM chunks").fetchall()),
            "edges": sorted(q("SELECT source_chunk_id, target_chunk_id, reference_type FROM edges").fetchall()),
            "sessions": sorted(q("SELECT id, started_at, ended_at, title FROM sessions").fetchall()),
            "projects": sorted(q("SELECT path, name FROM projects").fetchall()),
            "files": sorted(q("SELECT path, size, skipped_lines, rules_version FROM files").fetchall()),
            "session stems": sorted(q("SELECT session_id, stem, chunks FROM session_stems").fetchall()),
            "vectors": sorted(q("SELECT chunk_id, model, content_hash FROM vectors").fetchall()),
            "chunks without a vector": q(
                "SELECT COUNT(*) FROM chunks WHERE id NOT IN (SELECT chunk_id FROM vectors)"
            ).fetchone()[0],
            "keyword rows": q("SELECT COUNT(*) FROM chunks_fts").fetchone()[0],
            "topics": sorted(
                tuple(sorted(r[0].split(",")))
                for r in q("SELECT group_concat(chunk_id) FROM chunk_clusters GROUP BY cluster_id")
            ),
            "projects to relink": q("SELECT COUNT(*) FROM projects WHERE needs_relink = 1").fetchone()[0],
        }


def _leftovers(home: Path) -> list[str]:
    """Files a killed run left in the home that no run will remove (temporary copies, stale status)."""
    left = [p for p in home.rglob("*") if p.is_file() and (".tmp" in p.name or p.parent.name == "run")]
    return sorted(str(p.relative_to(home)) for p in left)


def _finish(home: Path, target: Path) -> tuple[int, str]:
    done = _ingest(home, target)
    out, err = done.communicate(timeout=1800)
    return done.returncode, (err.decode(errors="replace")[-2000:] if done.returncode else "")


def _diff(reference: dict[str, Any], got: dict[str, Any]) -> list[str]:
    problems = []
    for key, want in reference.items():
        have = got[key]
        if have == want:
            continue
        if isinstance(want, list):
            missing, extra = set(want) - set(have), set(have) - set(want)
            example = str(sorted(missing or extra)[0])[:100]
            problems.append(f"{key}: {len(missing)} missing, {len(extra)} extra (e.g. {example})")
        else:
            problems.append(f"{key}: {have} (reference {want})")
    return problems


def _usable(home: Path) -> list[str]:
    problems = []
    for args in (("stats",), ("search", "error", "--json")):
        done = subprocess.run(
            [sys.executable, "-m", "causantic", *args], env=_env(home), capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0 or "Traceback" in done.stderr:
            problems.append(f"causantic {' '.join(args)} failed ({done.returncode}): {done.stderr[-300:]}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--kills", type=int, default=1, help="ingests killed in each run before the completing one")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target", type=Path, default=CORPUS)
    parser.add_argument("--base", type=Path, help="ingested whole into every home first")
    parser.add_argument("--keep", type=Path, help="keep the homes here (default: a temporary folder, removed)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = args.keep or Path(tempfile.mkdtemp(prefix="causantic-kills-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        reference_home = root / "reference"
        if args.base:
            base = root / "base"
            if _finish(base, args.base)[0] != 0:
                raise SystemExit(f"the ingest of {args.base} failed")
            shutil.copytree(base, reference_home)
        timeline = _reference(reference_home, args.target)
        reference = _contents(reference_home / "memory.db")
        print(
            f"reference: {len(reference['chunks']):,} chunks, {len(reference['edges']):,} edges, "
            f"{len(reference['vectors']):,} vectors, {len(reference['topics'])} topics in {timeline.seconds:.1f} s "
            f"({timeline.tail:.1f} s after embedding)"
        )
        failed = 0
        kills = 0
        phases = ("reading", "embedding", "after embedding", "anywhere")
        for run in range(args.runs):
            home = root / f"run-{run:02d}"
            if args.base:
                shutil.copytree(root / "base", home)
            moments = []
            problems: list[str] = []
            for k in range(args.kills):
                phase = (run * args.kills + k) % len(phases)
                said, killed = _kill_somewhere(home, args.target, phase, timeline, rng)
                kills += killed
                moments.append(f"{phases[phase]}: {said}")
                problems += [f"after the kill ({said}): {p}" for p in _check_after_kill(home / "memory.db")]
            code, err = _finish(home, args.target)
            if code != 0:
                problems.append(f"the completing ingest failed ({code}): {err}")
            else:
                problems += _diff(reference, _contents(home / "memory.db"))
                problems += _usable(home)
                problems += [f"left behind: {p}" for p in _leftovers(home)]
            failed += bool(problems)
            print(f"run {run + 1:2d}: killed {'; '.join(moments)}: {'FAILED' if problems else 'same as reference'}")
            for problem in problems:
                print(f"    {problem}")
            if not args.keep:
                shutil.rmtree(home, ignore_errors=True)
        print(f"\n{args.runs} runs, {kills} ingests killed mid-run, {failed} runs failed")
        return 1 if failed else 0
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
