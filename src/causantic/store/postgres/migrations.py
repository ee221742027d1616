"""Numbered schema migrations of the team database, applied in order, each in its own transaction.

Versioned like SQLite's (:mod:`causantic.store.migrations`): ``schema_migrations`` records what ran,
never edit a migration that has shipped, add the next one. Several members may open the database
at once: a transaction-scoped advisory lock makes one of them migrate while the others wait.

The schema is SQLite's with three differences. Every content row carries ``member`` (whose machine
ingested it, shown with results and filtered by ``--user``) and ``owner_role`` (the database role
that wrote it, which row-level security checks). Keyword search uses a generated ``tsvector``
(:mod:`causantic.store.postgres.keyword` says how it matches SQLite's tokenizer). Vectors are pgvector
values with one HNSW index per model, made by :class:`causantic.store.postgres.vectors.PgVectorIndex`.
Times stay fixed-width ISO text, as in SQLite, so both backends sort and compare them alike.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

# Any constant: the key of the advisory lock that serialises migrations ("causantic" in ASCII).
_MIGRATION_LOCK = 0x636175736E746963


def m001_core_tables(conn: Any) -> None:
    conn.execute(
        """
        CREATE EXTENSION IF NOT EXISTS vector;
        -- Code identifiers are found as SQLite's unicode61 tokenizer finds them: the text is split at
        -- every character that is not a letter or digit (see keyword.py), then English stemming.
        CREATE TEXT SEARCH CONFIGURATION causantic (COPY = english);
        CREATE TABLE projects (
            id BIGSERIAL PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            needs_relink BOOLEAN NOT NULL DEFAULT FALSE,
            created_at TEXT NOT NULL
        );
        CREATE TABLE project_aliases (
            cwd TEXT PRIMARY KEY,
            project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE
        );
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            started_at TEXT,
            ended_at TEXT,
            team_name TEXT,
            source TEXT NOT NULL DEFAULT 'claude-code',
            title TEXT,
            member TEXT NOT NULL,
            owner_role NAME NOT NULL DEFAULT current_user
        );
        CREATE INDEX sessions_project ON sessions(project_id, started_at);
        CREATE TABLE files (
            member TEXT NOT NULL,               -- paths are per machine: two members may share one
            path TEXT NOT NULL,
            size BIGINT NOT NULL,
            mtime_ns BIGINT NOT NULL,
            skipped_lines INTEGER NOT NULL DEFAULT 0,
            ingested_at TEXT NOT NULL,
            owner_role NAME NOT NULL DEFAULT current_user,
            PRIMARY KEY (member, path)
        );
        CREATE TABLE chunks (
            rowid BIGSERIAL PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            project_id BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            agent TEXT NOT NULL DEFAULT 'main',
            agent_id TEXT,
            team_name TEXT,
            turn_index INTEGER NOT NULL,
            part INTEGER NOT NULL,
            start_time TEXT NOT NULL,
            end_time TEXT NOT NULL,
            content TEXT NOT NULL,
            search_terms TEXT NOT NULL DEFAULT '',
            content_hash TEXT NOT NULL,
            approx_tokens INTEGER NOT NULL,
            tool_use_count INTEGER NOT NULL DEFAULT 0,
            code_block_count INTEGER NOT NULL DEFAULT 0,
            has_thinking INTEGER NOT NULL DEFAULT 0,
            message_uuids TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT 'claude-code',
            member TEXT NOT NULL,
            owner_role NAME NOT NULL DEFAULT current_user,
            tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('causantic', regexp_replace(content, '[^[:alnum:]]+', ' ', 'g')), 'A')
                || setweight(to_tsvector('causantic', search_terms), 'B')
            ) STORED
        );
        CREATE INDEX chunks_session ON chunks(session_id, start_time);
        CREATE INDEX chunks_project_time ON chunks(project_id, start_time);
        CREATE INDEX chunks_agent ON chunks(agent, start_time);
        CREATE INDEX chunks_source ON chunks(source, start_time);
        CREATE INDEX chunks_member ON chunks(member);
        CREATE INDEX chunks_tsv ON chunks USING gin(tsv);
        CREATE TABLE edges (
            id BIGSERIAL PRIMARY KEY,
            source_chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            target_chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            edge_type TEXT NOT NULL DEFAULT 'forward',
            reference_type TEXT NOT NULL,
            initial_weight DOUBLE PRECISION NOT NULL DEFAULT 1.0,
            created_at TEXT NOT NULL,
            UNIQUE (source_chunk_id, target_chunk_id, reference_type)
        );
        CREATE INDEX edges_target ON edges(target_chunk_id);
        CREATE INDEX edges_type ON edges(reference_type);
        CREATE TABLE clusters (
            id BIGSERIAL PRIMARY KEY,
            label TEXT NOT NULL,
            model TEXT NOT NULL,
            centroid BYTEA NOT NULL,
            size INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE chunk_clusters (
            chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            cluster_id BIGINT NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
            distance DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (chunk_id, cluster_id)
        );
        CREATE INDEX chunk_clusters_cluster ON chunk_clusters(cluster_id, distance);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE forgotten (chunk_id TEXT PRIMARY KEY, forgotten_at TEXT NOT NULL);
        CREATE TABLE vectors (
            seq BIGSERIAL PRIMARY KEY,
            chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            embedding vector NOT NULL,          -- unit length; HNSW index per model (dimensions differ)
            UNIQUE (chunk_id, model)
        );
        CREATE INDEX vectors_model_hash ON vectors(model, content_hash);
        """
    )


MIGRATIONS: tuple[Callable[[Any], None], ...] = (m001_core_tables,)


def migrate(conn: Any) -> int:
    """Apply pending migrations; return the schema version now in force."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " applied_at TEXT NOT NULL)"
        )
        done = {row["version"] for row in conn.execute("SELECT version FROM schema_migrations")}
    for version, migration in enumerate(MIGRATIONS, start=1):
        if version in done:
            continue
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            # Another member may have applied it while we waited for the lock.
            if conn.execute("SELECT 1 FROM schema_migrations WHERE version = %s", (version,)).fetchone():
                continue
            migration(conn)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (%s, %s, %s)",
                (version, migration.__name__, datetime.now(UTC).isoformat()),
            )
    return len(MIGRATIONS)
