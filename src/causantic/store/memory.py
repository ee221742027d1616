"""MemoryStore: every SQL statement Causantic runs against ``memory.db``, named for intent.

Writes are idempotent (``ON CONFLICT``), grouped with :meth:`MemoryStore.atomic` (and several
groups per transaction with :meth:`MemoryStore.batch`), and one session is always saved in one
transaction, so a killed ingest leaves the store as it was before that session and the next run
completes it. Nothing outside this package sees SQL or a connection: callers name what they want,
scope chunk reads with a :class:`~causantic.store.records.ChunkScope`, and get frozen records back
(:mod:`causantic.store.protocol` lists the methods the layers above use).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from types import TracebackType

from causantic.errors import store_failure
from causantic.sources import SOURCES
from causantic.store import common
from causantic.store import sqlite as sqlite_util
from causantic.store.features import features_in_order, opening_stems
from causantic.store.fts import quote_phrase
from causantic.store.keyword import KeywordSearch
from causantic.store.migrations import TEXT_FEATURES_PENDING, fill_text_features, migrate
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

_COUNTED_SCOPES = 64  # scopes whose chunk count is kept (searches use a handful: all, each project)


_CHUNK_COLUMNS = 23
_CHUNK_ROW = "(" + ", ".join(["?"] * _CHUNK_COLUMNS) + ")"
_CHUNK_ROWS_PER_STATEMENT = 1000  # at most; fewer when the SQLite library allows fewer parameters


@sqlite_util.raising_store_errors(lambda store: f"at {store.path}")
class MemoryStore(AbstractContextManager["MemoryStore"]):
    """The SQLite half of memory. Use as a context manager, or call :meth:`close`. Every public
    method raises :class:`~causantic.errors.StoreError` (never ``sqlite3.Error``) when SQLite fails."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000) -> None:
        self.path = path
        # Public for tests that inspect the file; code outside store/ never touches it
        # (tests/test_architecture.py checks).
        self.conn = sqlite_util.connect(path, busy_timeout_ms=busy_timeout_ms)
        self._transactions = sqlite_util.Transactions(self.conn)
        # count_chunks by scope, with the change_stamp it was read at: every search weighs its words
        # by the scope's size, and counting 100k chunks walks an index (3-15 ms a search).
        self._chunk_counts: dict[ChunkScope, tuple[tuple[int, int], int]] = {}
        try:
            self._keywords = KeywordSearch(path, busy_timeout_ms)
            migrate(self.conn)
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'fts5'").fetchone()
        except sqlite3.Error as exc:
            self.conn.close()
            raise store_failure(exc, f"at {path}") from exc
        self.fts_enabled = bool(row and row[0] == "available")

    def close(self) -> None:
        self._keywords.close()
        self.conn.close()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def atomic(self) -> AbstractContextManager[None]:
        """Everything the block writes commits together or not at all (a savepoint when nested)."""
        return self._transactions.atomic()

    def batch(self, commit_every: float = 0.5) -> AbstractContextManager[None]:
        """Run many :meth:`atomic` blocks in few transactions, committing at most every
        ``commit_every`` seconds and on leaving; an error rolls back only the blocks not yet committed."""
        return self._transactions.batch(commit_every)

    # ---- projects -------------------------------------------------------------------------

    def resolve_project(self, cwd: str, canonical_path: str) -> Project:
        """The project for a cwd, created on first sight; the cwd is remembered as an alias."""
        row = self.conn.execute(
            "SELECT p.id, p.path, p.name FROM project_aliases a JOIN projects p ON p.id = a.project_id WHERE a.cwd = ?",
            (cwd,),
        ).fetchone()
        if row:
            return Project(row["id"], row["path"], row["name"])
        with self.atomic():
            project = self._project_by_path(canonical_path) or self._create_project(canonical_path)
            self.conn.execute("INSERT OR IGNORE INTO project_aliases(cwd, project_id) VALUES (?, ?)", (cwd, project.id))
        return project

    def _project_by_path(self, path: str) -> Project | None:
        row = self.conn.execute("SELECT id, path, name FROM projects WHERE path = ?", (path,)).fetchone()
        return Project(row["id"], row["path"], row["name"]) if row else None

    def _create_project(self, path: str) -> Project:
        cur = self.conn.execute(
            "INSERT INTO projects(path, name, created_at) VALUES (?, ?, ?)", (path, path, common.now())
        )
        assert cur.lastrowid is not None
        names = self._name_family(common.path_parts(path)[-1])
        return Project(cur.lastrowid, path, names[cur.lastrowid])

    def _name_family(self, basename: str) -> dict[int, str]:
        """Rename the projects with this folder name apart (:func:`common.family_names`)."""
        names = common.family_names(
            ((r[0], r[1]) for r in self.conn.execute("SELECT id, path FROM projects")), basename
        )
        self.conn.executemany("UPDATE projects SET name = ? WHERE id = ?", [(n, pid) for pid, n in names.items()])
        return names

    def find_projects(self, text: str) -> list[Project]:
        """Projects whose name or path equals ``text``; else whose name ends with it."""
        rows = self.conn.execute(
            "SELECT id, path, name FROM projects WHERE name = ? OR path = ?"
            " UNION SELECT p.id, p.path, p.name FROM project_aliases a JOIN projects p"
            " ON p.id = a.project_id WHERE a.cwd = ?",
            (text, text.rstrip("/") or text, text),
        ).fetchall()
        if not rows:
            rows = self.conn.execute(
                "SELECT id, path, name FROM projects WHERE name LIKE ? ESCAPE '\\' OR path LIKE ? ESCAPE '\\'",
                ("%/" + common.like_escape(text), "%/" + common.like_escape(text)),
            ).fetchall()
        return [Project(r["id"], r["path"], r["name"]) for r in rows]

    def project_by_path(self, path: str) -> Project | None:
        return self._project_by_path(path)

    def absorb_project(self, path: str, into: Project) -> int:
        """Move the sessions, chunks and cwds of the project at ``path`` into ``into``, then delete it;
        returns the sessions moved (0 when there is no such project).

        For a stand-in project (Gemini CLI sessions known only by a hash of their cwd) once a session
        names that cwd. The moved chunks lose their vectors, so the next embedding pass writes them
        again under the new project. Call inside
        :meth:`atomic`; ``into`` is flagged for relinking.
        """
        old = self._project_by_path(path)
        if old is None or old.id == into.id:
            return 0
        self.conn.execute(
            "DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE project_id = ?)", (old.id,)
        )
        self.conn.execute("UPDATE chunks SET project_id = ? WHERE project_id = ?", (into.id, old.id))
        moved = self.conn.execute("UPDATE sessions SET project_id = ? WHERE project_id = ?", (into.id, old.id)).rowcount
        self.conn.execute("UPDATE project_aliases SET project_id = ? WHERE project_id = ?", (into.id, old.id))
        self.conn.execute("DELETE FROM projects WHERE id = ?", (old.id,))
        self.mark_relink(into.id)
        return moved

    def project_for_cwd_hash(self, digest: str) -> Project | None:
        """The project of a cwd known only by its sha256 hex digest (Gemini CLI's ``projectHash``):
        the project whose path, or one of whose recorded cwds, hashes to it."""
        rows = self.conn.execute(
            "SELECT p.id, p.path, p.name, a.cwd FROM projects p LEFT JOIN project_aliases a ON a.project_id = p.id"
        ).fetchall()
        return common.project_for_cwd_hash(rows, digest)

    def projects_with_chunks(self) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT project_id FROM chunks")]

    def projects_by_id(self, ids: Iterable[int]) -> list[Project]:
        rows = (
            self.conn.execute("SELECT id, path, name FROM projects WHERE id = ?", (i,)).fetchone() for i in sorted(ids)
        )
        return [Project(r["id"], r["path"], r["name"]) for r in rows if r is not None]

    def mark_relink(self, project_id: int) -> None:
        """Flag a project whose sessions changed; cleared once its cross-session edges are redone."""
        self.conn.execute("UPDATE projects SET needs_relink = 1 WHERE id = ?", (project_id,))

    def projects_to_relink(self) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT id FROM projects WHERE needs_relink = 1 ORDER BY id")]

    def clear_relink(self, project_id: int) -> None:
        self.conn.execute("UPDATE projects SET needs_relink = 0 WHERE id = ?", (project_id,))

    def project_summaries(self) -> list[ProjectTotals]:
        """Projects holding chunks with their totals, most recently active first."""
        return [ProjectTotals(*row) for row in self.conn.execute(common.PROJECT_TOTALS_SQL)]

    def session_summaries(
        self,
        project_id: int,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        agent: str | None = None,
    ) -> list[SessionTotals]:
        """Per session: first/last time, chunk and token counts, agents, title; newest first.
        With ``agent``, only sessions it took part in, counting its chunks."""
        where, params = common.agent_and_time("?", agent, since, until)
        where.insert(0, "c.project_id = ?")
        params.insert(0, project_id)
        return [
            common.session_totals(r)
            for r in self.conn.execute(
                "SELECT c.session_id, MIN(c.start_time) AS started, MAX(c.end_time) AS ended, COUNT(*) AS chunks,"
                " SUM(c.approx_tokens) AS tokens, GROUP_CONCAT(DISTINCT c.agent) AS agents, MIN(c.source) AS source,"
                " (SELECT s.title FROM sessions s WHERE s.id = c.session_id) AS title"
                f" FROM chunks c WHERE {' AND '.join(where)} GROUP BY c.session_id ORDER BY started DESC, c.session_id",
                params,
            )
        ]

    def first_chunk_texts(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Each session's first chunk text, main agent first: a title for sessions stored untitled."""
        out: dict[str, str] = {}
        for session_id in session_ids:  # one index probe each: ranking whole sessions read all their text
            for agent_filter in ("+agent = 'main'", "+agent != 'main'"):  # +: walk the session's index
                row = self.conn.execute(
                    f"SELECT content FROM chunks WHERE session_id = ? AND {agent_filter}"
                    " ORDER BY start_time, turn_index, part LIMIT 1",
                    (session_id,),
                ).fetchone()
                if row is not None:
                    out[session_id] = row[0]
                    break
        return out

    # ---- files (ingest checkpoints) -------------------------------------------------------

    def file_unchanged(self, path: str, size: int, mtime_ns: int) -> bool:
        row = self.conn.execute("SELECT size, mtime_ns FROM files WHERE path = ?", (path,)).fetchone()
        return bool(row and row["size"] == size and row["mtime_ns"] == mtime_ns)

    def mark_files(self, marks: Iterable[FileMark]) -> None:
        self.conn.executemany(
            "INSERT INTO files(path, size, mtime_ns, skipped_lines, ingested_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,"
            " skipped_lines = excluded.skipped_lines, ingested_at = excluded.ingested_at",
            [(m.path, m.size, m.mtime_ns, m.skipped_lines, common.now()) for m in marks],
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

        ``source`` is the coding agent that wrote the session. Call inside :meth:`atomic` together
        with the session's edges and file marks. When several files hold parts of one session (a
        resumed session), the title of the part that starts first wins.
        """
        started, ended = common.session_span(chunks)
        self.conn.execute(
            "INSERT INTO sessions(id, project_id, started_at, ended_at, team_name, source, title)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(id) DO UPDATE SET"
            " started_at = MIN(COALESCE(sessions.started_at, excluded.started_at), excluded.started_at),"
            " ended_at = MAX(COALESCE(sessions.ended_at, excluded.ended_at), excluded.ended_at),"
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
            ),
        )
        chunks = self._without_forgotten(chunks)
        existing = self._existing_hashes([c.id for c in chunks])
        new, changed = common.new_and_changed(chunks, existing)
        now = common.now()
        # Many rows per statement: a statement that fires the keyword-index trigger opens a
        # savepoint, at which FTS5 writes out what it has pending as a new segment, and segments are
        # merged again and again as they pile up: one row per statement costs about twice the
        # indexing CPU of 40 (a 50 MB pasted line: 37,000 chunks, 5 s instead of 2.5 s), and 40
        # a quarter more than 1,000.
        per_statement = min(
            _CHUNK_ROWS_PER_STATEMENT, self.conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // _CHUNK_COLUMNS
        )
        rows = [*new, *changed]
        features = features_in_order([c.content for c in rows])  # its worker ends with it
        for batch in common.batches(rows, per_statement):
            self.conn.execute(
                "INSERT INTO chunks(id, session_id, project_id, agent, agent_id, team_name, turn_index, part,"
                " start_time, end_time, content, search_terms, content_hash, approx_tokens, tool_use_count,"
                " code_block_count, has_thinking, message_uuids, created_at, source, stems, own_stems, bulk) VALUES "
                + ", ".join([_CHUNK_ROW] * len(batch))
                + " ON CONFLICT(id) DO UPDATE SET end_time = excluded.end_time, content = excluded.content,"
                " search_terms = excluded.search_terms, content_hash = excluded.content_hash,"
                " approx_tokens = excluded.approx_tokens, tool_use_count = excluded.tool_use_count,"
                " code_block_count = excluded.code_block_count, has_thinking = excluded.has_thinking,"
                " message_uuids = excluded.message_uuids, agent = excluded.agent, team_name = excluded.team_name,"
                " stems = excluded.stems, own_stems = excluded.own_stems, bulk = excluded.bulk",
                [value for c in batch for value in (*common.chunk_values(c, project.id, now, source), *next(features))],
            )
        return [c.id for c in new], len(changed)

    def _without_forgotten(self, chunks: Sequence[ChunkRecord]) -> list[ChunkRecord]:
        gone: set[str] = set()
        for batch in common.batches([c.id for c in chunks]):
            marks = ",".join("?" * len(batch))
            gone.update(
                r[0] for r in self.conn.execute(f"SELECT chunk_id FROM forgotten WHERE chunk_id IN ({marks})", batch)
            )
        return [c for c in chunks if c.id not in gone] if gone else list(chunks)

    def delete_chunks(self, ids: Sequence[str], *, remember: bool = True) -> int:
        """Remove chunks with their edges, keyword-index rows, vectors and cluster memberships.

        With ``remember`` the ids are kept as forgotten, so a later ingest of the same transcript does
        not restore them. Sessions left without chunks are removed too, and the chunks' vectors
        (``ON DELETE CASCADE``).
        """
        now = common.now()
        removed = 0
        with self.atomic():
            for batch in common.batches(ids):
                marks = ",".join("?" * len(batch))
                if remember:
                    self.conn.executemany(
                        "INSERT OR IGNORE INTO forgotten(chunk_id, forgotten_at) VALUES (?, ?)",
                        [(i, now) for i in batch],
                    )
                removed += self.conn.execute(f"DELETE FROM chunks WHERE id IN ({marks})", batch).rowcount
            self.conn.execute("DELETE FROM sessions WHERE id NOT IN (SELECT DISTINCT session_id FROM chunks)")
            self.conn.execute(
                "UPDATE clusters SET size = (SELECT COUNT(*) FROM chunk_clusters m WHERE m.cluster_id = clusters.id)"
            )
        return removed

    def projects_of_chunks(self, ids: Sequence[str]) -> set[int]:
        out: set[int] = set()
        for batch in common.batches(ids):
            marks = ",".join("?" * len(batch))
            out.update(
                r[0] for r in self.conn.execute(f"SELECT DISTINCT project_id FROM chunks WHERE id IN ({marks})", batch)
            )
        return out

    def project_chunk_ids(self, project_id: int) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE project_id = ?", (project_id,))]

    def session_chunk_keys(self, session_id: str) -> list[ChunkKey]:
        """Where each stored chunk of a session sits in its transcript."""
        return [
            common.chunk_key(r)
            for r in self.conn.execute(
                "SELECT id, agent_id, turn_index, part, message_uuids FROM chunks WHERE session_id = ?", (session_id,)
            )
        ]

    def drop_superseded(self, session_id: str, ids: Sequence[str]) -> int:
        """Delete chunks that ingest no longer produces, with their edges, keyword-index rows and vector
        marks (cascades), and the session row if nothing is left. Unlike :meth:`delete_chunks` nothing is
        remembered as forgotten: the text may come back in another form. Call inside :meth:`atomic`."""
        removed = 0
        for batch in common.batches(ids):
            marks = ",".join("?" * len(batch))
            removed += self.conn.execute(
                f"DELETE FROM chunks WHERE session_id = ? AND id IN ({marks})", [session_id, *batch]
            ).rowcount
        self.conn.execute(
            "DELETE FROM sessions WHERE id = ? AND NOT EXISTS (SELECT 1 FROM chunks WHERE session_id = ?)",
            (session_id, session_id),
        )
        return removed

    def _existing_hashes(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """Stored (content hash, message uuids JSON) by chunk id."""
        out: dict[str, tuple[str, str]] = {}
        for batch in common.batches(ids):
            marks = ",".join("?" * len(batch))
            out.update(
                (r[0], (r[1], r[2]))
                for r in self.conn.execute(
                    f"SELECT id, content_hash, message_uuids FROM chunks WHERE id IN ({marks})", batch
                )
            )
        return out

    def replace_edges(
        self, scope_chunk_ids: Sequence[str], reference_types: Sequence[str], edges: Sequence[EdgeRecord]
    ) -> list[EdgeRecord]:
        """Make the stored edges of these types between chunks of the scope exactly ``edges``.

        Returns the edges that were added. Stale edges (a turn that grew a part, a session
        ingested between two others) are removed; existing ones are left untouched. An edge
        leaving the scope is kept: when a session lies in two files (an early copy and the full
        file), the copy knows only a prefix, and the edges beyond it are the full file's to set,
        so the graph is the same whichever file is read first.
        """
        scope = set(scope_chunk_ids)
        type_marks = ",".join("?" * len(reference_types))
        stored: set[tuple[str, str, str]] = set()
        for batch in common.batches(scope_chunk_ids):
            marks = ",".join("?" * len(batch))
            stored.update(
                (r[0], r[1], r[2])
                for r in self.conn.execute(
                    f"SELECT source_chunk_id, target_chunk_id, reference_type FROM edges"
                    f" WHERE source_chunk_id IN ({marks}) AND reference_type IN ({type_marks})",
                    [*batch, *reference_types],
                )
                if r[1] in scope
            )
        return self._apply_edges(stored, edges)

    def replace_project_edges(
        self, project_id: int, reference_type: str, edges: Sequence[EdgeRecord]
    ) -> list[EdgeRecord]:
        """:meth:`replace_edges` for one edge type over a whole project, read with one indexed join
        (a project can hold 100k chunks: listing their ids to scope the query would cost far more)."""
        stored = {
            (r[0], r[1], r[2])
            for r in self.conn.execute(
                "SELECT e.source_chunk_id, e.target_chunk_id, e.reference_type FROM edges e"
                " JOIN chunks c ON c.id = e.source_chunk_id WHERE c.project_id = ? AND e.reference_type = ?",
                (project_id, reference_type),
            )
        }
        return self._apply_edges(stored, edges)

    def _apply_edges(self, stored: set[tuple[str, str, str]], edges: Sequence[EdgeRecord]) -> list[EdgeRecord]:
        """Delete ``stored`` edges not in ``edges``, insert the new ones; return those inserted."""
        present = self._existing_hashes(list({i for e in edges for i in (e.source, e.target)}))
        stale, new = common.edge_changes(stored, edges, present.keys())
        if stale:
            self.conn.executemany(
                "DELETE FROM edges WHERE source_chunk_id = ? AND target_chunk_id = ? AND reference_type = ?",
                list(stale),
            )
        self.add_edges(new)
        return new

    def add_edges(self, edges: Sequence[EdgeRecord]) -> int:
        before = self.conn.total_changes
        now = common.now()
        self.conn.executemany(
            "INSERT INTO edges(source_chunk_id, target_chunk_id, edge_type, reference_type, initial_weight,"
            " created_at) VALUES (?, ?, 'forward', ?, ?, ?) ON CONFLICT DO NOTHING",
            [(e.source, e.target, e.reference_type, e.weight, now) for e in edges if e.source != e.target],
        )
        return self.conn.total_changes - before

    def session_chunk_ids(self, session_id: str) -> list[str]:
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM chunks WHERE session_id = ? ORDER BY start_time, turn_index, part", (session_id,)
            )
        ]

    def session_endpoints(self, project_id: int) -> list[SessionEndpoints]:
        """Each session's first and last main-agent chunk in a project, oldest session first."""
        rows = self.conn.execute(
            "WITH ordered AS (SELECT id, session_id, start_time,"
            "  ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY start_time, turn_index, part) AS first_rank,"
            "  ROW_NUMBER() OVER (PARTITION BY session_id ORDER BY start_time DESC, turn_index DESC,"
            "   part DESC) AS last_rank"
            "  FROM chunks WHERE project_id = ? AND agent = 'main')"
            " SELECT f.session_id, f.id AS first_id, f.start_time AS started_at, l.id AS last_id"
            " FROM ordered f JOIN ordered l ON l.session_id = f.session_id AND l.last_rank = 1"
            " WHERE f.first_rank = 1 ORDER BY f.start_time, f.session_id",
            (project_id,),
        )
        return [SessionEndpoints(r["session_id"], r["first_id"], r["last_id"], r["started_at"]) for r in rows]

    def chunks_needing_vectors(self, model: str, limit: int) -> list[ChunkText]:
        """Chunks with no vector for ``model``, or whose text changed since it was embedded."""
        return [
            ChunkText(*row)
            for row in self.conn.execute(
                "SELECT c.id, c.project_id, c.agent, c.content, c.content_hash FROM chunks c"
                " LEFT JOIN vectors v ON v.chunk_id = c.id AND v.model = ?"
                " WHERE v.chunk_id IS NULL OR v.content_hash != c.content_hash ORDER BY c.rowid LIMIT ?",
                (model, limit),
            )
        ]

    def count_chunks_needing_vectors(self, model: str) -> int:
        return int(
            self.conn.execute(
                "SELECT COUNT(*) FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id AND v.model = ?"
                " WHERE v.chunk_id IS NULL OR v.content_hash != c.content_hash",
                (model,),
            ).fetchone()[0]
        )

    def cluster_members(self, model: str) -> dict[int, set[str]]:
        members: dict[int, set[str]] = {}
        for cluster_id, chunk_id in self.conn.execute(
            "SELECT m.cluster_id, m.chunk_id FROM chunk_clusters m JOIN clusters c ON c.id = m.cluster_id"
            " WHERE c.model = ?",
            (model,),
        ):
            members.setdefault(cluster_id, set()).add(chunk_id)
        return members

    def cluster_rows(self, model: str) -> list[ClusterRecord]:
        """The stored topics of ``model`` with their centroids, by id."""
        return [
            ClusterRecord(*row)
            for row in self.conn.execute(
                "SELECT id, label, centroid, size, created_at, updated_at FROM clusters WHERE model = ? ORDER BY id",
                (model,),
            )
        ]

    def replace_clusters(
        self, model: str, clusters: Sequence[tuple[int | None, str, bytes, Sequence[tuple[str, float]]]]
    ) -> list[int]:
        """Swap in a full clustering: (kept id or None, label, centroid blob, [(chunk id, distance)]).

        Clusters not kept are deleted with their memberships; ids of kept clusters survive, so a
        topic keeps its identity across reclusters. Returns the ids in input order.
        """
        now = common.now()
        ids: list[int] = []
        with self.atomic():
            keep = {cid for cid, *_ in clusters if cid is not None}
            stale = [
                r[0] for r in self.conn.execute("SELECT id FROM clusters WHERE model = ?", (model,)) if r[0] not in keep
            ]
            self.conn.executemany("DELETE FROM clusters WHERE id = ?", [(i,) for i in stale])
            for cluster_id, label, centroid, members in clusters:
                if cluster_id is None:
                    cur = self.conn.execute(
                        "INSERT INTO clusters(label, model, centroid, size, created_at, updated_at)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        (label, model, centroid, len(members), now, now),
                    )
                    assert cur.lastrowid is not None
                    cluster_id = cur.lastrowid
                else:
                    self.conn.execute(
                        "UPDATE clusters SET label = ?, centroid = ?, size = ?, updated_at = ? WHERE id = ?",
                        (label, centroid, len(members), now, cluster_id),
                    )
                    self.conn.execute("DELETE FROM chunk_clusters WHERE cluster_id = ?", (cluster_id,))
                self.conn.executemany(
                    "INSERT OR REPLACE INTO chunk_clusters(chunk_id, cluster_id, distance) VALUES (?, ?, ?)",
                    [(chunk_id, cluster_id, float(d)) for chunk_id, d in members],
                )
                ids.append(cluster_id)
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('clustered_at', ?)", (now,))
        return ids

    def add_cluster_members(self, members: Sequence[tuple[str, int, float]]) -> None:
        """Join chunks to existing clusters: (chunk id, cluster id, distance)."""
        with self.atomic():
            self.conn.executemany(
                "INSERT OR REPLACE INTO chunk_clusters(chunk_id, cluster_id, distance) VALUES (?, ?, ?)", members
            )
            self.conn.executemany(
                "UPDATE clusters SET size = (SELECT COUNT(*) FROM chunk_clusters WHERE cluster_id = ?) WHERE id = ?",
                [(cid, cid) for cid in {m[1] for m in members}],
            )

    def clusters_of(self, chunk_ids: Sequence[str]) -> dict[str, list[tuple[int, float]]]:
        """Each chunk's clusters with its distance to their centroids, nearest first."""
        out: dict[str, list[tuple[int, float]]] = {}
        for batch in common.batches(chunk_ids):
            marks = ",".join("?" * len(batch))
            for chunk_id, cluster_id, distance in self.conn.execute(
                f"SELECT chunk_id, cluster_id, distance FROM chunk_clusters WHERE chunk_id IN ({marks})"
                " ORDER BY distance",
                batch,
            ):
                out.setdefault(chunk_id, []).append((cluster_id, distance))
        return out

    def cluster_siblings(
        self, cluster_id: int, *, limit: int, project_ids: Sequence[int] | None = None, agent: str | None = None
    ) -> list[tuple[str, float]]:
        """Members of a cluster nearest its centroid first, within the search scope."""
        where, params = _scope(["m.cluster_id = ?"], [cluster_id], project_ids, agent)
        return [
            (r[0], r[1])
            for r in self.conn.execute(
                "SELECT m.chunk_id, m.distance FROM chunk_clusters m JOIN chunks c ON c.id = m.chunk_id"
                f" WHERE {' AND '.join(where)} ORDER BY m.distance LIMIT ?",
                [*params, limit],
            )
        ]

    def cluster_summaries(
        self, model: str, project_id: int | None = None, cluster_id: int | None = None
    ) -> list[TopicTotals]:
        """Topics of ``model`` (in one project, or one topic) with size, span and projects; largest first."""
        where = ["k.model = ?"]
        params: list[object] = [model]
        if project_id is not None:
            where.append("c.project_id = ?")
            params.append(project_id)
        if cluster_id is not None:
            where.append("k.id = ?")
            params.append(cluster_id)
        rows = self.conn.execute(
            "SELECT k.id, k.label, COUNT(c.rowid) AS size, MIN(c.start_time) AS first_seen,"
            " MAX(c.end_time) AS last_seen, GROUP_CONCAT(DISTINCT p.name) AS projects"
            " FROM clusters k JOIN chunk_clusters m ON m.cluster_id = k.id JOIN chunks c ON c.id = m.chunk_id"
            f" JOIN projects p ON p.id = c.project_id WHERE {' AND '.join(where)}"
            " GROUP BY k.id ORDER BY size DESC",
            params,
        )
        return [TopicTotals(r[0], r[1], r[2], r[3], r[4], tuple((r[5] or "").split(",")) if r[5] else ()) for r in rows]

    def chunk_texts(self, ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for batch in common.batches(ids):
            marks = ",".join("?" * len(batch))
            out.update(self.conn.execute(f"SELECT id, content FROM chunks WHERE id IN ({marks})", batch).fetchall())
        return out

    def session_opening_stems(self, session_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        """The word stems of each session's first main-agent chunk (its opening prompt, where the
        task is stated), without what listing tools printed in it."""
        out: dict[str, frozenset[str]] = {}
        for batch in common.batches(list(dict.fromkeys(session_ids))):
            marks = ",".join("?" * len(batch))
            for row in self.conn.execute(
                "SELECT session_id, content, stems, own_stems FROM chunks c WHERE c.rowid IN (SELECT (SELECT rowid"
                " FROM chunks f WHERE f.session_id = s.id AND +f.agent = 'main' ORDER BY f.start_time, f.turn_index,"
                f" f.part LIMIT 1) FROM sessions s WHERE s.id IN ({marks}))",
                batch,
            ):
                out[row[0]] = opening_stems(row[1], row[2], row[3])
        return out

    def fill_text_features(self, *, pending_only: bool = False) -> int:
        """Compute the text features of chunks written without them (before migration m009, or
        since by an older version), a batch per transaction so another process writing waits a
        fraction of a second, not the whole fill; return how many were filled. ``pending_only``:
        only when m009 left rows to fill (else one meta read)."""
        if pending_only and self.meta_value(TEXT_FEATURES_PENDING) is None:
            return 0
        filled, after = 0, 0
        while True:
            with self.atomic():
                count, after = fill_text_features(self.conn, after)
                if not count:
                    self.delete_meta(TEXT_FEATURES_PENDING)
                    return filled
            filled += count

    def meta_value(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def delete_meta(self, key: str) -> None:
        self.conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    # ---- reads ----------------------------------------------------------------------------

    def get_chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        out: dict[str, StoredChunk] = {}
        for batch in common.batches(ids):
            marks = ",".join("?" * len(batch))
            for row in self.conn.execute(
                f"SELECT {CHUNK_COLUMNS}{FEATURE_COLUMNS} FROM chunks c JOIN projects p ON p.id = c.project_id"
                f" WHERE c.id IN ({marks})",
                batch,
            ):
                out[row["id"]] = stored_chunk(row)
        return out

    def chunks_in(
        self, scope: ChunkScope, *, newest_first: bool = False, limit: int | None = None
    ) -> Iterator[StoredChunk]:
        """The chunks of ``scope`` in time order (turn, then part, within a time), oldest first
        unless ``newest_first``; at most ``limit``."""
        where, params = _chunk_scope(scope)
        order = "DESC" if newest_first else "ASC"
        sql = (
            f"SELECT {CHUNK_COLUMNS} FROM chunks c JOIN projects p ON p.id = c.project_id WHERE {where}"
            f" ORDER BY c.start_time {order}, c.turn_index {order}, c.part {order}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        for row in self.conn.execute(sql, params):
            yield stored_chunk(row)

    def count_chunks(self, scope: ChunkScope) -> int:
        """How many chunks :meth:`chunks_in` would yield for ``scope``; read again only after memory
        changed (:meth:`change_stamp`). A count read inside a transaction is not kept: a rollback
        moves no stamp, so it would outlive the rows it counted."""
        where, params = _chunk_scope(scope)
        if self.conn.in_transaction:
            return int(self.conn.execute(f"SELECT COUNT(*) FROM chunks c WHERE {where}", params).fetchone()[0])
        stamp = self.change_stamp()
        cached = self._chunk_counts.get(scope)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        count = int(self.conn.execute(f"SELECT COUNT(*) FROM chunks c WHERE {where}", params).fetchone()[0])
        if len(self._chunk_counts) >= _COUNTED_SCOPES:
            self._chunk_counts.clear()
        self._chunk_counts[scope] = (stamp, count)
        return count

    def neighbours(self, chunk_id: str, direction: str) -> list[tuple[str, str]]:
        """(next chunk id, reference type) along forward edges, or against them for 'backward'."""
        if direction == "forward":
            sql = (
                "SELECT target_chunk_id, reference_type FROM edges WHERE source_chunk_id = ?"
                " AND edge_type = 'forward' ORDER BY id"
            )
        else:
            sql = (
                "SELECT source_chunk_id, reference_type FROM edges WHERE target_chunk_id = ?"
                " AND edge_type = 'forward' ORDER BY id"
            )
        return [(r[0], r[1]) for r in self.conn.execute(sql, (chunk_id,))]

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
        """BM25 hits as (chunk id, score), best first; higher is better. Empty without FTS5.
        ``score_budget`` bounds the work on large stores (:mod:`causantic.store.keyword`).
        ``member``: team memory's filter; local memory holds no member's rows, so none match."""
        if not self.fts_enabled or member is not None:
            return []
        try:
            return self._keywords.search(
                query, project_ids=project_ids, agent=agent, limit=limit, score_budget=score_budget
            )
        except sqlite3.OperationalError as exc:
            # Second guard behind match_phrases' quoting: a query FTS5 still rejects yields no
            # keyword hits rather than an error for the user.
            if "fts5" in str(exc).lower() or "syntax" in str(exc).lower():
                return []
            raise

    def keyword_document_counts(
        self,
        terms: Sequence[str],
        *,
        project_ids: Sequence[int] | None = None,
        agent: str | None = None,
        most: int = 100_000,
    ) -> list[int]:
        """Chunks in the scope holding each term (a word or words in order, as plain text; counted up
        to ``most``): the document frequencies relevance weighs query words by. Zeros without FTS5."""
        if not self.fts_enabled:
            return [0] * len(terms)
        phrases = [quote_phrase(t) for t in terms]
        return self._keywords.document_counts(phrases, project_ids=project_ids, agent=agent, most=most)

    # ---- browsing (the dashboard) ---------------------------------------------------------

    def session_edges(self, session_id: str) -> list[EdgeRecord]:
        """Every edge with an end in the session (so also the cross-session edges in and out)."""
        rows = self.conn.execute(
            "SELECT source_chunk_id, target_chunk_id, reference_type, initial_weight FROM edges"
            " WHERE source_chunk_id IN (SELECT id FROM chunks WHERE session_id = ?)"
            " OR target_chunk_id IN (SELECT id FROM chunks WHERE session_id = ?) ORDER BY id",
            (session_id, session_id),
        )
        return [EdgeRecord(r[0], r[1], r[2], r[3]) for r in rows]

    def opening_prompts(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Per session, the text of its first chunk that opens with a user prompt (the main agent's
        first, another agent's when the main agent has none)."""
        out: dict[str, str] = {}
        for batch in common.batches(session_ids):
            marks = ",".join("?" * len(batch))
            out.update(
                self.conn.execute(
                    "SELECT session_id, content FROM (SELECT session_id, content, ROW_NUMBER() OVER"
                    " (PARTITION BY session_id ORDER BY agent != 'main', start_time, turn_index, part) AS rank"
                    f" FROM chunks WHERE session_id IN ({marks}) AND content LIKE '[User]%') WHERE rank = 1",
                    batch,
                ).fetchall()
            )
        return out

    def agent_spawns(self, session_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(session id, spawning agent, spawned agent) from brief and team-spawn edges."""
        out: list[tuple[str, str, str]] = []
        for batch in common.batches(session_ids):
            marks = ",".join("?" * len(batch))
            out.extend(
                (r[0], r[1], r[2])
                for r in self.conn.execute(
                    "SELECT DISTINCT s.session_id, s.agent, t.agent FROM edges e"
                    " JOIN chunks s ON s.id = e.source_chunk_id JOIN chunks t ON t.id = e.target_chunk_id"
                    f" WHERE e.reference_type IN ('brief', 'team-spawn') AND s.session_id IN ({marks})"
                    " AND s.agent != t.agent",
                    batch,
                )
            )
        return out

    def project_names(self) -> list[str]:
        """Names of the projects holding any chunk, alphabetically (one index probe per project)."""
        return [r[0] for r in self.conn.execute(common.PROJECT_NAMES_SQL)]

    def project_activity(self) -> list[ProjectSessions]:
        """Projects with sessions, most recently active first. Read from the sessions table alone,
        so it stays cheap however many chunks there are."""
        return [ProjectSessions(*row) for row in self.conn.execute(common.PROJECT_ACTIVITY_SQL)]

    def topic_sizes(self, model: str) -> list[tuple[int, str, int]]:
        """(id, label, size) of every topic of ``model``, largest first, from the topics table alone."""
        return [
            (r[0], r[1], r[2])
            for r in self.conn.execute(
                "SELECT id, label, size FROM clusters WHERE model = ? ORDER BY size DESC, id", (model,)
            )
        ]

    def change_stamp(self) -> tuple[int, int]:
        """A value that changes whenever memory does: a commit by any other connection or process
        (SQLite's ``data_version``) or a change through this connection. Reads no table."""
        return (self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes)

    def last_ingested_at(self) -> str | None:
        """When a transcript file was last read into memory (None before the first ingest)."""
        stamp: str | None = self.conn.execute("SELECT MAX(ingested_at) FROM files").fetchone()[0]
        return stamp

    def counts(self) -> dict[str, object]:
        one = self.conn.execute
        by_type = dict(one("SELECT reference_type, COUNT(*) FROM edges GROUP BY reference_type").fetchall())
        return {
            "chunks": one("SELECT COUNT(*) FROM chunks").fetchone()[0],
            "edges": {"total": sum(by_type.values()), "by_type": by_type},
            "sessions": one("SELECT COUNT(*) FROM sessions").fetchone()[0],
            "projects": one(  # one index probe per project, not a walk over every chunk
                "SELECT COUNT(*) FROM projects p WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.project_id = p.id)"
            ).fetchone()[0],
            "agents": len(self._sub_agents()),
            "clusters": one("SELECT COUNT(*) FROM clusters").fetchone()[0],
            "files": one("SELECT COUNT(*) FROM files").fetchone()[0],
            "skipped_lines": one("SELECT COALESCE(SUM(skipped_lines), 0) FROM files").fetchone()[0],
            "sources": self.source_counts(),
            "keyword_index": "on" if self.fts_enabled else "off (SQLite has no FTS5)",
        }

    def _sub_agents(self) -> list[str]:
        """The distinct agents other than main, read by hopping along the agent index (one probe
        per agent) instead of walking every chunk."""
        found: list[str] = []
        row = self.conn.execute("SELECT MIN(agent) FROM chunks").fetchone()
        while row is not None and row[0] is not None:
            if row[0] != "main":
                found.append(row[0])
            row = self.conn.execute("SELECT MIN(agent) FROM chunks WHERE agent > ?", (row[0],)).fetchone()
        return found

    def session_sizes(self, session_ids: Sequence[str] | None = None) -> dict[str, tuple[str, int]]:
        """Each stored session among ``session_ids`` (None: every one) with its source and chunk count."""
        select = "SELECT s.id, s.source, (SELECT COUNT(*) FROM chunks c WHERE c.session_id = s.id) FROM sessions s"
        if session_ids is None:
            return {r[0]: (r[1], r[2]) for r in self.conn.execute(select)}
        out: dict[str, tuple[str, int]] = {}
        for batch in common.batches(session_ids):
            rows = self.conn.execute(f"{select} WHERE s.id IN ({','.join('?' * len(batch))})", batch)
            out.update({r[0]: (r[1], r[2]) for r in rows})
        return out

    def source_counts(self) -> dict[str, dict[str, int]]:
        """Sessions and chunks per coding agent; every known source is listed, even when empty.
        Sessions are counted from their own table (a session has one source): counting distinct
        sessions over the chunks took a second at 100k chunks."""
        out: dict[str, dict[str, int]] = {source: {"sessions": 0, "chunks": 0} for source in SOURCES}
        for source, chunks in self.conn.execute("SELECT source, COUNT(*) FROM chunks GROUP BY source"):
            out[source] = {"sessions": 0, "chunks": chunks}
        for source, sessions in self.conn.execute(
            "SELECT source, COUNT(*) FROM sessions s WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.session_id = s.id)"
            " GROUP BY source"
        ):
            out.setdefault(source, {"sessions": 0, "chunks": 0})["sessions"] = sessions
        return out

    def size_bytes(self) -> int:
        return sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal")) if os.path.exists(p))


def _scope(
    where: list[str], params: list[object], project_ids: Sequence[int] | None, agent: str | None
) -> tuple[list[str], list[object]]:
    """Add the search scope (projects, agent) over chunks aliased ``c`` to a WHERE clause."""
    if project_ids:
        where.append(f"c.project_id IN ({','.join('?' * len(project_ids))})")
        params.extend(project_ids)
    if agent:
        where.append("c.agent = ?")
        params.append(agent)
    return where, params


def _chunk_scope(scope: ChunkScope) -> tuple[str, list[object]]:
    """A WHERE condition over chunks aliased ``c`` covering exactly ``scope``; every value is a
    parameter, and the session prefix is compared as text (not LIKE, which would treat ``%`` as a
    wildcard and ignore ASCII case, as PostgreSQL's ``starts_with`` does not), so no value acts as SQL
    or a wildcard."""
    where: list[str] = []
    params: list[object] = []
    if scope.project_ids is not None:
        where.append(f"c.project_id IN ({','.join('?' * len(scope.project_ids))})")
        params.extend(scope.project_ids)
    if scope.session_id is not None:
        where.append("c.session_id = ?")
        params.append(scope.session_id)
    if scope.session_prefix is not None:
        where.append("substr(c.session_id, 1, ?) = ?")
        params += [len(scope.session_prefix), scope.session_prefix]
    tail, values = common.agent_and_time("?", scope.agent, scope.since, scope.until)
    where += tail
    params += values
    return " AND ".join(where) or "1=1", params
