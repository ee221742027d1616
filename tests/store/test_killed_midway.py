"""A vacuum or a prune killed midway (SIGKILL: a crash, a closed laptop) leaves a consistent store.

Real processes on real SQLite files: ``causantic vacuum`` and ``causantic prune`` are killed once
their write-ahead log shows they are writing. Afterwards the file passes SQLite's and FTS5's own
integrity checks and its foreign keys hold; a killed vacuum leaves memory as it was, and running
the killed prune again leaves the same chunks and edges as a prune never interrupted."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_support import causantic, subprocess_env
from transcript_files import write_session

from causantic.facade import Memory

pytestmark = pytest.mark.slow


def _memory(home: Path, folder: Path, *, made_before: bool = False) -> None:
    """Three projects of sessions over four weeks of November, every turn distinct text."""
    if made_before:  # as an earlier release made it: no auto-vacuum, so vacuum has free pages to give back
        home.mkdir(parents=True)
        with sqlite3.connect(home / "memory.db") as conn:
            conn.execute("PRAGMA journal_mode = WAL")
    for n in range(84):
        turns = [
            (f"step {n}.{t}: " + " ".join(f"w{n}x{t}x{w}" for w in range(250)), f"done {n}.{t} " * 60)
            for t in range(12)
        ]
        cwd = ("/work/shop", "/work/blog", "/work/api")[n % 3]
        write_session(folder, cwd, f"{n:08x}-0000-4000-8000-{n:012d}", turns, day=1 + n // 3)
    with Memory(home) as memory:
        memory.ingest([folder], embed=False)


def _contents(home: Path) -> tuple[set[str], set[tuple[str, str, str]]]:
    with sqlite3.connect(home / "memory.db") as conn:
        chunks = {row[0] for row in conn.execute("SELECT id FROM chunks")}
        edges = conn.execute("SELECT source_chunk_id, target_chunk_id, reference_type FROM edges").fetchall()
    return chunks, set(edges)


def _consistent(home: Path) -> None:
    with sqlite3.connect(home / "memory.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        # FTS5's own check, with rank 1: the index also matches the chunks table it indexes.
        conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")


def _killed_while_writing(home: Path, *args: str, logged: int) -> None:
    """Run ``causantic ARGS`` and kill it once its write-ahead log holds ``logged`` bytes."""
    wal = home / "memory.db-wal"
    process = subprocess.Popen(
        [sys.executable, "-m", "causantic", *args],
        env=subprocess_env(CAUSANTIC_HOME=str(home)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while process.poll() is None:
            if wal.exists() and wal.stat().st_size >= logged:
                os.kill(process.pid, signal.SIGKILL)
                break
            time.sleep(0.002)
    finally:
        code = process.wait(timeout=120)
    assert code == -signal.SIGKILL, f"causantic {' '.join(args)} ended ({code}) before it was killed"


def test_a_vacuum_killed_midway_leaves_memory_as_it_was_and_the_next_one_completes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _memory(home, tmp_path / "projects", made_before=True)
    assert causantic("forget", "shop", "--yes", env=subprocess_env(CAUSANTIC_HOME=str(home))).returncode == 0
    before = _contents(home)
    size = (home / "memory.db").stat().st_size

    _killed_while_writing(home, "vacuum", logged=size // 3)

    _consistent(home)
    assert _contents(home) == before
    done = causantic("vacuum", env=subprocess_env(CAUSANTIC_HOME=str(home)))
    assert done.returncode == 0 and "given back to the disk" in done.stdout
    _consistent(home)
    assert _contents(home) == before


def test_a_prune_killed_midway_leaves_a_consistent_store_and_running_it_again_finishes_the_job(tmp_path: Path) -> None:
    killed, calm = tmp_path / "killed", tmp_path / "calm"
    _memory(killed, tmp_path / "projects")
    shutil.copytree(killed, calm)
    prune = ("prune", "--before", "2026-11-15", "--yes")
    assert causantic(*prune, env=subprocess_env(CAUSANTIC_HOME=str(calm))).returncode == 0

    _killed_while_writing(killed, *prune, logged=1_000_000)

    _consistent(killed)
    assert causantic(*prune, env=subprocess_env(CAUSANTIC_HOME=str(killed))).returncode == 0
    _consistent(killed)
    assert _contents(killed) == _contents(calm)


def test_a_forget_killed_after_its_deletion_leaves_the_next_ingest_to_relink_the_sessions_around_it(
    tmp_path: Path,
) -> None:
    """A forget deletes its chunks in one transaction, then links the sessions on either side of
    them in another. Killed in between, the chain of the project's sessions stayed broken: nothing
    said it was to be redone, and the next ingest, with no file changed, left it."""
    killed, calm = tmp_path / "killed", tmp_path / "calm"
    _memory(killed, tmp_path / "projects")
    shutil.copytree(killed, calm)
    middle = f"{30:08x}-0000-4000-8000-{30:012d}"  # a session of the shop, with others before and after
    forget = ("forget", "shop", "--session", middle, "--yes")
    assert causantic(*forget, env=subprocess_env(CAUSANTIC_HOME=str(calm))).returncode == 0

    dies_before_relinking = (
        "import os, signal, sys\n"
        "import causantic.ingest.pipeline as pipeline\n"
        "pipeline.relink_sessions = lambda *_: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from causantic.cli.main import main\n"
        f"sys.argv = ['causantic', *{forget!r}]\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", dies_before_relinking], env=subprocess_env(CAUSANTIC_HOME=str(killed)), timeout=120
    )
    assert done.returncode == -signal.SIGKILL

    _consistent(killed)
    again = causantic(
        "ingest", "--no-embed", str(tmp_path / "projects"), env=subprocess_env(CAUSANTIC_HOME=str(killed))
    )
    assert again.returncode == 0, again.stderr
    assert _contents(killed) == _contents(calm)
