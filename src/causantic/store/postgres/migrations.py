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

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from causantic.store.features import feature_values
from causantic.store.migrations import SCHEMA_MIGRATIONS_TABLE, run_pending

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


def m002_row_security(conn: Any) -> None:
    """Members may read everything and forget only their own rows; team admins may forget any.

    Enforced by the server, not by Causantic: row-level security on the tables with an owner
    (chunks, sessions, files) compares ``owner_role`` with the connected role. Two group roles carry
    the rights: ``causantic_member`` (grant it to each member's login role) and ``causantic_admin``
    (a member who may also forget others' rows). Rows written before this migration stay as they
    are. The role that runs ``causantic team init`` owns the tables and is not limited (PostgreSQL
    exempts table owners and superusers); members connect with their own roles.
    """
    conn.execute(
        """
        DO $$ BEGIN
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'causantic_member') THEN
                CREATE ROLE causantic_member NOLOGIN;
            END IF;
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'causantic_admin') THEN
                CREATE ROLE causantic_admin NOLOGIN IN ROLE causantic_member;
            END IF;
        END $$;
        GRANT USAGE ON SCHEMA public TO causantic_member;
        GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO causantic_member;
        GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO causantic_member;
        CREATE FUNCTION causantic_may_change(owner NAME) RETURNS BOOLEAN LANGUAGE sql STABLE AS
            $$ SELECT owner = current_user OR pg_has_role(current_user, 'causantic_admin', 'MEMBER') $$;
        -- Whose a row is never changes: an update keeps its owner and member whatever it sets.
        CREATE FUNCTION causantic_keep_owner() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            NEW.owner_role := OLD.owner_role;
            NEW.member := OLD.member;
            RETURN NEW;
        END $$;
        """
    )
    for table in ("chunks", "sessions", "files"):
        conn.execute(
            f"""
            ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
            CREATE POLICY {table}_read ON {table} FOR SELECT USING (TRUE);
            CREATE POLICY {table}_write ON {table} FOR INSERT WITH CHECK (owner_role = current_user);
            CREATE POLICY {table}_change ON {table} FOR UPDATE USING ({_UPDATE_RULE[table]});
            CREATE POLICY {table}_forget ON {table} FOR DELETE USING (causantic_may_change(owner_role));
            CREATE TRIGGER {table}_keep_owner BEFORE UPDATE ON {table}
                FOR EACH ROW EXECUTE FUNCTION causantic_keep_owner();
            """
        )


def m004_vector_projects(conn: Any) -> None:
    """Each vector row carries its chunk's project, so a project-filtered vector search reads that
    project's vectors alone (an index on (model, project_id)) instead of looking each chunk's
    vector up by id: pgvector before 0.8 cannot filter inside its HNSW walk (see
    :meth:`causantic.store.postgres.vectors.PgVectorIndex._in_scope`).

    Triggers keep the column right whoever writes (a member on an older release included): a
    vector takes its chunk's project when written, and follows the chunk if it moves. The backfill
    rewrites every vector row; a rewritten row would also be inserted into the HNSW index one by
    one, slower than building it again, so the model indexes are dropped first and rebuilt by the
    next open of the vector index (:meth:`~causantic.store.postgres.vectors.PgVectorIndex.ensure_ann_index`),
    once. Measured at 1M vectors on 2 busy cores: backfill 95 s, HNSW rebuild 454 s."""
    filled = conn.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_name = 'vectors' AND column_name = 'project_id'"
    ).fetchone()
    if not filled and conn.execute("SELECT EXISTS (SELECT 1 FROM vectors)").fetchone()[0]:
        for row in conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%'").fetchall():
            conn.execute(f'DROP INDEX IF EXISTS "{row[0]}"')
    conn.execute(
        """
        ALTER TABLE vectors ADD COLUMN IF NOT EXISTS project_id BIGINT;
        UPDATE vectors v SET project_id = c.project_id FROM chunks c
            WHERE c.id = v.chunk_id AND v.project_id IS DISTINCT FROM c.project_id;
        CREATE INDEX IF NOT EXISTS vectors_model_project ON vectors(model, project_id);
        CREATE OR REPLACE FUNCTION causantic_vector_project() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            NEW.project_id := (SELECT project_id FROM chunks WHERE id = NEW.chunk_id);
            RETURN NEW;
        END $$;
        CREATE OR REPLACE FUNCTION causantic_chunk_moved() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            UPDATE vectors SET project_id = NEW.project_id WHERE chunk_id = NEW.id;
            RETURN NULL;
        END $$;
        DROP TRIGGER IF EXISTS vectors_project ON vectors;
        CREATE TRIGGER vectors_project BEFORE INSERT OR UPDATE OF chunk_id ON vectors
            FOR EACH ROW EXECUTE FUNCTION causantic_vector_project();
        DROP TRIGGER IF EXISTS chunks_moved ON chunks;
        CREATE TRIGGER chunks_moved AFTER UPDATE OF project_id ON chunks
            FOR EACH ROW WHEN (OLD.project_id IS DISTINCT FROM NEW.project_id)
            EXECUTE FUNCTION causantic_chunk_moved();
        ANALYZE vectors;
        """
    )


# A session row is shared by every member who ingests a copy of it (its span and title grow); chunk
# text and file marks change only for their owner (or an admin).
_UPDATE_RULE = {"sessions": "TRUE", "chunks": "causantic_may_change(owner_role)", "files": "owner_role = current_user"}


def m003_text_features(conn: Any) -> None:
    """Each chunk keeps the text features search scores it by, as in SQLite's m009
    (:func:`causantic.store.migrations.m009_text_features`): stems, own-word stems, bulk share.
    Every existing row is filled here (the role that owns the tables runs migrations, and row-level
    security does not limit it)."""
    conn.execute(
        """
        ALTER TABLE chunks ADD COLUMN stems TEXT;
        ALTER TABLE chunks ADD COLUMN own_stems TEXT;
        ALTER TABLE chunks ADD COLUMN bulk DOUBLE PRECISION;
        """
    )
    fill_text_features(conn)


def m005_stale_text_features(conn: Any) -> None:
    """A chunk whose text is rewritten without its text features loses them, as in SQLite's m010
    (:func:`causantic.store.migrations.m010_stale_text_features`): a member on an older release sets
    the text alone, and the old stems would score the new text."""
    conn.execute(
        """
        CREATE OR REPLACE FUNCTION causantic_stale_text_features() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            IF NEW.stems IS NOT DISTINCT FROM OLD.stems AND NEW.own_stems IS NOT DISTINCT FROM OLD.own_stems
                    AND NEW.bulk IS NOT DISTINCT FROM OLD.bulk THEN
                NEW.stems := NULL;
                NEW.own_stems := NULL;
                NEW.bulk := NULL;
            END IF;
            RETURN NEW;
        END $$;
        DROP TRIGGER IF EXISTS chunks_text_features_stale ON chunks;
        CREATE TRIGGER chunks_text_features_stale BEFORE UPDATE OF content ON chunks
            FOR EACH ROW WHEN (OLD.content IS DISTINCT FROM NEW.content)
            EXECUTE FUNCTION causantic_stale_text_features();
        """
    )


def m006_session_stems(conn: Any) -> None:
    """Per session, how many of its chunks hold each word stem in their own words, and under the stem
    ``''`` how many chunks it has, as in SQLite's m011 (:func:`causantic.store.migrations.m011_session_stems`),
    kept by a trigger whoever writes a chunk. Every existing session is counted here (the owner runs
    migrations, in `team init`). The trigger runs as the tables' owner, so members, who may only
    read the table, keep it right by writing their chunks; it fires on every update whose stems or
    session changed, since a member on an older release rewriting a chunk's text has its stems
    cleared by m005's trigger, which an ``UPDATE OF`` column list would not see. Run again, it counts
    afresh (a version applied out of order, see :func:`migrate`)."""
    conn.execute(
        """
        CREATE TABLE IF NOT EXISTS session_stems (
            session_id TEXT NOT NULL,
            stem TEXT NOT NULL,
            chunks INTEGER NOT NULL,
            PRIMARY KEY (session_id, stem)
        );
        GRANT SELECT ON session_stems TO causantic_member;
        CREATE OR REPLACE FUNCTION causantic_own_stems(own_stems TEXT, stems TEXT) RETURNS TEXT[]
        LANGUAGE sql IMMUTABLE AS
            $$ SELECT ARRAY[''] || string_to_array(NULLIF(COALESCE(own_stems, stems, ''), ''), ' ') $$;
        CREATE OR REPLACE FUNCTION causantic_session_stems() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
        SET search_path FROM CURRENT AS $$ BEGIN
            IF TG_OP IN ('UPDATE', 'DELETE') THEN
                UPDATE session_stems SET chunks = chunks - 1
                    WHERE session_id = OLD.session_id AND stem = ANY(causantic_own_stems(OLD.own_stems, OLD.stems));
                DELETE FROM session_stems WHERE session_id = OLD.session_id
                    AND stem = ANY(causantic_own_stems(OLD.own_stems, OLD.stems)) AND chunks <= 0;
            END IF;
            IF TG_OP IN ('UPDATE', 'INSERT') THEN
                INSERT INTO session_stems(session_id, stem, chunks)
                    SELECT NEW.session_id, stem, 1 FROM unnest(causantic_own_stems(NEW.own_stems, NEW.stems)) stem
                    ON CONFLICT (session_id, stem) DO UPDATE SET chunks = session_stems.chunks + 1;
            END IF;
            RETURN NULL;
        END $$;
        DROP TRIGGER IF EXISTS chunks_session_stems ON chunks;
        DROP TRIGGER IF EXISTS chunks_session_stems_update ON chunks;
        CREATE TRIGGER chunks_session_stems AFTER INSERT OR DELETE ON chunks
            FOR EACH ROW EXECUTE FUNCTION causantic_session_stems();
        CREATE TRIGGER chunks_session_stems_update AFTER UPDATE ON chunks
            FOR EACH ROW WHEN (OLD.session_id IS DISTINCT FROM NEW.session_id
                OR COALESCE(OLD.own_stems, OLD.stems, '') IS DISTINCT FROM COALESCE(NEW.own_stems, NEW.stems, ''))
            EXECUTE FUNCTION causantic_session_stems();
        DELETE FROM session_stems;
        INSERT INTO session_stems(session_id, stem, chunks)
            SELECT c.session_id, stem, COUNT(*) FROM chunks c, unnest(causantic_own_stems(c.own_stems, c.stems)) stem
            GROUP BY c.session_id, stem;
        """
    )


def m007_rules_version(conn: Any) -> None:
    """Each file mark records the version of ingest's rules it was read under, as in SQLite's m012
    (:func:`causantic.store.migrations.m012_rules_version`): marks written before count as version 0,
    and a member on an older release re-reading a file, who updates its mark without knowing the
    column, marks it read under the oldest rules (this version deletes and inserts its marks)."""
    conn.execute(
        """
        ALTER TABLE files ADD COLUMN IF NOT EXISTS rules_version INTEGER NOT NULL DEFAULT 0;
        CREATE OR REPLACE FUNCTION causantic_file_marked_by_older_release() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.rules_version := 0;
            RETURN NEW;
        END $$;
        DROP TRIGGER IF EXISTS files_marked_by_older_release ON files;
        CREATE TRIGGER files_marked_by_older_release BEFORE UPDATE ON files
            FOR EACH ROW EXECUTE FUNCTION causantic_file_marked_by_older_release();
        """
    )


def m008_session_folders(conn: Any) -> None:
    """Each session records the folder it was recorded in, as in SQLite's m013
    (:func:`causantic.store.migrations.m013_session_folders`). Sessions stored before get theirs
    from their member's next ingest, which reads again the files marked before this ran
    (:meth:`causantic.store.postgres.store.PostgresStore.unchanged_file_rules`)."""
    conn.execute("ALTER TABLE sessions ADD COLUMN IF NOT EXISTS cwd TEXT")


def m009_project_listing_index(conn: Any) -> None:
    """The project/time index also carries each chunk's end time, session and member, so listing
    projects (``list-projects``, the dashboard's Projects page: totals, then sessions by member) reads
    the index alone (an index-only scan) instead of every chunk row, as SQLite's m014
    (:func:`causantic.store.migrations.m014_project_listing_index`) does; its key is unchanged, so
    the project- and time-filtered reads that used it still do. ``benchmarks/project_listing.py
    --postgres`` measures it. Members on this release work without it until the owner applies it
    (:data:`WORKS_WITHOUT`): listing is then slower, not wrong."""
    conn.execute(
        """
        DROP INDEX IF EXISTS chunks_project_time;
        CREATE INDEX chunks_project_time ON chunks(project_id, start_time) INCLUDE (end_time, session_id, member);
        """
    )


def fill_text_features(conn: Any, batch: int = 2_000) -> int:
    """Compute the features of every chunk without them (that this role may change), in rowid
    order; return how many were read."""
    filled, after = 0, 0
    while rows := conn.execute(
        "SELECT rowid, content FROM chunks WHERE rowid > %s AND stems IS NULL ORDER BY rowid LIMIT %s", (after, batch)
    ).fetchall():
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE chunks SET stems = %s, own_stems = %s, bulk = %s WHERE rowid = %s",
                [(*feature_values(row[1]), row[0]) for row in rows],
            )
        filled, after = filled + len(rows), rows[-1][0]
    return filled


MIGRATIONS: tuple[Callable[[Any], None], ...] = (
    m001_core_tables,
    m002_row_security,
    m003_text_features,
    m004_vector_projects,
    m005_stale_text_features,
    m006_session_stems,
    m007_rules_version,
    m008_session_folders,
    m009_project_listing_index,
)


# The migrations a member's release may find missing and still use team memory, each with what goes
# without it until the tables' owner applies it (`causantic team init`). PostgreSQL lets only a
# table's owner (or a superuser) ALTER or index it, and members are granted rows, not tables: a
# member's connection cannot add even a nullable column. Nor should it be able to: ownership (or
# membership in the owner's role) would let any member drop the tables, and row-level security does
# not bind a table's owner. A migration the code cannot do without stays out of this list: a member
# then answers from local memory until the owner has run it.
WORKS_WITHOUT: dict[int, str] = {
    8: "the sessions you ingest are stored without the folder they were recorded in (which split-project reads)",
    9: "listing projects reads every chunk row (slower as memory grows)",
}


def missing_versions(conn: Any) -> list[int]:
    """The migrations of this release the database has not applied, in order (all before `team init`)."""
    if conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
        return list(range(1, len(MIGRATIONS) + 1))
    applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    return [version for version in range(1, len(MIGRATIONS) + 1) if version not in applied]


def tables_owner(conn: Any) -> str | None:
    """The role that owns the team's tables (the one that ran `team init`), the only one that may migrate them."""
    row = conn.execute("SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = to_regclass('sessions')").fetchone()
    return str(row[0]) if row else None


def may_migrate(conn: Any) -> bool:
    """Whether this connection's role may change the team's tables: it owns them, is in the role that
    does, or is a superuser (True before `team init` made them: the server then says what it may do)."""
    row = conn.execute(
        "SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_class WHERE oid = to_regclass('sessions')"
    ).fetchone()
    return row is None or bool(row[0])


def migrate(conn: Any) -> int:
    """Apply pending migrations; return the schema version now in force."""
    # Members cannot create tables: an up-to-date schema is recognised without running any DDL. Every
    # version is counted, not the highest: one missing below the newest (applied by a release that
    # lacked it) still runs.
    if not missing_versions(conn):
        return len(MIGRATIONS)
    if not may_migrate(conn):
        # Refused as the server would refuse the first ALTER, without sending it: a member's every
        # open tried it until the owner upgraded, each an ERROR line in the server's log.
        import psycopg

        raise psycopg.errors.InsufficientPrivilege("must be owner of table sessions")
    with _locked(conn):
        # Created only where missing: even IF NOT EXISTS needs the right to create tables, and a
        # member refused it was told "permission denied for schema public", not the change they lack.
        if conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
            conn.execute(SCHEMA_MIGRATIONS_TABLE)
        done = {row["version"] for row in conn.execute("SELECT version FROM schema_migrations")}
    return run_pending(conn, MIGRATIONS, done, lambda: _locked(conn), "%s")


def schema_version(conn: Any) -> int:
    """The last migration the database has applied; 0 when it holds no team memory yet."""
    if conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
        return 0
    return int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0])


@contextmanager
def _locked(conn: Any) -> Iterator[None]:
    """A transaction holding the migration lock: another member migrating makes this one wait."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        yield
