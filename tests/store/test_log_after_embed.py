"""``causantic embed`` (and ``reindex``) leave the write-ahead log empty, as ingest does, while another
connection keeps memory open (an MCP server would): the vectors they write went through the log, and
SQLite would keep it at its largest size until every connection closed. Real SQLite file, the real
embedding model."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from transcript_files import write_session

from causantic.facade import Memory


def test_embedding_leaves_the_log_empty_while_another_connection_stays_open(
    tmp_path: Path, causantic_home: Path
) -> None:
    for n in range(3):
        turns = [(f"how do we retry the upload {n}.{t}", f"wrap the upload {n}.{t} in a retry loop") for t in range(10)]
        write_session(tmp_path / "projects", "/work/shop", f"{n:08x}-0000-4000-8000-{n:012d}", turns)
    with Memory(causantic_home) as memory:
        memory.ingest([tmp_path / "projects"], embed=False)
        other = sqlite3.connect(f"file:{causantic_home / 'memory.db'}?mode=ro", uri=True)
        try:
            other.execute("SELECT COUNT(*) FROM chunks").fetchone()  # connected: the log outlives our writes
            assert memory.embed_pending().vectors_added == 30
            wal = causantic_home / "memory.db-wal"
            assert not wal.exists() or wal.stat().st_size == 0
        finally:
            other.close()
