"""PostgresStore: the team-memory implementation of the store seam, statement for statement
:class:`causantic.store.memory.MemoryStore`'s, on PostgreSQL.

Every write is an idempotent ``INSERT … ON CONFLICT`` and one session is saved in one transaction,
as in SQLite, so members ingesting the same session at once never duplicate or lose a row, and a
session half-written by a member whose connection drops is rolled back by the server, never seen.
Rows carry ``member``: the name of the machine's user (``team.user``, else the login name).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from types import TracebackType
from typing import Any

from causantic.errors import StoreError
from causantic.sources import SOURCES
from causantic.store import common
from causantic.store.features import feature_values, opening_stems
from causantic.store.postgres import keyword
from causantic.store.postgres.connection import connect, describe, failure, psycopg_module
from causantic.store.postgres.migrations import fill_text_features, migrate
from causantic.store.records import (
    ChunkKey,
    ChunkRecord,
    ChunkScope,
    ChunkText,
    ClusterRecord,
    EdgeRecord,
    FileMark,
    Project,
    ProjectSessions,
    ProjectTotals,
    SessionEndpoints,
    SessionTotals,
    StoredChunk,
    TopicTotals,
)
from causantic.store.rows import CHUNK_COLUMNS, FEATURE_COLUMNS, stored_chunk
from causantic.store.sqlite import raising_store_errors

_CHUNK_COLUMNS = CHUNK_COLUMNS + ", c.member"

_RELINK_LOCK = 0x43_41_55  # advisory lock namespace of a project's relink (key 2: the project id)


@raising_store_errors(lambda store: store.url, psycopg_module().Error, failure)
class PostgresStore(AbstractContextManager["PostgresStore"]):
    """Team memory in one PostgreSQL database. Use as a context manager, or call :meth:`close`.
    Every public method raises :class:`~causantic.errors.StoreError` (never a psycopg error) naming
    the server, never the URL: a server lost mid-command is one sentence, not a traceback."""

    fts_enabled = True  # full-text search is part of every PostgreSQL

    def __init__(self, url: str, *, member: str, connect_timeout: int | None = None) -> None:
        self.url = url
        self.path = describe(url)  # how messages name the store; never the URL, which may hold a password
        self.member = member
        self.conn = connect(url, connect_timeout=connect_timeout)
        try:
            migrate(self.conn)
        except psycopg_module().errors.InsufficientPrivilege as exc:
            # A member upgraded causantic before the database was: only the tables' owner may migrate.
            why = str(exc).splitlines()[0]
            self.conn.close()
            raise StoreError(
                f"The team database at {self.path} lacks schema changes this causantic needs, and only the"
                f" role that owns its tables may make them ({why}). Ask them to run `causantic team init`"
                " (it upgrades the schema), then connect again."
            ) from exc
        self._counted = threading.local()  # see keyword_document_counts
        self._connect_timeout = connect_timeout
        self._keyword_conn: Any = None  # see _keywords
        self._keyword_lock = threading.Lock()

    def close(self) -> None:
        self.conn.close()
        with self._keyword_lock:
            if self._keyword_conn is not None:
                self._keyword_conn.close()

    @contextmanager
    def _keywords(self) -> Iterator[Any]:
        """The connection keyword search counts and ranks on, one thread at a time.

        Its counting is a transaction with planner settings of its own (:func:`keyword.count`), and
        a search runs it on a helper thread while its own thread reads the vector matches' chunks:
        on one shared connection those reads ran inside that transaction, and two searches'
        transactions (the MCP server's and the dashboard's threads) interleaved. A second
        connection, opened on first use, keeps the reads beside it in parallel."""
        with self._keyword_lock:
            if self._keyword_conn is None:
                self._keyword_conn = connect(self.url, connect_timeout=self._connect_timeout)
            yield self._keyword_conn

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """All statements inside commit together or not at all; nested calls become savepoints."""
        with self.conn.transaction():
            yield

    @contextmanager
    def batch(self, commit_every: float = 0.5) -> Iterator[None]:
        """SQLite's grouping of many :meth:`atomic` blocks into few transactions, kept to one block
        per transaction here: a transaction holding several sessions' row locks (their project's
        relink flag above all) could deadlock against another member's, one session at a time cannot,
        and the server's commits are cheap."""
        yield

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self.conn.execute(sql, params).fetchall())

    def _value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row else None

    # ---- projects -------------------------------------------------------------------------

    def resolve_project(self, cwd: str, canonical_path: str) -> Project:
        row = self.conn.execute(
            "SELECT p.id, p.path, p.name FROM project_aliases a JOIN projects p ON p.id = a.project_id"
            " WHERE a.cwd = %s",
            (cwd,),
        ).fetchone()
        if row:
            return Project(row["id"], row["path"], row["name"])
        with self.atomic():
            project = self._project_by_path(canonical_path) or self._create_project(canonical_path)
            self.conn.execute(
                "INSERT INTO project_aliases(cwd, project_id) VALUES (%s, %s) ON CONFLICT DO NOTHING", (cwd, project.id)
            )
        return project

    def _project_by_path(self, path: str) -> Project | None:
        row = self.conn.execute("SELECT id, path, name FROM projects WHERE path = %s", (path,)).fetchone()
        return Project(row["id"], row["path"], row["name"]) if row else None

    def _create_project(self, path: str) -> Project:
        # Another member may create it at the same moment: the conflict leaves theirs, which we read.
        self.conn.execute(
            "INSERT INTO projects(path, name, created_at) VALUES (%s, %s, %s) ON CONFLICT (path) DO NOTHING",
            (path, path, common.now()),
        )
        project = self._project_by_path(path)
        assert project is not None
        names = self._name_family(common.path_parts(path)[-1])
        return Project(project.id, path, names[project.id])

    def _name_family(self, basename: str) -> dict[int, str]:
        """Shortest unique trailing path parts for every project with this folder name (as SQLite)."""
        names = common.family_names(
            ((r[0], r[1]) for r in self._rows("SELECT id, path FROM projects ORDER BY id")), basename
        )
        with self.conn.cursor() as cur:
            cur.executemany(
                "UPDATE projects SET name = %s WHERE id = %s AND name != %s",
                [(n, pid, n) for pid, n in sorted(names.items())],
            )
        return names

    def find_projects(self, text: str) -> list[Project]:
        rows = self._rows(
            "SELECT id, path, name FROM projects WHERE name = %s OR path = %s"
            " UNION SELECT p.id, p.path, p.name FROM project_aliases a JOIN projects p"
            " ON p.id = a.project_id WHERE a.cwd = %s",
            (text, text.rstrip("/") or text, text),
        )
        if not rows:
            pattern = "%/" + common.like_escape(text)
            # ILIKE: SQLite's LIKE ignores ASCII case, so `--project Demo` names /work/demo there too.
            rows = self._rows(
                "SELECT id, path, name FROM projects WHERE name ILIKE %s ESCAPE '\\' OR path ILIKE %s ESCAPE '\\'",
                (pattern, pattern),
            )
        return [Project(r["id"], r["path"], r["name"]) for r in rows]

    def project_by_path(self, path: str) -> Project | None:
        return self._project_by_path(path)

    def absorb_project(self, path: str, into: Project) -> int:
        old = self._project_by_path(path)
        if old is None or old.id == into.id:
            return 0
        self.conn.execute(
            "DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE project_id = %s)", (old.id,)
        )
        self.conn.execute("UPDATE chunks SET project_id = %s WHERE project_id = %s", (into.id, old.id))
        moved = self.conn.execute(
            "UPDATE sessions SET project_id = %s WHERE project_id = %s", (into.id, old.id)
        ).rowcount
        self.conn.execute("UPDATE project_aliases SET project_id = %s WHERE project_id = %s", (into.id, old.id))
        self.conn.execute("DELETE FROM projects WHERE id = %s", (old.id,))
        self.mark_relink(into.id)
        return moved

    def project_for_cwd_hash(self, digest: str) -> Project | None:
        rows = self._rows(
            "SELECT p.id, p.path, p.name, a.cwd FROM projects p LEFT JOIN project_aliases a ON a.project_id = p.id"
        )
        return common.project_for_cwd_hash(rows, digest)

    def projects_with_chunks(self) -> list[int]:
        return [r[0] for r in self._rows("SELECT DISTINCT project_id FROM chunks")]

    def projects_by_id(self, ids: Iterable[int]) -> list[Project]:
        rows = self._rows("SELECT id, path, name FROM projects WHERE id = ANY(%s) ORDER BY id", (sorted(ids),))
        return [Project(r["id"], r["path"], r["name"]) for r in rows]

    def mark_relink(self, project_id: int) -> None:
        self.conn.execute("UPDATE projects SET needs_relink = TRUE WHERE id = %s AND NOT needs_relink", (project_id,))

    def projects_to_relink(self) -> list[int]:
        return [r[0] for r in self._rows("SELECT id FROM projects WHERE needs_relink ORDER BY id")]

    def clear_relink(self, project_id: int) -> None:
        self.conn.execute("UPDATE projects SET needs_relink = FALSE WHERE id = %s", (project_id,))

    def project_summaries(self) -> list[ProjectTotals]:
        return [ProjectTotals(*r) for r in self._rows(common.PROJECT_TOTALS_SQL)]

    def session_summaries(
        self,
        project_id: int,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
    ) -> list[SessionTotals]:
        where, params = common.agent_and_time("%s", agent, since, until)
        where.insert(0, "c.project_id = %s")
        params.insert(0, project_id)
        rows = self._rows(
            "SELECT c.session_id, MIN(c.start_time) AS started, MAX(c.end_time) AS ended, COUNT(*) AS chunks,"
            " SUM(c.approx_tokens) AS tokens, string_agg(DISTINCT c.agent, ',') AS agents, MIN(c.source) AS source,"
            " (SELECT s.title FROM sessions s WHERE s.id = c.session_id) AS title"
            f" FROM chunks c WHERE {' AND '.join(where)} GROUP BY c.session_id ORDER BY started DESC, c.session_id",
            params,
        )
        return [common.session_totals(r) for r in rows]

    def first_chunk_texts(self, session_ids: Sequence[str]) -> dict[str, str]:
        return self._first_texts(session_ids, "")

    def _first_texts(self, session_ids: Sequence[str], condition: str) -> dict[str, str]:
        rows = self._rows(
            "SELECT DISTINCT ON (session_id) session_id, content FROM chunks"
            f" WHERE session_id = ANY(%s){condition}"
            " ORDER BY session_id, agent != 'main', start_time, turn_index, part",
            (list(session_ids),),
        )
        return {r[0]: r[1] for r in rows}

    # ---- files (ingest checkpoints) -------------------------------------------------------

    def file_unchanged(self, path: str, size: int, mtime_ns: int) -> bool:
        row = self.conn.execute(
            "SELECT size, mtime_ns FROM files WHERE member = %s AND path = %s", (self.member, path)
        ).fetchone()
        return bool(row and row["size"] == size and row["mtime_ns"] == mtime_ns)

    def mark_files(self, marks: Iterable[FileMark]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO files(member, path, size, mtime_ns, skipped_lines, ingested_at)"
                " VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (member, path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,"
                " skipped_lines = excluded.skipped_lines, ingested_at = excluded.ingested_at",
                [(self.member, m.path, m.size, m.mtime_ns, m.skipped_lines, common.now()) for m in marks],
            )

    # ---- sessions, chunks, edges ----------------------------------------------------------

    def save_session(
        self,
        project: Project,
        session_id: str,
        chunks: Sequence[ChunkRecord],
        team_name: str | None = None,
        source: str = "claude-code",
        title: str | None = None,
    ) -> tuple[list[str], int]:
        """Upsert a session and its chunks; return (ids of new chunks, number of changed chunks).

        The session row is written first: its row lock makes a second member saving the same
        session wait until this transaction ends, then see these chunks as existing."""
        started, ended = common.session_span(chunks)
        self.conn.execute(
            "INSERT INTO sessions(id, project_id, started_at, ended_at, team_name, source, title, member)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (id) DO UPDATE SET"
            " started_at = LEAST(COALESCE(sessions.started_at, excluded.started_at), excluded.started_at),"
            " ended_at = GREATEST(COALESCE(sessions.ended_at, excluded.ended_at), excluded.ended_at),"
            " team_name = COALESCE(excluded.team_name, sessions.team_name), source = excluded.source,"
            " title = CASE WHEN excluded.title IS NOT NULL AND (sessions.title IS NULL"
            "  OR excluded.started_at <= COALESCE(sessions.started_at, excluded.started_at))"
            "  THEN excluded.title ELSE sessions.title END",
            (
                session_id,
                project.id,
                started,
                ended,
                team_name,
                source,
                title,
                self.member,
            ),
        )
        chunks = self._without_forgotten(chunks)
        existing = self._existing_hashes([c.id for c in chunks])
        # Another member's copy of a chunk is theirs to update (row-level security would refuse it).
        others = self._owned_by_others([c.id for c in chunks if c.id in existing])
        new, changed = common.new_and_changed(chunks, existing, keep=others)
        now = common.now()
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunks(id, session_id, project_id, agent, agent_id, team_name, turn_index, part,"
                " start_time, end_time, content, search_terms, content_hash, approx_tokens, tool_use_count,"
                " code_block_count, has_thinking, message_uuids, created_at, source, member, stems, own_stems, bulk)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                " %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET end_time = excluded.end_time, content = excluded.content,"
                " search_terms = excluded.search_terms, content_hash = excluded.content_hash,"
                " approx_tokens = excluded.approx_tokens, tool_use_count = excluded.tool_use_count,"
                " code_block_count = excluded.code_block_count, has_thinking = excluded.has_thinking,"
                " message_uuids = excluded.message_uuids, agent = excluded.agent, team_name = excluded.team_name,"
                " stems = excluded.stems, own_stems = excluded.own_stems, bulk = excluded.bulk",
                [
                    (
                        *common.chunk_values(c, project.id, now, source, text=_text),
                        self.member,
                        *feature_values(_text(c.content)),  # of the text as stored
                    )
                    for c in sorted([*new, *changed], key=lambda c: c.id)
                ],
            )
        return [c.id for c in new], len(changed)

    def _without_forgotten(self, chunks: Sequence[ChunkRecord]) -> list[ChunkRecord]:
        gone = {
            r[0]
            for r in self._rows("SELECT chunk_id FROM forgotten WHERE chunk_id = ANY(%s)", ([c.id for c in chunks],))
        }
        return [c for c in chunks if c.id not in gone] if gone else list(chunks)

    def _owned_by_others(self, ids: Sequence[str]) -> set[str]:
        if not ids:
            return set()
        return {
            r[0]
            for r in self._rows(
                "SELECT id FROM chunks WHERE id = ANY(%s) AND NOT causantic_may_change(owner_role)", (list(ids),)
            )
        }

    def delete_chunks(self, ids: Sequence[str], *, remember: bool = True) -> int:
        """Remove chunks (edges, vectors, memberships cascade), remembering them as forgotten.

        Row-level security lets a member delete only their own chunks (a team admin, any): when
        some of ``ids`` belong to others, nothing is deleted and the StoreError says whose they are,
        so a forget never does less than it previewed without saying so."""
        now = common.now()
        ids = list(ids)
        others = self._owned_by_others(ids)
        if others:
            owners = sorted(
                {r[0] for r in self._rows("SELECT member FROM chunks WHERE id = ANY(%s)", (sorted(others),))}
            )
            raise StoreError(
                f"{len(others)} of these {len(ids)} chunks belong to other members ({', '.join(owners)}): a member "
                "forgets only their own memory unless they hold the causantic_admin role. Nothing was deleted."
            )
        with self.atomic():
            if remember:
                with self.conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO forgotten(chunk_id, forgotten_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                        [(i, now) for i in ids],
                    )
            removed = self.conn.execute("DELETE FROM chunks WHERE id = ANY(%s)", (ids,)).rowcount
            self.conn.execute(
                "DELETE FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.session_id = s.id)"
            )
            self.conn.execute(
                "UPDATE clusters SET size = (SELECT COUNT(*) FROM chunk_clusters m WHERE m.cluster_id = clusters.id)"
            )
        return removed

    def projects_of_chunks(self, ids: Sequence[str]) -> set[int]:
        return {r[0] for r in self._rows("SELECT DISTINCT project_id FROM chunks WHERE id = ANY(%s)", (list(ids),))}

    def project_chunk_ids(self, project_id: int) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM chunks WHERE project_id = %s", (project_id,))]

    def session_chunk_keys(self, session_id: str) -> list[ChunkKey]:
        return [
            common.chunk_key(r)
            for r in self._rows(
                "SELECT id, agent_id, turn_index, part, message_uuids FROM chunks WHERE session_id = %s", (session_id,)
            )
        ]

    def drop_superseded(self, session_id: str, ids: Sequence[str]) -> int:
        removed = self.conn.execute(
            "DELETE FROM chunks WHERE session_id = %s AND id = ANY(%s)", (session_id, list(ids))
        ).rowcount
        self.conn.execute(
            "DELETE FROM sessions WHERE id = %s AND NOT EXISTS (SELECT 1 FROM chunks WHERE session_id = %s)",
            (session_id, session_id),
        )
        return removed

    def _existing_hashes(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        rows = self._rows("SELECT id, content_hash, message_uuids FROM chunks WHERE id = ANY(%s)", (list(ids),))
        return {r[0]: (r[1], r[2]) for r in rows}

    def replace_edges(
        self, scope_chunk_ids: Sequence[str], reference_types: Sequence[str], edges: Sequence[EdgeRecord]
    ) -> list[EdgeRecord]:
        scope = set(scope_chunk_ids)
        stored = {
            (r[0], r[1], r[2])
            for r in self._rows(
                "SELECT source_chunk_id, target_chunk_id, reference_type FROM edges"
                " WHERE source_chunk_id = ANY(%s) AND reference_type = ANY(%s)",
                (list(scope_chunk_ids), list(reference_types)),
            )
            if r[1] in scope
        }
        return self._apply_edges(stored, edges)

    def replace_project_edges(
        self, project_id: int, reference_type: str, edges: Sequence[EdgeRecord]
    ) -> list[EdgeRecord]:
        stored = {
            (r[0], r[1], r[2])
            for r in self._rows(
                "SELECT e.source_chunk_id, e.target_chunk_id, e.reference_type FROM edges e"
                " JOIN chunks c ON c.id = e.source_chunk_id WHERE c.project_id = %s AND e.reference_type = %s",
                (project_id, reference_type),
            )
        }
        return self._apply_edges(stored, edges)

    def _apply_edges(self, stored: set[tuple[str, str, str]], edges: Sequence[EdgeRecord]) -> list[EdgeRecord]:
        present = self._existing_hashes(list({i for e in edges for i in (e.source, e.target)}))
        stale, new = common.edge_changes(stored, edges, present.keys())
        if stale:
            with self.conn.cursor() as cur:
                cur.executemany(
                    "DELETE FROM edges WHERE source_chunk_id = %s AND target_chunk_id = %s AND reference_type = %s",
                    sorted(stale),
                )
        self.add_edges(new)
        return new

    def add_edges(self, edges: Sequence[EdgeRecord]) -> int:
        rows = sorted({(e.source, e.target, e.reference_type): e.weight for e in edges if e.source != e.target}.items())
        if not rows:
            return 0
        now = common.now()
        # One statement: its RETURNING counts exactly the edges this call added.
        return len(
            self._rows(
                "INSERT INTO edges(source_chunk_id, target_chunk_id, edge_type, reference_type, initial_weight,"
                " created_at) SELECT s, t, 'forward', r, w, %s FROM unnest(%s::text[], %s::text[], %s::text[],"
                " %s::float8[]) AS u(s, t, r, w) ON CONFLICT DO NOTHING RETURNING id",
                (
                    now,
                    [k[0] for k, _ in rows],
                    [k[1] for k, _ in rows],
                    [k[2] for k, _ in rows],
                    [w for _, w in rows],
                ),
            )
        )

    def session_chunk_ids(self, session_id: str) -> list[str]:
        return [
            r[0]
            for r in self._rows(
                "SELECT id FROM chunks WHERE session_id = %s ORDER BY start_time, turn_index, part", (session_id,)
            )
        ]

    def session_endpoints(self, project_id: int) -> list[SessionEndpoints]:
        """Each session's first and last main-agent chunk, oldest session first. Read at the start of a
        relink transaction, it takes the project's relink lock until that transaction ends: two members
        relinking one project at once would each delete the other's edges as stale."""
        self.conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_RELINK_LOCK, project_id))
        rows = self._rows(
            "WITH ordered AS (SELECT id, session_id, start_time,"
            "  ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY start_time, turn_index, part) AS first_rank,"
            "  ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY start_time DESC, turn_index DESC,"
            "   part DESC) AS last_rank"
            "  FROM chunks WHERE project_id = %s AND agent = 'main')"
            " SELECT f.session_id, f.id AS first_id, f.start_time AS started_at, l.id AS last_id"
            " FROM ordered f JOIN ordered l ON l.session_id = f.session_id AND l.last_rank = 1"
            " WHERE f.first_rank = 1 ORDER BY f.start_time, f.session_id",
            (project_id,),
        )
        return [SessionEndpoints(r["session_id"], r["first_id"], r["last_id"], r["started_at"]) for r in rows]

    def chunks_needing_vectors(self, model: str, limit: int) -> list[ChunkText]:
        return [
            ChunkText(*r)
            for r in self._rows(
                "SELECT c.id, c.project_id, c.agent, c.content, c.content_hash FROM chunks c"
                " LEFT JOIN vectors v ON v.chunk_id = c.id AND v.model = %s"
                " WHERE v.chunk_id IS NULL OR v.content_hash != c.content_hash ORDER BY c.rowid LIMIT %s",
                (model, limit),
            )
        ]

    def count_chunks_needing_vectors(self, model: str) -> int:
        return int(
            self._value(
                "SELECT COUNT(*) FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id AND v.model = %s"
                " WHERE v.chunk_id IS NULL OR v.content_hash != c.content_hash",
                (model,),
            )
        )

    # ---- topics ---------------------------------------------------------------------------

    def cluster_members(self, model: str) -> dict[int, set[str]]:
        members: dict[int, set[str]] = {}
        for cluster_id, chunk_id in self._rows(
            "SELECT m.cluster_id, m.chunk_id FROM chunk_clusters m JOIN clusters c ON c.id = m.cluster_id"
            " WHERE c.model = %s",
            (model,),
        ):
            members.setdefault(cluster_id, set()).add(chunk_id)
        return members

    def cluster_rows(self, model: str) -> list[ClusterRecord]:
        return [
            ClusterRecord(r[0], r[1], bytes(r[2]), r[3], r[4], r[5])
            for r in self._rows(
                "SELECT id, label, centroid, size, created_at, updated_at FROM clusters WHERE model = %s ORDER BY id",
                (model,),
            )
        ]

    def replace_clusters(
        self, model: str, clusters: Sequence[tuple[int | None, str, bytes, Sequence[tuple[str, float]]]]
    ) -> list[int]:
        now = common.now()
        ids: list[int] = []
        with self.atomic():
            keep = [cid for cid, *_ in clusters if cid is not None]
            self.conn.execute("DELETE FROM clusters WHERE model = %s AND NOT (id = ANY(%s))", (model, keep))
            for cluster_id, label, centroid, members in clusters:
                if cluster_id is None:
                    cluster_id = self._value(
                        "INSERT INTO clusters(label, model, centroid, size, created_at, updated_at)"
                        " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                        (label, model, centroid, len(members), now, now),
                    )
                else:
                    self.conn.execute(
                        "UPDATE clusters SET label = %s, centroid = %s, size = %s, updated_at = %s WHERE id = %s",
                        (label, centroid, len(members), now, cluster_id),
                    )
                    self.conn.execute("DELETE FROM chunk_clusters WHERE cluster_id = %s", (cluster_id,))
                self._upsert_members([(chunk_id, cluster_id, float(d)) for chunk_id, d in members])
                ids.append(int(cluster_id))
            self.set_meta("clustered_at", now)
        return ids

    def _upsert_members(self, members: Sequence[tuple[str, int, float]]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunk_clusters(chunk_id, cluster_id, distance) VALUES (%s, %s, %s)"
                " ON CONFLICT (chunk_id, cluster_id) DO UPDATE SET distance = excluded.distance",
                members,
            )

    def add_cluster_members(self, members: Sequence[tuple[str, int, float]]) -> None:
        with self.atomic():
            self._upsert_members(members)
            self.conn.execute(
                "UPDATE clusters SET size = (SELECT COUNT(*) FROM chunk_clusters WHERE cluster_id = clusters.id)"
                " WHERE id = ANY(%s)",
                (sorted({m[1] for m in members}),),
            )

    def clusters_of(self, chunk_ids: Sequence[str]) -> dict[str, list[tuple[int, float]]]:
        out: dict[str, list[tuple[int, float]]] = {}
        for chunk_id, cluster_id, distance in self._rows(
            "SELECT chunk_id, cluster_id, distance FROM chunk_clusters WHERE chunk_id = ANY(%s) ORDER BY distance",
            (list(chunk_ids),),
        ):
            out.setdefault(chunk_id, []).append((cluster_id, distance))
        return out

    def cluster_siblings(
        self, cluster_id: int, *, limit: int, project_ids: Sequence[int] | None = None, agent: str | None = None
    ) -> list[tuple[str, float]]:
        clause, params = keyword.scope_sql(project_ids, agent, None)
        return [
            (r[0], r[1])
            for r in self._rows(
                "SELECT m.chunk_id, m.distance FROM chunk_clusters m JOIN chunks c ON c.id = m.chunk_id"
                f" WHERE m.cluster_id = %s{clause} ORDER BY m.distance LIMIT %s",
                [cluster_id, *params, limit],
            )
        ]

    def cluster_summaries(
        self, model: str, project_id: int | None = None, cluster_id: int | None = None
    ) -> list[TopicTotals]:
        where = ["k.model = %s"]
        params: list[object] = [model]
        if project_id is not None:
            where.append("c.project_id = %s")
            params.append(project_id)
        if cluster_id is not None:
            where.append("k.id = %s")
            params.append(cluster_id)
        rows = self._rows(
            "SELECT k.id, k.label, COUNT(c.rowid) AS size, MIN(c.start_time) AS first_seen,"
            " MAX(c.end_time) AS last_seen, string_agg(DISTINCT p.name, ',') AS projects"
            " FROM clusters k JOIN chunk_clusters m ON m.cluster_id = k.id JOIN chunks c ON c.id = m.chunk_id"
            f" JOIN projects p ON p.id = c.project_id WHERE {' AND '.join(where)}"
            " GROUP BY k.id ORDER BY size DESC",
            params,
        )
        return [TopicTotals(r[0], r[1], r[2], r[3], r[4], tuple(r[5].split(",")) if r[5] else ()) for r in rows]

    def chunk_texts(self, ids: Sequence[str]) -> dict[str, str]:
        return {r[0]: r[1] for r in self._rows("SELECT id, content FROM chunks WHERE id = ANY(%s)", (list(ids),))}

    def session_opening_stems(self, session_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        rows = self._rows(
            "SELECT DISTINCT ON (session_id) session_id, content, stems, own_stems FROM chunks"
            " WHERE session_id = ANY(%s) AND agent = 'main' ORDER BY session_id, start_time, turn_index, part",
            (list(dict.fromkeys(session_ids)),),
        )
        return {r[0]: opening_stems(r[1], r[2], r[3]) for r in rows}

    def fill_text_features(self, *, pending_only: bool = False) -> int:
        """Compute the text features of chunks written without them; row-level security leaves
        other members' rows to them (search scores such rows from their text, as before). Migration
        m003 fills every row (the owner runs it, in `team init`), so none is left ``pending_only``."""
        if pending_only:
            return 0
        with self.atomic():
            return fill_text_features(self.conn)

    def meta_value(self, key: str) -> str | None:
        value = self._value("SELECT value FROM meta WHERE key = %s", (key,))
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, key: str) -> None:
        self.conn.execute("DELETE FROM meta WHERE key = %s", (key,))

    # ---- reads ----------------------------------------------------------------------------

    def get_chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        rows = self._rows(
            f"SELECT {_CHUNK_COLUMNS}{FEATURE_COLUMNS} FROM chunks c JOIN projects p ON p.id = c.project_id"
            " WHERE c.id = ANY(%s)",
            (list(ids),),
        )
        return {r["id"]: stored_chunk(r) for r in rows}

    def chunks_in(
        self, scope: ChunkScope, *, newest_first: bool = False, limit: int | None = None
    ) -> Iterator[StoredChunk]:
        where, params = _chunk_scope(scope)
        order = "DESC" if newest_first else "ASC"
        sql = (
            f"SELECT {_CHUNK_COLUMNS} FROM chunks c JOIN projects p ON p.id = c.project_id WHERE {where}"
            f" ORDER BY c.start_time {order}, c.turn_index {order}, c.part {order}"
        )
        if limit is not None:
            sql += " LIMIT %s"
            params.append(int(limit))
        for row in self._rows(sql, params):
            yield stored_chunk(row)

    def count_chunks(self, scope: ChunkScope) -> int:
        where, params = _chunk_scope(scope)
        return int(self._value(f"SELECT COUNT(*) FROM chunks c WHERE {where}", params))

    def neighbours(self, chunk_id: str, direction: str) -> list[tuple[str, str]]:
        if direction == "forward":
            sql = (
                "SELECT target_chunk_id, reference_type FROM edges WHERE source_chunk_id = %s"
                " AND edge_type = 'forward' ORDER BY id"
            )
        else:
            sql = (
                "SELECT source_chunk_id, reference_type FROM edges WHERE target_chunk_id = %s"
                " AND edge_type = 'forward' ORDER BY id"
            )
        return [(r[0], r[1]) for r in self._rows(sql, (chunk_id,))]

    def keyword_search(
        self,
        query: str,
        *,
        project_ids: Sequence[int] | None = None,
        agent: str | None = None,
        limit: int = 50,
        score_budget: int = 0,
        member: str | None = None,
    ) -> list[tuple[str, float]]:
        """Full-text hits as (chunk id, score), best first (:mod:`causantic.store.postgres.keyword`);
        ``score_budget`` bounds the ranking work on large stores, as in SQLite (0: rank every match)."""
        scope = keyword.scope_sql(project_ids, agent, member)
        known = self._take_counted(scope)
        with self._keywords() as conn:
            return keyword.search(conn, query, scope, limit, score_budget, known)

    def keyword_document_counts(
        self,
        terms: Sequence[str],
        *,
        project_ids: Sequence[int] | None = None,
        agent: str | None = None,
        most: int = 100_000,
    ) -> list[int]:
        """As SQLite's; the counts are kept for this thread's next :meth:`keyword_search` in the same
        scope (search weighs the query's words first), which then does not count them again."""
        scope = keyword.scope_sql(project_ids, agent, None)
        stamp = self.change_stamp()  # read first: a write while counting makes the counts stale
        with self._keywords() as conn:
            found, counted = keyword.document_counts(conn, list(terms), scope, most)
        self._counted.last = (repr(scope), stamp, counted)
        return found

    def _take_counted(self, scope: tuple[str, list[Any]]) -> keyword.Counted | None:
        """The counts this thread's last :meth:`keyword_document_counts` read in ``scope``, once, if
        no member has written since."""
        last: tuple[str, tuple[int, int], keyword.Counted] | None = getattr(self._counted, "last", None)
        self._counted.last = None
        if last is None or last[0] != repr(scope) or last[1] != self.change_stamp():
            return None
        return last[2]

    # ---- browsing (the dashboard) ---------------------------------------------------------

    def session_edges(self, session_id: str) -> list[EdgeRecord]:
        rows = self._rows(
            "SELECT source_chunk_id, target_chunk_id, reference_type, initial_weight FROM edges"
            " WHERE source_chunk_id IN (SELECT id FROM chunks WHERE session_id = %s)"
            " OR target_chunk_id IN (SELECT id FROM chunks WHERE session_id = %s) ORDER BY id",
            (session_id, session_id),
        )
        return [EdgeRecord(r[0], r[1], r[2], r[3]) for r in rows]

    def opening_prompts(self, session_ids: Sequence[str]) -> dict[str, str]:
        return self._first_texts(session_ids, " AND content LIKE '[User]%%'")

    def agent_spawns(self, session_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        return [
            (r[0], r[1], r[2])
            for r in self._rows(
                "SELECT DISTINCT s.session_id, s.agent, t.agent FROM edges e"
                " JOIN chunks s ON s.id = e.source_chunk_id JOIN chunks t ON t.id = e.target_chunk_id"
                " WHERE e.reference_type IN ('brief', 'team-spawn') AND s.session_id = ANY(%s)"
                " AND s.agent != t.agent",
                (list(session_ids),),
            )
        ]

    def project_names(self) -> list[str]:
        return [r[0] for r in self._rows(common.PROJECT_NAMES_SQL)]

    def project_activity(self) -> list[ProjectSessions]:
        return [ProjectSessions(*r) for r in self._rows(common.PROJECT_ACTIVITY_SQL)]

    def topic_sizes(self, model: str) -> list[tuple[int, str, int]]:
        return [
            (r[0], r[1], r[2])
            for r in self._rows(
                "SELECT id, label, size FROM clusters WHERE model = %s ORDER BY size DESC, id", (model,)
            )
        ]

    def count_embedded(self, model: str) -> int:
        return int(self._value("SELECT COUNT(*) FROM vectors WHERE model = %s", (model,)))

    def change_stamp(self) -> tuple[int, int]:
        """A value that changes whenever memory may have: the server's write-ahead-log position, which
        any member's commit moves (reads do not). Reads no table; moves also for other databases of the
        server, which only costs a cache refresh."""
        return (int(self._value("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")), 0)

    def last_ingested_at(self) -> str | None:
        value = self._value("SELECT MAX(ingested_at) FROM files")
        return None if value is None else str(value)

    def counts(self) -> dict[str, object]:
        by_type = {r[0]: r[1] for r in self._rows("SELECT reference_type, COUNT(*) FROM edges GROUP BY reference_type")}
        return {
            "chunks": self._value("SELECT COUNT(*) FROM chunks"),
            "edges": {"total": sum(by_type.values()), "by_type": by_type},
            "sessions": self._value("SELECT COUNT(*) FROM sessions"),
            "projects": self._value("SELECT COUNT(*) FROM projects WHERE id IN (SELECT project_id FROM chunks)"),
            "agents": self._value("SELECT COUNT(DISTINCT agent) FROM chunks WHERE agent != 'main'"),
            "clusters": self._value("SELECT COUNT(*) FROM clusters"),
            "files": self._value("SELECT COUNT(*) FROM files"),
            "skipped_lines": self._value("SELECT COALESCE(SUM(skipped_lines), 0) FROM files"),
            "sources": self.source_counts(),
            "keyword_index": "on (PostgreSQL full-text search)",
        }

    def session_sizes(self, session_ids: Sequence[str] | None = None) -> dict[str, tuple[str, int]]:
        where, params = ("", []) if session_ids is None else (" WHERE s.id = ANY(%s)", [list(session_ids)])
        rows = self._rows(
            "SELECT s.id, s.source, (SELECT COUNT(*) FROM chunks c WHERE c.session_id = s.id) FROM sessions s" + where,
            params,
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def source_counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {source: {"sessions": 0, "chunks": 0} for source in SOURCES}
        for source, sessions, chunks in self._rows(
            "SELECT source, COUNT(DISTINCT session_id), COUNT(*) FROM chunks GROUP BY source"
        ):
            out[source] = {"sessions": sessions, "chunks": chunks}
        return out

    def size_bytes(self) -> int:
        return int(self._value("SELECT pg_database_size(current_database())"))


def _chunk_scope(scope: ChunkScope) -> tuple[str, list[object]]:
    """A WHERE condition over chunks aliased ``c`` covering exactly ``scope`` (as SQLite's)."""
    where: list[str] = []
    params: list[object] = []
    if scope.project_ids is not None:
        where.append("c.project_id = ANY(%s)")
        params.append(list(scope.project_ids))
    if scope.session_id is not None:
        where.append("c.session_id = %s")
        params.append(scope.session_id)
    if scope.session_prefix is not None:
        where.append("starts_with(c.session_id, %s)")  # no pattern: a prefix is matched literally
        params.append(scope.session_prefix)
    tail, values = common.agent_and_time("%s", scope.agent, scope.since, scope.until)
    where += tail
    params += values
    return " AND ".join(where) or "TRUE", params


def _text(value: str) -> str:
    """PostgreSQL text cannot hold NUL, which a transcript can; SQLite kept it. Dropped."""
    return value.replace("\x00", "") if "\x00" in value else value
