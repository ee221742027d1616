"""Forgetting gives back the keyword index's space too, and vacuum leaves no deleted entry in it.

FTS5 deletes a row by adding a tombstone for each of its terms, kept until a merge reaches it, so
forgetting most of memory grew the index (docs/measurements.md). Real SQLite files, real transcripts;
the index's size is read from the file (``dbstat``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from transcript_files import write_session

from causantic.facade import Memory

SHOP = "/work/shop"
BLOG = "/work/blog"


def _transcripts(folder: Path) -> Path:
    """Twelve sessions of /work/shop and two of /work/blog, each turn distinct words."""
    for n in range(14):
        turns = [
            (f"step {n}.{t}: " + " ".join(f"term{n}x{t}x{w}" for w in range(200)), f"done {n}.{t}") for t in range(10)
        ]
        write_session(folder, SHOP if n < 12 else BLOG, f"{n:08x}-0000-4000-8000-{n:012d}", turns)
    return folder


def _keyword_index_bytes(home: Path) -> int:
    with sqlite3.connect(home / "memory.db") as conn:
        return int(conn.execute("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'chunks_fts%'").fetchone()[0])


def test_forgetting_most_of_memory_shrinks_the_keyword_index_with_it(tmp_path: Path, causantic_home: Path) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")], embed=False)
        whole = _keyword_index_bytes(causantic_home)
        memory.forget("shop", dry_run=False)
        left = _keyword_index_bytes(causantic_home)
        found = memory.search("term13x4x7", limit=3)

    # Two sessions of fourteen are left: their index, not fourteen sessions' and tombstones for twelve.
    assert left < whole / 3
    assert found.hits and "term13x4x7" in found.hits[0].chunk.content


def test_forgetting_a_session_at_a_time_keeps_the_keyword_index_from_growing(
    tmp_path: Path, causantic_home: Path
) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")], embed=False)
        whole = _keyword_index_bytes(causantic_home)
        for n in range(6):  # each a fourteenth of memory or less: none alone is worth rewriting the index
            assert memory.forget("shop", session_id=f"{n:08x}", dry_run=False).deleted
        left = _keyword_index_bytes(causantic_home)
        found = memory.search("term9x4x7", limit=3)

    assert left < whole  # eight sessions of fourteen left, not fourteen sessions' entries and six's tombstones
    assert found.hits and "term9x4x7" in found.hits[0].chunk.content


def test_vacuum_leaves_no_deleted_entry_in_the_keyword_index(tmp_path: Path, causantic_home: Path) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")], embed=False)
        whole = _keyword_index_bytes(causantic_home)
        small = memory.forget("blog", session_id="0000000c", dry_run=False)  # one session of fourteen
        assert small.deleted and _keyword_index_bytes(causantic_home) > whole  # its tombstones, for now
        memory.vacuum()
        assert _keyword_index_bytes(causantic_home) < whole
        assert memory.search("term12x4x7", limit=3).nothing_relevant
        assert memory.search("term13x4x7", limit=3).hits
