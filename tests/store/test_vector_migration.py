"""m005 moves vectors into SQLite: a store written by the LanceDB era re-embeds on the next run.

The old ``embeddings`` table only said which chunks had a vector in LanceDB; it goes, so every chunk
is a chunk without a vector until ``causantic embed`` (or the next ingest) writes one into SQLite.
"""

from __future__ import annotations

import json
from pathlib import Path

from causantic.store import migrations
from causantic.store.memory import MemoryStore
from causantic.store.sqlite import atomic, connect


def test_a_store_from_before_m005_reports_its_chunks_as_needing_vectors(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    conn = connect(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for version, migration in enumerate(migrations.MIGRATIONS[:4], start=1):
        with atomic(conn):
            migration(conn)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 'then')", (version, migration.__name__))
    with atomic(conn):
        conn.execute("INSERT INTO projects(id, path, name, created_at) VALUES (1, '/p', 'p', 'then')")
        conn.execute("INSERT INTO sessions(id, project_id) VALUES ('s', 1)")
        conn.execute(
            "INSERT INTO chunks(id, session_id, project_id, turn_index, part, start_time, end_time, content,"
            " content_hash, approx_tokens, message_uuids, created_at) VALUES ('c1', 's', 1, 0, 0, 't', 't',"
            " 'text', 'h1', 1, ?, 'then')",
            (json.dumps([]),),
        )
        conn.execute("INSERT INTO embeddings(chunk_id, model, content_hash) VALUES ('c1', 'all-minilm-l6-v2', 'h1')")
    conn.close()

    with MemoryStore(path) as store:
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "vectors" in tables and "embeddings" not in tables
        assert [r.id for r in store.chunks_needing_vectors("all-minilm-l6-v2", 10)] == ["c1"]
