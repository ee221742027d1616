"""Forgetting frees disk space, and says so: a memory.db made by this release gives the deleted rows'
pages back to the disk at once (incremental auto-vacuum); one made before keeps them as free space
inside, which forget and ``causantic stats`` name, until ``causantic vacuum`` gives it back (and
turns the file's auto-vacuum on, so the next forget gives its space back by itself).

Real SQLite files in the test's CAUSANTIC_HOME, ingested from real transcript files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from chunk_records import chunk_record
from click.testing import CliRunner
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.facade import Memory
from causantic.store.memory import MemoryStore

SHOP = "/work/shop"
BLOG = "/work/blog"


def _transcripts(folder: Path, first: int = 0) -> Path:
    """Six sessions of /work/shop and one of /work/blog, each turn a few KB of distinct text; the
    sessions' ids count from ``first``."""
    for n in range(first, first + 7):
        cwd = SHOP if n < first + 6 else BLOG
        turns = [
            (f"step {n}.{t}: " + " ".join(f"word{n}x{t}x{w}" for w in range(300)), f"done {n}.{t} " * 200)
            for t in range(12)
        ]
        write_session(folder, cwd, f"{n:08x}-0000-4000-8000-{n:012d}", turns)
    return folder


def _files(home: Path) -> int:
    return sum(p.stat().st_size for p in (home / "memory.db", home / "memory.db-wal") if p.exists())


def _made_before(home: Path) -> None:
    """A memory.db as an earlier release made it: WAL, no auto-vacuum."""
    home.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(home / "memory.db") as conn:
        conn.execute("PRAGMA journal_mode = WAL")


def test_forgetting_a_project_makes_a_new_memory_file_smaller(tmp_path: Path, causantic_home: Path) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")], embed=False)
        before = _files(causantic_home)
        result = memory.forget("shop", dry_run=False)
        stats = memory.stats()

    assert result.deleted > 0
    after = _files(causantic_home)
    assert after < before / 2  # six of the seven sessions went, and their pages with them
    assert result.freed_bytes == before - after
    assert result.free_bytes == 0
    assert stats.free_bytes == 0
    assert stats.journal_bytes == 0


def test_a_file_made_before_keeps_the_space_inside_and_says_so_until_vacuum(
    tmp_path: Path, causantic_home: Path
) -> None:
    _made_before(causantic_home)
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")], embed=False)
        result = memory.forget("shop", dry_run=False)
        stats = memory.stats()

    assert result.deleted > 0
    assert result.free_bytes > 0
    assert stats.free_bytes == result.free_bytes

    runner = CliRunner()
    forgot = runner.invoke(cli, ["forget", "blog", "--before", "2030-01-01", "--yes"], catch_exceptions=False)
    assert "free space, reused by later ingests; `causantic vacuum` gives it back to the disk" in forgot.output
    shown = runner.invoke(cli, ["stats"], catch_exceptions=False)
    assert "free space" in shown.output
    assert "causantic vacuum" in shown.output  # the note, on stderr (CliRunner mixes it in)

    before = _files(causantic_home)
    vacuumed = runner.invoke(cli, ["vacuum"], catch_exceptions=False)
    assert vacuumed.exit_code == 0
    assert "given back to the disk" in vacuumed.output
    assert _files(causantic_home) < before - result.free_bytes // 2

    # From now on this file gives a forget's space back by itself.
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "again", first=7)], embed=False)
    before = _files(causantic_home)
    forgot = runner.invoke(cli, ["forget", "shop", "--yes"], catch_exceptions=False)
    assert "memory.db is" in forgot.output and "smaller" in forgot.output
    assert _files(causantic_home) < before / 2
    with Memory(causantic_home) as memory:
        assert memory.stats().free_bytes == 0


def test_forget_as_json_reports_the_space(tmp_path: Path, causantic_home: Path) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")], embed=False)

    shown = CliRunner().invoke(cli, ["forget", "shop", "--yes", "--json"], catch_exceptions=False)
    out = json.loads(shown.output)
    assert out["deleted"] > 0
    assert out["freed_bytes"] > 0
    assert out["size_bytes"] == _files(causantic_home)


def test_a_writer_holding_the_lock_leaves_the_space_for_later_without_failing_the_deletion(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with MemoryStore(path, busy_timeout_ms=50) as store:
        project = store.resolve_project("/work/shop", "/work/shop")
        with store.atomic():
            store.save_session(project, "s1", [chunk_record(i, content=f"text {i} " + "x" * 4000) for i in range(200)])
        store.delete_chunks([f"c{i}" for i in range(200)])  # settles nothing yet: free pages inside
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # another process's write transaction
            store.release_space()  # waits busy_timeout for the lock, then leaves the pages free
            assert store.space().free_bytes > 0
            other.execute("COMMIT")
        finally:
            other.close()
        before = store.space().total
        store.release_space()
        assert store.space().free_bytes == 0
        assert store.space().total < before / 4
