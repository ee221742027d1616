"""Numbered schema migrations, applied in order, each in its own transaction.

Never edit a migration that has shipped; add the next one. ``schema_migrations`` records what ran,
so opening an up-to-date database costs one query.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

from causantic import write_waits
from causantic.store.features import feature_values
from causantic.store.sqlite import atomic, fts5_available


def m001_core_tables(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        """
        CREATE TABLE projects (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,          -- canonical path: git root, worktrees resolved
            name TEXT NOT NULL,                 -- display name, unique (parents added on collision)
            needs_relink INTEGER NOT NULL DEFAULT 0,  -- cross-session edges to recompute
            created_at TEXT NOT NULL
        );
        CREATE TABLE project_aliases (          -- every cwd seen, resolved once
            cwd TEXT PRIMARY KEY,
            project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE
        );
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            started_at TEXT,
            ended_at TEXT,
            team_name TEXT
        );
        CREATE INDEX sessions_project ON sessions(project_id, started_at);
        CREATE TABLE files (                    -- ingest checkpoints
            path TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            skipped_lines INTEGER NOT NULL DEFAULT 0,
            ingested_at TEXT NOT NULL
        );
        CREATE TABLE chunks (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
            agent TEXT NOT NULL DEFAULT 'main',  -- 'main', or the agent's name
            agent_id TEXT,                       -- raw sub-agent id from the transcript
            team_name TEXT,
            turn_index INTEGER NOT NULL,
            part INTEGER NOT NULL,
            start_time TEXT NOT NULL,            -- ISO 8601 UTC, fixed width: sorts as text
            end_time TEXT NOT NULL,
            content TEXT NOT NULL,
            search_terms TEXT NOT NULL DEFAULT '',  -- identifier parts for the keyword index
            content_hash TEXT NOT NULL,
            approx_tokens INTEGER NOT NULL,
            tool_use_count INTEGER NOT NULL DEFAULT 0,
            code_block_count INTEGER NOT NULL DEFAULT 0,
            has_thinking INTEGER NOT NULL DEFAULT 0,
            message_uuids TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL
        );
        CREATE INDEX chunks_session ON chunks(session_id, start_time);
        CREATE INDEX chunks_project_time ON chunks(project_id, start_time);
        CREATE INDEX chunks_agent ON chunks(agent, start_time);
        CREATE TABLE edges (
            id INTEGER PRIMARY KEY,
            source_chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            target_chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            edge_type TEXT NOT NULL DEFAULT 'forward',
            reference_type TEXT NOT NULL,
            initial_weight REAL NOT NULL DEFAULT 1.0,
            created_at TEXT NOT NULL,
            UNIQUE (source_chunk_id, target_chunk_id, reference_type)
        );
        CREATE INDEX edges_target ON edges(target_chunk_id);
        CREATE INDEX edges_type ON edges(reference_type);
        CREATE TABLE embeddings (               -- which chunk texts have a vector in LanceDB
            chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            PRIMARY KEY (chunk_id, model)
        );
        CREATE TABLE clusters (
            id INTEGER PRIMARY KEY,
            label TEXT NOT NULL,
            model TEXT NOT NULL,
            centroid BLOB NOT NULL,
            size INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE chunk_clusters (
            chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            cluster_id INTEGER NOT NULL REFERENCES clusters(id) ON DELETE CASCADE,
            distance REAL NOT NULL,
            PRIMARY KEY (chunk_id, cluster_id)
        );
        CREATE INDEX chunk_clusters_cluster ON chunk_clusters(cluster_id, distance);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    )


def m002_keyword_index(conn: sqlite3.Connection) -> None:
    """FTS5 over chunk text and identifier parts, kept in step by triggers.

    Trigger: SQLite built without FTS5. Why: keyword search is an enhancement, not a requirement
    (seed 002, graceful degradation). Outcome: the migration records itself and search runs
    vector-only; ``meta.fts5`` says which.
    """
    if not fts5_available(conn):
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('fts5', 'unavailable')")
        return
    _run_script(
        conn,
        """
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            content, search_terms,
            content='chunks', content_rowid='rowid',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, content, search_terms)
            VALUES (new.rowid, new.content, new.search_terms);
        END;
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, content, search_terms)
            VALUES ('delete', old.rowid, old.content, old.search_terms);
        END;
        CREATE TRIGGER chunks_fts_update AFTER UPDATE OF content, search_terms ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, content, search_terms)
            VALUES ('delete', old.rowid, old.content, old.search_terms);
            INSERT INTO chunks_fts(rowid, content, search_terms)
            VALUES (new.rowid, new.content, new.search_terms);
        END;
        INSERT OR REPLACE INTO meta(key, value) VALUES ('fts5', 'available');
        """,
    )


def m003_forgotten(conn: sqlite3.Connection) -> None:
    """Tombstones: a forgotten chunk is not brought back when its transcript is ingested again."""
    _run_script(
        conn,
        """
        CREATE TABLE forgotten (
            chunk_id TEXT PRIMARY KEY,
            forgotten_at TEXT NOT NULL
        );
        """,
    )


def m004_keyword_scope(conn: sqlite3.Connection) -> None:
    """The keyword index learns each chunk's project and agent, as tokens in a third column.

    Why: a project or agent filter used to join every keyword match to ``chunks`` to test it (tens
    of thousands of lookups for a common word); FTS5 now intersects the match with the scope's
    tokens itself, and counts a word within a project as cheaply as in the whole store. The column
    is generated from ``project_id`` and ``agent`` (``zzp<id>zz zza<hex of agent>zz``: tokens no
    stemming changes and prose never holds), weighs nothing in BM25, and the index is rebuilt once.
    """
    row = conn.execute("SELECT value FROM meta WHERE key = 'fts5'").fetchone()
    if not row or row[0] != "available":
        return
    _run_script(
        conn,
        """
        ALTER TABLE chunks ADD COLUMN scope_terms TEXT
            GENERATED ALWAYS AS ('zzp' || project_id || 'zz zza' || hex(agent) || 'zz') VIRTUAL;
        DROP TRIGGER chunks_fts_insert;
        DROP TRIGGER chunks_fts_delete;
        DROP TRIGGER chunks_fts_update;
        DROP TABLE chunks_fts;
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            content, search_terms, scope_terms,
            content='chunks', content_rowid='rowid',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, content, search_terms, scope_terms)
            VALUES (new.rowid, new.content, new.search_terms, new.scope_terms);
        END;
        CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, content, search_terms, scope_terms)
            VALUES ('delete', old.rowid, old.content, old.search_terms, old.scope_terms);
        END;
        CREATE TRIGGER chunks_fts_update AFTER UPDATE OF content, search_terms, project_id, agent ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, content, search_terms, scope_terms)
            VALUES ('delete', old.rowid, old.content, old.search_terms, old.scope_terms);
            INSERT INTO chunks_fts(rowid, content, search_terms, scope_terms)
            VALUES (new.rowid, new.content, new.search_terms, new.scope_terms);
        END;
        INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
        """,
    )


def m005_vectors_in_sqlite(conn: sqlite3.Connection) -> None:
    """Vectors move from LanceDB into SQLite, one row per (chunk, model), deleted with their chunk.

    ``seq`` grows with every write (AUTOINCREMENT never reuses a value), so the derived ANN index
    knows which rows it holds: those up to the ``seq`` it was built at. The old ``embeddings``
    bookkeeping table said which chunks had a vector in LanceDB; the rows themselves now say it.
    Its chunks are embedded again by the next ``causantic embed`` or ingest; an old LanceDB folder
    under ``vectors/`` is no longer read and may be deleted.
    """
    _run_script(
        conn,
        """
        CREATE TABLE vectors (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            chunk_id TEXT NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            content_hash TEXT NOT NULL,          -- the chunk text's hash when it was embedded
            vector BLOB NOT NULL,                -- float32, unit length, little-endian
            UNIQUE (chunk_id, model)
        );
        CREATE INDEX vectors_model_seq ON vectors(model, seq);
        CREATE INDEX vectors_model_hash ON vectors(model, content_hash);
        DROP TABLE embeddings;
        """,
    )


def m006_sources(conn: sqlite3.Connection) -> None:
    """Which coding agent wrote each session and chunk: ``claude-code`` (all earlier rows), ``codex``
    or ``gemini``. Kept on chunks too, so a source filter and per-source counts need no join."""
    _run_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN source TEXT NOT NULL DEFAULT 'claude-code';
        ALTER TABLE chunks ADD COLUMN source TEXT NOT NULL DEFAULT 'claude-code';
        CREATE INDEX chunks_source ON chunks(source, start_time);
        """,
    )


def m008_session_titles(conn: sqlite3.Connection) -> None:
    """Sessions get a title (their first real prompt), and every transcript is read again once.

    Why re-read: titles come from transcripts, and the ingest rules that ship with this migration
    also leave out warm-up sub-agents stored before, and IDE wrappers, system reminders and
    Causantic's own briefing that older chunk text holds. Forgetting the file checkpoints makes
    the next ingest re-read each file (chunk ids are stable, so chunks are updated in place, not
    duplicated). Sessions whose transcripts are gone keep their chunks and show a fallback title.
    """
    _run_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN title TEXT;
        DELETE FROM files;
        """,
    )


def m009_text_features(conn: sqlite3.Connection) -> None:
    """Each chunk keeps the text features search scores it by (:mod:`causantic.store.features`):
    its word stems, its own words' stems when listing tools printed part of it, and its bulk share.

    Why: search computed them from the text of every candidate, some 6 ms of CPU per query at 100k
    chunks; read with the row they cost a split of a short string. Only the columns are added here:
    filling existing rows takes some 0.15 ms of CPU per chunk (13-16 s for 100k chunks), and the
    first process to open an upgraded store is often the session-start hook, which Claude Code stops
    after 10 s (rolling the migration back, every session). The next ingest fills them instead
    (``TEXT_FEATURES_PENDING``), a batch per transaction; until then, and for a row an older version
    writes later (``causantic reindex`` fills those), a chunk is scored from its text as before.
    """
    _run_script(
        conn,
        f"""
        ALTER TABLE chunks ADD COLUMN stems TEXT;       -- sorted, space-separated; NULL: not computed
        ALTER TABLE chunks ADD COLUMN own_stems TEXT;   -- NULL: no listing-tool output (same as stems)
        ALTER TABLE chunks ADD COLUMN bulk REAL;
        INSERT OR REPLACE INTO meta(key, value) VALUES ('{TEXT_FEATURES_PENDING}', 'true');
        """,
    )


def m010_stale_text_features(conn: sqlite3.Connection) -> None:
    """A chunk whose text is rewritten without its text features loses them, so it is scored from its
    new text instead of by the stems of the old one.

    Why: an older release (a hook still installed from it, a second install) knows no feature
    columns; re-saving a chunk whose text changed, it sets the text alone. This version writes text
    and features in one statement, so the trigger fires only when the features stayed as they were;
    should a new text happen to give the very same features, clearing them costs a re-split, never a
    wrong score. ``causantic reindex`` fills cleared rows."""
    _run_script(
        conn,
        """
        CREATE TRIGGER chunks_text_features_stale AFTER UPDATE OF content ON chunks
        WHEN NEW.content IS NOT OLD.content AND NEW.stems IS OLD.stems AND NEW.own_stems IS OLD.own_stems
            AND NEW.bulk IS OLD.bulk AND NEW.stems IS NOT NULL
        BEGIN
            UPDATE chunks SET stems = NULL, own_stems = NULL, bulk = NULL WHERE rowid = NEW.rowid;
        END;
        """,
    )


def m011_session_stems(conn: sqlite3.Connection) -> None:
    """Per session, how many of its chunks hold each word stem in their own words (what listing tools
    printed left out: ``own_stems``, else ``stems``), and under the stem ``''`` how many chunks it
    has: what whole-session evidence reads (``session_stem_counts``) in a few index lookups instead
    of testing the stems of every chunk of 30 sessions (1,200-1,600 rows at 100k chunks).

    Triggers keep it right whoever writes a chunk (ingest, re-ingest, forget, purge, the features
    filled later, an older release), splitting the packed stems with ``json_each`` (a stem is a run
    of word characters: no quote or backslash to escape). The insert trigger stands aside while the
    meta row ``STEMS_COUNTED_BY_WRITER`` exists: a write of many new chunks sets it inside its own
    transaction and adds their counts itself, one upsert per (session, stem)
    (:meth:`causantic.store.memory.MemoryStore.save_session`). Counting existing chunks takes some 12 s
    per 100k chunks, longer than a hook may run (see m009), so it is left to the next ingest
    (:func:`fill_session_stems`, a batch of sessions per transaction; ``SESSION_STEMS`` holds the
    last session done); until then whole-session evidence scans the chunks as before. An SQLite
    built without JSON functions (possible before 3.38) keeps no table and always scans.
    """
    if not _json_available(conn):
        conn.execute(
            f"INSERT OR REPLACE INTO meta(key, value) VALUES ('{SESSION_STEMS}', '{SESSION_STEMS_UNAVAILABLE}')"
        )
        return
    old, new = _own_stems_array("OLD"), _own_stems_array("NEW")
    count_new = f"""
            INSERT INTO session_stems(session_id, stem, chunks) SELECT NEW.session_id, value, 1 FROM json_each({new})
                WHERE TRUE ON CONFLICT (session_id, stem) DO UPDATE SET chunks = chunks + 1;"""
    uncount_old = f"""
            UPDATE session_stems SET chunks = chunks - 1
                WHERE session_id = OLD.session_id AND stem IN (SELECT value FROM json_each({old}));
            DELETE FROM session_stems
                WHERE session_id = OLD.session_id AND stem IN (SELECT value FROM json_each({old})) AND chunks <= 0;"""
    _run_script(
        conn,
        f"""
        CREATE TABLE session_stems (
            session_id TEXT NOT NULL,
            stem TEXT NOT NULL,                  -- '': every chunk of the session
            chunks INTEGER NOT NULL,             -- how many of its chunks hold it in their own words
            PRIMARY KEY (session_id, stem)
        ) WITHOUT ROWID;
        CREATE TRIGGER chunks_session_stems_insert AFTER INSERT ON chunks
        WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = '{STEMS_COUNTED_BY_WRITER}')
        BEGIN{count_new}
        END;
        CREATE TRIGGER chunks_session_stems_delete AFTER DELETE ON chunks BEGIN{uncount_old}
        END;
        CREATE TRIGGER chunks_session_stems_update AFTER UPDATE OF session_id, stems, own_stems ON chunks
        WHEN NEW.session_id IS NOT OLD.session_id
            OR COALESCE(NEW.own_stems, NEW.stems, '') IS NOT COALESCE(OLD.own_stems, OLD.stems, '')
        BEGIN{uncount_old}{count_new}
        END;
        """,
    )
    if conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone():
        conn.execute(f"INSERT OR REPLACE INTO meta(key, value) VALUES ('{SESSION_STEMS}', '')")


def m012_rules_version(conn: sqlite3.Connection) -> None:
    """Each file mark records the version of ingest's rules the file was read under
    (:data:`causantic.ingest.rules.VERSION`), so a file read under older rules is read again by a
    plain ingest instead of being skipped as unchanged. Marks written before count as version 0.

    Why a trigger: an older release (a hook still installed from it) re-reading a file updates its
    mark without knowing the column, and the chunks it wrote follow its own, older rules. This
    version replaces marks instead of updating them, so only an older release's update fires it.
    """
    _run_script(
        conn,
        """
        ALTER TABLE files ADD COLUMN rules_version INTEGER NOT NULL DEFAULT 0;
        CREATE TRIGGER files_marked_by_older_release AFTER UPDATE OF size, mtime_ns ON files
        BEGIN
            UPDATE files SET rules_version = 0 WHERE path = NEW.path;
        END;
        """,
    )


def _own_stems_array(row: str) -> str:
    """SQL for a JSON array of ``''`` and the stems of ``row``'s own words (``OLD`` or ``NEW``)."""
    own = f"COALESCE({row}.own_stems, {row}.stems, '')"
    return f"""'[""' || CASE WHEN {own} = '' THEN '' ELSE ',"' || replace({own}, ' ', '","') || '"' END || ']'"""


def _json_available(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT value FROM json_each('[]')").fetchall()
        return True
    except sqlite3.OperationalError:
        return False


# meta key: rows written before m009 still lack their text features (the next ingest fills them).
TEXT_FEATURES_PENDING = "text_features_pending"


def fill_text_features(conn: sqlite3.Connection, after: int = 0, batch: int = 2_000) -> tuple[int, int]:
    """Compute the features of up to ``batch`` chunks without them past rowid ``after``, in rowid
    order; return how many, and the last rowid done (``after`` when none was left)."""
    rows = conn.execute(
        "SELECT rowid, content FROM chunks WHERE rowid > ? AND stems IS NULL ORDER BY rowid LIMIT ?", (after, batch)
    ).fetchall()
    conn.executemany(
        "UPDATE chunks SET stems = ?, own_stems = ?, bulk = ? WHERE rowid = ?",
        [(*feature_values(content), rowid) for rowid, content in rows],
    )
    return len(rows), int(rows[-1][0]) if rows else after


# meta key: while present, session_stems does not hold every session yet. Its value is the last
# session id counted ('' none yet; sessions are counted in id order), or SESSION_STEMS_UNAVAILABLE.
SESSION_STEMS = "session_stems_pending"
SESSION_STEMS_UNAVAILABLE = "unavailable: no JSON functions"
# meta key: set by a write that counts its new chunks' stems itself, in its own transaction only.
STEMS_COUNTED_BY_WRITER = "session_stems_counted_by_writer"


def fill_session_stems(conn: sqlite3.Connection, after: str, batch: int = 50) -> tuple[int, str]:
    """Count the stems of up to ``batch`` sessions past id ``after`` in id order, replacing what
    the triggers counted of them since m011; return how many, and the last id done (``after`` when
    none was left)."""
    ids = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT ?", (after, batch))]
    if not ids:
        return 0, after
    conn.execute(f"DELETE FROM session_stems WHERE session_id IN ({', '.join('?' * len(ids))})", ids)
    conn.execute(
        "INSERT INTO session_stems(session_id, stem, chunks) SELECT c.session_id, j.value, COUNT(*)"
        f" FROM chunks c, json_each({_own_stems_array('c')}) j"
        f" WHERE c.session_id IN ({', '.join('?' * len(ids))}) GROUP BY c.session_id, j.value",
        ids,
    )
    return len(ids), ids[-1]


def m013_session_folders(conn: sqlite3.Connection) -> None:
    """Each session records the folder it was recorded in (its ``cwd``): the sessions of one clone
    can then be told apart from another clone's in the same project, and split out of it
    (``causantic split-project``). Sessions stored before are filled by their next ingest."""
    conn.execute("ALTER TABLE sessions ADD COLUMN cwd TEXT")


def m014_project_listing_index(conn: sqlite3.Connection) -> None:
    """The project/time index also holds each chunk's end time and session, so listing projects
    (``list-projects``, the dashboard's Projects page) counts chunks and sessions from the index alone
    instead of reading every chunk row: ×0.27 at 100k chunks (``benchmarks/project_listing.py``). Its
    prefix is unchanged, so the project- and time-filtered reads that used it still do. Rebuilding it
    takes under a second per 100k chunks."""
    _run_script(
        conn,
        """
        DROP INDEX chunks_project_time;
        CREATE INDEX chunks_project_time ON chunks(project_id, start_time, end_time, session_id);
        """,
    )


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run statements one by one: ``executescript`` would commit the migration's transaction."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        conn.execute(statement)


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    m001_core_tables,
    m002_keyword_index,
    m003_forgotten,
    m004_keyword_scope,
    m005_vectors_in_sqlite,
    m006_sources,
    m008_session_titles,
    m009_text_features,
    m010_stale_text_features,
    m011_session_stems,
    m012_rules_version,
    m013_session_folders,
    m014_project_listing_index,
)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply pending migrations; return the schema version now in force. A server that applies them
    (the first process to open memory after an upgrade of Causantic is often the MCP server) is named
    to a process that waits for it: "the MCP server's upgrade of memory's database" (:func:`write_waits.write`)."""
    conn.execute(SCHEMA_MIGRATIONS_TABLE)
    done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    if all(version in done for version in range(1, len(MIGRATIONS) + 1)):
        return len(MIGRATIONS)
    with write_waits.write(f"{'upgrade' if done else 'creation'} of memory's database"):
        return run_pending(conn, MIGRATIONS, done, lambda: atomic(conn), "?")


# The bookkeeping both backends share (PostgreSQL's runner: causantic.store.postgres.migrations).
SCHEMA_MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " applied_at TEXT NOT NULL)"
)


def run_pending(
    conn: Any,
    migrations: Sequence[Callable[[Any], None]],
    done: set[int],
    transaction: Callable[[], AbstractContextManager[Any]],
    mark: str,
) -> int:
    """Apply each migration whose version (its 1-based place) is not in ``done``, each in its own
    ``transaction()`` (which also takes the backend's migration lock), and record it in
    ``schema_migrations``; return the version now in force. ``mark``: the driver's placeholder."""
    for version, migration in enumerate(migrations, start=1):
        if version in done:
            continue
        with transaction():
            # Another process may have applied it while we waited for the lock.
            if conn.execute(f"SELECT 1 FROM schema_migrations WHERE version = {mark}", (version,)).fetchone():
                continue
            migration(conn)
            conn.execute(
                f"INSERT INTO schema_migrations(version, name, applied_at) VALUES ({mark}, {mark}, {mark})",
                (version, migration.__name__, datetime.now(UTC).isoformat()),
            )
    return len(migrations)
