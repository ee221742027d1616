"""PostgresStore: the team-memory implementation of the store seam, statement for statement
:class:`causantic.store.memory.MemoryStore`'s, on PostgreSQL.

Every write is an idempotent ``INSERT … ON CONFLICT`` and one session is saved in one transaction,
as in SQLite, so members ingesting the same session at once never duplicate or lose a row, and a
session half-written by a member whose connection drops is rolled back by the server, never seen.
Rows carry ``member``: the name of the machine's user (``team.user``, else the login name).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from types import TracebackType
from typing import Any

from causantic.errors import StoreError
from causantic.sources import SOURCES
from causantic.store import common
from causantic.store.base import SqlStore, is_read, pyformat
from causantic.store.features import opening_stems, text_columns
from causantic.store.postgres import keyword
from causantic.store.postgres.connection import connect, describe, failure, psycopg_module
from causantic.store.postgres.migrations import MIGRATIONS, fill_text_features, m008_session_folders
from causantic.store.postgres.team import gap_note, migrated
from causantic.store.records import (
    STAND_IN_HEX,
    STAND_IN_PREFIX,
    ChunkRecord,
    ChunkScope,
    DiskShortfall,
    EdgeRecord,
    FileMark,
    Project,
    ProjectTotals,
    SavedChunks,
    SessionEndpoints,
    StoreSpace,
)
from causantic.store.rows import CHUNK_COLUMNS
from causantic.store.sqlite import raising_store_errors

_RELINK_LOCK = 0x43_41_55  # advisory lock namespace of a project's relink (key 2: the project id)
_NAME_LOCK = 0x43_41_4E  # advisory lock namespace of making projects of a folder name (key 2: _name_key)
_TOPICS_LOCK = 0x43_41_54  # advisory lock namespace of a model's topics (key 2: hashtext of the model)
# Each project's sessions by the member who ingested them; from the project/time index alone (m009).
PROJECT_MEMBERS_SQL = (
    "SELECT project_id, member, COUNT(DISTINCT session_id) FROM chunks GROUP BY project_id, member"
    " ORDER BY project_id, member"
)
_FOLDERS = MIGRATIONS.index(m008_session_folders) + 1  # the migration adding sessions.cwd
# A stored path's folder name in SQL, as common.path_parts(path)[-1] reads it: the last part between
# slashes or backslashes; the path itself when it has none.
_FOLDER_NAME = "COALESCE(NULLIF(substring(rtrim(replace(path, '\\', '/'), '/') FROM '[^/]*$'), ''), path)"


@raising_store_errors(lambda store: store.url, psycopg_module().Error, failure)
class PostgresStore(SqlStore, AbstractContextManager["PostgresStore"]):
    """Team memory in one PostgreSQL database. Use as a context manager, or call :meth:`close`.
    Every public method raises :class:`~causantic.errors.StoreError` (never a psycopg error) naming
    the server, never the URL: a server lost mid-command is one sentence, not a traceback."""

    fts_enabled = True  # full-text search is part of every PostgreSQL
    JOINED = "string_agg(DISTINCT {}, ',')"
    LEAST = "LEAST"
    GREATEST = "GREATEST"
    POSITION = "STRPOS"
    CHUNK_COLUMNS = CHUNK_COLUMNS + ", c.member"
    MEMBERS = "string_agg(DISTINCT c.member, ',')"

    def __init__(self, url: str, *, member: str, connect_timeout: int | None = None) -> None:
        self.url = url
        self.path = describe(url)  # how messages name the store; never the URL, which may hold a password
        self.member = member
        self.conn = connect(url, connect_timeout=connect_timeout)
        # Migrations this member's role could not apply and works without (team.schema_gap), and what
        # that costs them, said by ingest and `team status` until the tables' owner runs `team init`.
        self.schema_gap: tuple[int, ...] = ()
        self.schema_note: str | None = None
        # A member upgraded causantic before the database was (only the tables' owner may
        # migrate), no one ran `team init` yet, or the server lacks pgvector: what to do, not a traceback.
        try:
            self.schema_gap = migrated(self.conn, url)
            if self.schema_gap:
                self.schema_note = gap_note(self.conn, url, self.schema_gap)
        except BaseException:
            self.conn.close()
            raise
        self._counted = threading.local()  # see keyword_document_counts
        self._file_marks: dict[str, tuple[int, int, int]] | None = None  # see unchanged_file_rules
        self._connect_timeout = connect_timeout
        self._keyword_conn: Any = None  # see _keywords
        self._keyword_lock = threading.Lock()
        # The connection's turn: held by a transaction from its start to its end, and by each other
        # statement while it runs. A transaction belongs to the connection, not to a thread: without
        # the turn, a search on another thread of this process ran its reads inside an ingest's open
        # transaction, seeing (and able to abort) a session not yet committed. A read that finds the
        # turn taken by another thread runs on a second connection instead of waiting (see _query).
        self._turn = threading.RLock()
        self._reader_conn: Any = None
        self._reader_lock = threading.Lock()

    @property
    def records_folders(self) -> bool:
        return _FOLDERS not in self.schema_gap

    def close(self) -> None:
        self.conn.close()
        for lock, attr in ((self._keyword_lock, "_keyword_conn"), (self._reader_lock, "_reader_conn")):
            with lock:
                if getattr(self, attr) is not None:
                    getattr(self, attr).close()

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
        """All statements inside commit together or not at all; nested calls become savepoints.
        Other threads' writes on this store wait until it ends; their reads do not wait, and see what
        is committed."""
        with self._turn, self.conn.transaction():
            yield

    @contextmanager
    def batch(self, commit_every: float = 0.5) -> Iterator[None]:
        """SQLite's grouping of many :meth:`atomic` blocks into few transactions, kept to one block
        per transaction here: a transaction holding several sessions' row locks (their project's
        relink flag above all) could deadlock against another member's, one session at a time cannot,
        and the server's commits are cheap."""
        yield

    def _query(self, sql: str, params: Sequence[Any] = ()) -> Any:
        # The cursor holds every row once it returns (a client-side cursor), so the turn is held
        # while the statement runs only.
        if self._turn.acquire(blocking=False):  # free, or this thread's own (open transaction)
            try:
                return self.conn.execute(pyformat(sql), params)
            finally:
                self._turn.release()
        if is_read(sql):
            # Another thread holds the connection, perhaps for a whole ingest transaction: a search
            # waited for it to commit. The read runs on the reader connection, in autocommit, and
            # sees what is committed, as SQLite's read-only connections do.
            return self._reader().execute(pyformat(sql), params)
        with self._turn:  # a write outside a transaction waits for another thread's to end
            return self.conn.execute(pyformat(sql), params)

    def _reader(self) -> Any:
        """The connection reads use while another thread holds :attr:`conn`, opened on first need;
        psycopg runs one statement at a time on it, whichever thread sends it."""
        with self._reader_lock:
            if self._reader_conn is None:
                if self.conn.closed:  # a closed store reads nothing, on any thread
                    raise psycopg_module().OperationalError("the connection is closed")
                self._reader_conn = connect(self.url, connect_timeout=self._connect_timeout)
            return self._reader_conn

    def _run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._turn, self.conn.cursor() as cur:
            cur.executemany(pyformat(sql), rows)

    def _in_ids(
        self, sql: str, ids: Sequence[Any], before: Sequence[Any] = (), after: Sequence[Any] = ()
    ) -> Iterator[Any]:
        if ids:  # one array parameter, however many ids
            yield self._query(sql.format(ids="= ANY(?)"), [*before, list(ids), *after])

    def _chunk_scope(self, scope: ChunkScope) -> tuple[str, list[object]]:
        """As SQLite's, with an array for the projects and ``starts_with`` for the session prefix
        (no pattern: a prefix is matched literally)."""
        where: list[str] = []
        params: list[object] = []
        if scope.project_ids is not None:
            where.append("c.project_id = ANY(?)")
            params.append(list(scope.project_ids))
        if scope.session_id is not None:
            where.append("c.session_id = ?")
            params.append(scope.session_id)
        if scope.session_prefix is not None:
            where.append("starts_with(c.session_id, ?)")
            params.append(scope.session_prefix)
        if scope.member is not None:
            where.append("c.member = ?")
            params.append(scope.member)
        tail, values = common.agent_and_time("?", scope.agent, scope.since, scope.until)
        where += tail
        params += values
        return " AND ".join(where) or "TRUE", params

    # ---- projects -------------------------------------------------------------------------

    def first_chunk_texts(self, session_ids: Sequence[str]) -> dict[str, str]:
        return self._first_texts(session_ids, "")

    def _first_texts(self, session_ids: Sequence[str], condition: str) -> dict[str, str]:
        rows = self._rows(
            "SELECT DISTINCT ON (session_id) session_id, content FROM chunks"
            f" WHERE session_id = ANY(?){condition}"
            " ORDER BY session_id, agent != 'main', start_time, turn_index, part",
            (list(session_ids),),
        )
        return {r[0]: r[1] for r in rows}

    def project_summaries(self) -> list[ProjectTotals]:
        """As SQLite's, with the members who ingested each project's sessions (how many each)."""
        members: dict[int, list[tuple[str, int]]] = {}
        for project_id, member, sessions in self._rows(PROJECT_MEMBERS_SQL):
            members.setdefault(project_id, []).append((member, int(sessions)))
        return [replace(p, members=tuple(members.get(p.id, ()))) for p in super().project_summaries()]

    # ---- files (ingest checkpoints) -------------------------------------------------------

    def unchanged_file_rules(self, path: str, size: int, mtime_ns: int) -> int | None:
        """Ingest asks this of every file before reading any: one read of this member's marks, not a
        round trip per file, which on a remote server made a push with nothing new wait seconds
        (a thousand files at 5 ms each). Writing marks drops the copy; a copy another process of this
        member has outdated since can only make a file look changed, and reading it again is harmless."""
        if self._file_marks is None:
            # A mark written before the database recorded sessions' folders (m008: a member ingested
            # while the owner had not applied it yet) is no mark once it does: its file is read once
            # more, which gives its session the folder it was recorded in (split-project reads it). A
            # mark whose time is not one ('') is kept: casting it would fail every member's ingest.
            since = (
                r" AND CASE WHEN ingested_at ~ '^\d{4}-\d\d-\d\d' THEN ingested_at::timestamptz >= COALESCE(("
                f"SELECT applied_at::timestamptz FROM schema_migrations WHERE version = {_FOLDERS}), '-infinity')"
                " ELSE TRUE END"
                if self.records_folders
                else ""
            )
            rows = self._rows(
                f"SELECT path, size, mtime_ns, rules_version FROM files WHERE member = ?{since}", (self.member,)
            )
            self._file_marks = {r[0]: (r[1], r[2], r[3]) for r in rows}
        mark = self._file_marks.get(path)
        return int(mark[2]) if mark is not None and mark[:2] == (size, mtime_ns) else None

    def mark_files(self, marks: Iterable[FileMark], rules_version: int) -> None:
        self._file_marks = None  # also when the transaction writing them rolls back
        marks = list(marks)
        # Deleted and inserted, not upserted: an update of a mark is an older release's, which knows
        # no rules version, and m007's trigger records it as read under the oldest rules. A mark
        # another process of this member inserted in between (a group with no session takes no
        # project lock) is kept: at worst its file is read once more.
        self._query("DELETE FROM files WHERE member = ? AND path = ANY(?)", (self.member, [m.path for m in marks]))
        self._run_many(
            "INSERT INTO files(member, path, size, mtime_ns, skipped_lines, rules_version, ingested_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (member, path) DO NOTHING",
            [(self.member, m.path, m.size, m.mtime_ns, m.skipped_lines, rules_version, common.now()) for m in marks],
        )

    def file_marks_cleared(self) -> bool:
        """Never: no migration of team memory cleared marks, and each is written with its session. A
        member without marks (a reader, a newcomer) beside others' sessions is no such store."""
        return False

    def file_rules(self) -> dict[str, int]:
        rows = self._rows("SELECT path, rules_version FROM files WHERE member = ?", (self.member,))
        return {r[0]: r[1] for r in rows}

    # ---- sessions, chunks, edges ----------------------------------------------------------

    def save_session(
        self,
        project: Project,
        session_id: str,
        chunks: Sequence[ChunkRecord],
        team_name: str | None = None,
        source: str = "claude-code",
        title: str | None = None,
        cwd: str | None = None,
    ) -> SavedChunks:
        """Upsert a session and its chunks; return what was new, changed or only renumbered.

        The project's write lock is taken first (:meth:`lock_projects`), then the session row: a
        second member saving the same session waits until this transaction ends, then sees these
        chunks as existing."""
        self.lock_projects([project.id])
        kept = self._without_forgotten(chunks)
        if chunks and not kept:  # all forgotten: the session stays gone (its row came back, empty)
            return common.saved_chunks([], [], {})
        self._save_session_row(project, session_id, chunks, team_name, source, title, cwd, {"member": self.member})
        chunks = kept
        existing = self._existing_hashes([c.id for c in chunks])
        # Another member's copy of a chunk is theirs to update (row-level security would refuse it).
        others = self.protected_chunks([c.id for c in chunks if c.id in existing])
        new, changed = common.new_and_changed(chunks, existing, keep=others)
        now = common.now()
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO chunks(member, id, session_id, project_id, agent, agent_id, team_name, turn_index, part,"
                " start_time, end_time, content, search_terms, content_hash, approx_tokens, tool_use_count,"
                " code_block_count, has_thinking, message_uuids, created_at, source, stems, own_stems, bulk)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                " %s, %s, %s)" + common.CHUNK_UPSERT,
                [
                    (
                        self.member,
                        *common.chunk_row(
                            c, project.id, now, source, text_columns(_text(c.content), c.search_terms), _text
                        ),
                    )
                    for c in sorted([*new, *changed], key=lambda c: c.id)
                ],
            )
        return common.saved_chunks(new, changed, existing)

    def lock_projects(self, project_ids: Iterable[int]) -> None:
        """Hold the projects' write locks until this transaction ends (outside one, nothing is held).

        Every transaction that writes or deletes a project's chunks takes them before anything else,
        all at once, in id order (two writers taking two projects in opposite orders could deadlock):
        an ingest's session group (:func:`causantic.ingest.pipeline.lock_group`), a forget, a
        superseded chunk's removal, a relink, a merge of projects (:meth:`absorb_project`), a fill of
        old rows' text features. Without them, a forget of a project beside an ingest of one of its
        sessions deadlocked (each held rows the other's triggers needed: the session row, its stem
        counts, its chunks), or the ingest linked edges to chunks the forget had just committed away
        (a foreign-key violation). With them, the later one waits, then reads what the earlier one
        committed (each statement of a READ COMMITTED transaction sees the commits made before it
        started). The lock is the project row's FOR NO KEY UPDATE: inserts referencing the project
        still only check it. Only an ingest's folder-name locks come before them
        (:meth:`lock_project_names`)."""
        ids = sorted(set(project_ids))
        if ids:
            self._query("SELECT id FROM projects WHERE id = ANY(?) ORDER BY id FOR NO KEY UPDATE", (ids,))

    def lock_ingest_projects(self, session_ids: Sequence[str], cwds: Sequence[str], paths: Sequence[str]) -> None:
        """:meth:`lock_projects` for the projects an ingest's session group may write, found and
        locked in one statement (a round trip to a remote server per group, not several a session).

        A path with no project yet is one the group may make, renaming the projects of its folder
        name apart from it (:meth:`_name_family`): those are locked too, here, in id order with the
        rest. Renamed later, one at a time, they were taken out of that order: a forget holding one
        of them and waiting for a project this group held deadlocked with it.

        So are the Gemini CLI stand-ins of the paths of the projects the sessions are stored in and
        the cwds are recorded for (:func:`~causantic.store.records.stand_in_project`, made here in
        SQL), which the group absorbs: such a path may be none of ``paths`` (a cwd an older release
        recorded for another project path), and its stand-in was locked only when absorbed, out of order."""
        found = (
            "SELECT project_id FROM sessions WHERE id = ANY(?)"
            " UNION SELECT project_id FROM project_aliases WHERE cwd = ANY(?)"
        )
        self._query(
            f"SELECT id FROM projects WHERE path = ANY(?) OR id IN ({found})"
            f" OR {_FOLDER_NAME} IN (SELECT u.name FROM unnest(?::text[], ?::text[]) AS u(path, name)"
            "  WHERE NOT EXISTS (SELECT 1 FROM projects q WHERE q.path = u.path))"
            " OR path IN (SELECT ? || left(encode(sha256(convert_to(q.path, 'UTF8')), 'hex'), ?) FROM projects q"
            f"  WHERE q.id IN ({found}))"
            " ORDER BY id FOR NO KEY UPDATE",
            (
                list(paths),
                list(session_ids),
                list(cwds),
                list(paths),
                [_folder(p) for p in paths],
                STAND_IN_PREFIX,
                STAND_IN_HEX,
                list(session_ids),
                list(cwds),
            ),
        )

    def lock_project_names(self, paths: Iterable[str]) -> None:
        """Advisory locks, one per folder name, held until the transaction ends: two members making
        projects of one folder name at the same moment each named theirs from the projects they saw,
        the other's not committed yet (both ``api``); a Gemini CLI session's stand-in project made
        beside the ingest of a session naming its folder outlived it. With them the later one waits,
        then sees the earlier one's project. Taken before any project's row lock (:func:`lock_group`
        takes them first), in one order (by key), so they never wait on each other in a cycle."""
        keys = sorted({_name_key(_folder(path)) for path in paths})
        if keys:
            self._query("SELECT pg_advisory_xact_lock(?::int4, k) FROM unnest(?::int4[]) AS u(k)", (_NAME_LOCK, keys))

    def lock_topics(self, model: str, chunk_ids: Sequence[str]) -> None:
        """The write locks of these chunks' projects (:meth:`lock_projects`), then an advisory lock on
        ``model``'s topics, both until the transaction ends; a transaction reading the topics it then
        writes takes them before reading, and a forget before deleting memberships
        (:meth:`delete_chunks`). A member's ingest read the topics, another member's
        ``causantic cluster`` replaced them and committed, and the chunks the ingest then joined to a
        topic it had deleted failed the ingest on the foreign key (the recluster's chunks and the
        ingest's new ones may share no project, so their projects' locks alone kept nothing apart).
        Taken after the projects', as every lock on other tables is, so it waits on no cycle."""
        self._lock_projects_of(chunk_ids)
        self._lock_models([model])

    def _lock_models(self, models: Iterable[str]) -> None:
        """The advisory locks on these models' topics, in one order (by name)."""
        self._query(
            "SELECT pg_advisory_xact_lock(?::int4, hashtext(m)) FROM unnest(?::text[]) AS u(m)",
            (_TOPICS_LOCK, sorted(set(models))),
        )

    def _lock_projects_of(self, chunk_ids: Sequence[str]) -> None:
        """:meth:`lock_projects` for the projects of these chunks."""
        self.lock_projects(self.projects_of_chunks(chunk_ids))

    def drop_superseded(self, session_id: str, ids: Sequence[str]) -> int:
        """As SQLite's, after the session's project's lock and the lock of the topics its chunks are in
        (it counts them again, as a forget does: :meth:`delete_chunks`)."""
        self.lock_projects(r[0] for r in self._rows("SELECT project_id FROM sessions WHERE id = ?", (session_id,)))
        self._lock_topics_of(ids)
        return super().drop_superseded(session_id, ids)

    def _lock_topics_of(self, chunk_ids: Sequence[str]) -> None:
        """The topics' locks (:meth:`lock_topics`) of the models these chunks have topics in, taken with
        their projects' locks held and before their memberships are deleted and their topics counted
        again: another member's recluster deletes and rewrites topics beyond the projects it locks,
        and each, holding a row the other then needed, deadlocked. Read after the projects' locks, the
        memberships can only shrink meanwhile: a writer adding one to these chunks holds their projects'
        locks first."""
        self._lock_models(
            r[0]
            for r in self._rows(
                "SELECT DISTINCT k.model FROM chunk_clusters m JOIN clusters k ON k.id = m.cluster_id"
                " WHERE m.chunk_id = ANY(?)",
                (list(chunk_ids),),
            )
        )

    def file_chunks_with_session(self, session_id: str) -> int:
        """As the base class, in one statement: one round trip per session written, not two."""
        return int(
            self._value(
                "WITH moved AS (UPDATE chunks c SET project_id = s.project_id FROM sessions s"
                " WHERE s.id = c.session_id AND c.session_id = ? AND c.project_id <> s.project_id RETURNING c.id),"
                " dropped AS (DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM moved))"
                " SELECT COUNT(*) FROM moved",
                (session_id,),
            )
        )

    def _chunks_moved(self, ids: Sequence[str]) -> None:
        """Nothing to do: a trigger moves their vectors' project (migration m004)."""

    def protected_chunks(self, ids: Sequence[str]) -> set[str]:
        """The chunks of ``ids`` this member's database role may neither change nor delete: another
        member's, unless the role is theirs too (a team sharing one login), an admin's or the tables'
        owner's (row-level security, migration m002)."""
        if not ids:
            return set()
        return {
            r[0]
            for r in self._rows(
                "SELECT id FROM chunks WHERE id = ANY(?) AND NOT causantic_may_change(owner_role)", (list(ids),)
            )
        }

    def protected_counts(self, session_ids: Sequence[str]) -> dict[str, int]:
        """:meth:`protected_chunks` of these sessions, counted by member on the server (a merge's
        preview loaded the whole project's chunks to count them)."""
        if not session_ids:
            return {}
        rows = self._rows(
            "SELECT member, COUNT(*) FROM chunks WHERE session_id = ANY(?) AND NOT causantic_may_change(owner_role)"
            " GROUP BY member",
            (list(session_ids),),
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def delete_chunks(self, ids: Sequence[str], *, remember: bool = True) -> int:
        """Remove chunks (edges, vectors, memberships cascade), remembering them as forgotten.

        Row-level security lets a member delete only their own chunks (a team admin, any): when
        some of ``ids`` belong to others, nothing is deleted and the StoreError says whose they are,
        so a forget never does less than it previewed without saying so. Their projects are flagged for
        relinking in the same transaction (as SQLite's)."""
        now = common.now()
        ids = list(ids)
        with self.atomic():
            self._lock_projects_of(ids)
            self._lock_topics_of(ids)
            self._query(
                "UPDATE projects SET needs_relink = TRUE WHERE NOT needs_relink"
                " AND id IN (SELECT project_id FROM chunks WHERE id = ANY(?))",
                (ids,),
            )
            others = self.protected_chunks(ids)
            if others:
                owners = sorted(
                    {r[0] for r in self._rows("SELECT member FROM chunks WHERE id = ANY(?)", (sorted(others),))}
                )
                raise StoreError(
                    f"{len(others)} of these {len(ids)} chunks belong to other members ({', '.join(owners)}): a "
                    "member forgets only their own memory unless they hold the causantic_admin role. Nothing was "
                    "deleted."
                )
            if remember:
                self._run_many(
                    "INSERT INTO forgotten(chunk_id, forgotten_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    [(i, now) for i in ids],
                )
            # Only the sessions and topics these chunks were in: a statement over every row would
            # lock other projects' rows too, and wait on (or deadlock with) their writers.
            sessions = sorted({r[0] for r in self._rows("SELECT session_id FROM chunks WHERE id = ANY(?)", (ids,))})
            clusters = [
                r[0] for r in self._rows("SELECT cluster_id FROM chunk_clusters WHERE chunk_id = ANY(?)", (ids,))
            ]
            removed = int(self._query("DELETE FROM chunks WHERE id = ANY(?)", (ids,)).rowcount)
            self._query(
                "DELETE FROM sessions s WHERE s.id = ANY(?)"
                " AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.session_id = s.id)",
                (sessions,),
            )
            self._count_members(clusters)
        return removed

    def add_edges(self, edges: Sequence[EdgeRecord]) -> int:
        rows = sorted({(e.source, e.target, e.reference_type): e.weight for e in edges if e.source != e.target}.items())
        if not rows:
            return 0
        now = common.now()
        # One statement: its RETURNING counts exactly the edges this call added.
        return len(
            self._rows(
                "INSERT INTO edges(source_chunk_id, target_chunk_id, edge_type, reference_type, initial_weight,"
                " created_at) SELECT s, t, 'forward', r, w, ? FROM unnest(?::text[], ?::text[], ?::text[],"
                " ?::float8[]) AS u(s, t, r, w) ON CONFLICT DO NOTHING RETURNING id",
                (
                    now,
                    [k[0] for k, _ in rows],
                    [k[1] for k, _ in rows],
                    [k[2] for k, _ in rows],
                    [w for _, w in rows],
                ),
            )
        )

    def session_endpoints(self, project_id: int) -> list[SessionEndpoints]:
        """As SQLite's. Read at the start of a relink transaction, it takes the project's relink lock
        until that transaction ends: two members relinking one project at once would each delete the
        other's edges as stale. Then the project's write lock (:meth:`lock_projects`): a forget
        committed between reading the endpoints and linking them made the links point at nothing."""
        self._query("SELECT pg_advisory_xact_lock(?, ?)", (_RELINK_LOCK, project_id))
        self.lock_projects([project_id])
        return super().session_endpoints(project_id)

    # ---- topics ---------------------------------------------------------------------------

    def replace_clusters(
        self, model: str, clusters: Sequence[tuple[int | None, str, bytes, Sequence[tuple[str, float]]]]
    ) -> list[int]:
        now = common.now()
        ids: list[int] = []
        with self.atomic():
            self.lock_topics(model, [chunk_id for *_, members in clusters for chunk_id, _ in members])
            keep = [cid for cid, *_ in clusters if cid is not None]
            self._query("DELETE FROM clusters WHERE model = ? AND NOT (id = ANY(?))", (model, keep))
            for cluster_id, label, centroid, members in clusters:
                if cluster_id is None:
                    cluster_id = self._value(
                        "INSERT INTO clusters(label, model, centroid, size, created_at, updated_at)"
                        " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                        (label, model, centroid, len(members), now, now),
                    )
                else:
                    self._query(
                        "UPDATE clusters SET label = ?, centroid = ?, size = ?, updated_at = ? WHERE id = ?",
                        (label, centroid, len(members), now, cluster_id),
                    )
                    self._query("DELETE FROM chunk_clusters WHERE cluster_id = ?", (cluster_id,))
                self._upsert_members([(chunk_id, cluster_id, float(d)) for chunk_id, d in members])
                ids.append(int(cluster_id))
            self._count_members(ids)
            self.set_meta("clustered_at", now)
        return ids

    def _upsert_members(self, members: Sequence[tuple[str, int, float]]) -> None:
        """Write memberships; a chunk deleted since the clustering read it (a forget while it ran) is
        left out: its row would break the foreign key, and fail the run. Call with the chunks'
        projects locked (:meth:`_lock_projects_of`), so no forget is midway."""
        self._run_many(
            "INSERT INTO chunk_clusters(chunk_id, cluster_id, distance) SELECT ?, ?, ?"
            " WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?)"
            " ON CONFLICT (chunk_id, cluster_id) DO UPDATE SET distance = excluded.distance",
            [(chunk_id, cluster_id, distance, chunk_id) for chunk_id, cluster_id, distance in members],
        )

    def add_cluster_members(self, members: Sequence[tuple[str, int, float]]) -> None:
        with self.atomic():
            self._lock_projects_of([m[0] for m in members])
            self._upsert_members(members)
            self._count_members({m[1] for m in members})

    def session_opening_stems(self, session_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        rows = self._rows(
            "SELECT DISTINCT ON (session_id) session_id, content, stems, own_stems FROM chunks"
            " WHERE session_id = ANY(?) AND agent = 'main' ORDER BY session_id, start_time, turn_index, part",
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
            # Each row filled moves its session's stem counts (m006's trigger): the projects' write
            # locks first, in id order, as every writer of chunks takes them (:meth:`lock_projects`).
            self.lock_projects(r[0] for r in self._rows("SELECT DISTINCT project_id FROM chunks WHERE stems IS NULL"))
            return fill_text_features(self.conn)

    def fill_session_stems(self) -> int:
        """Nothing waits: migration m006 counts every session's stems when it adds their table."""
        return 0

    # ---- reads ----------------------------------------------------------------------------

    def count_chunks(self, scope: ChunkScope) -> int:
        where, params = self._chunk_scope(scope)
        return int(self._value(f"SELECT COUNT(*) FROM chunks c WHERE {where}", params))

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

    def opening_prompts(self, session_ids: Sequence[str]) -> dict[str, str]:
        return self._first_texts(session_ids, " AND content LIKE '[User]%'")

    def change_stamp(self) -> tuple[int, int]:
        """A value that changes whenever memory may have: the server's write-ahead-log position, which
        any member's commit moves (reads do not). Reads no table; moves also for other databases of the
        server, which only costs a cache refresh."""
        return (int(self._value("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")), 0)

    def counts(self) -> dict[str, object]:
        by_type = {r[0]: r[1] for r in self._rows("SELECT reference_type, COUNT(*) FROM edges GROUP BY reference_type")}
        return {
            "chunks": self._value("SELECT COUNT(*) FROM chunks"),
            "edges": {"total": sum(by_type.values()), "by_type": by_type},
            "sessions": self._value("SELECT COUNT(*) FROM sessions"),
            "projects": self._value("SELECT COUNT(*) FROM projects WHERE id IN (SELECT project_id FROM chunks)"),
            "agents": len(agents := self.sub_agents()),
            "agent_names": agents,
            "clusters": self._value("SELECT COUNT(*) FROM clusters WHERE size > 0"),  # not emptied by forget
            "files": self._value("SELECT COUNT(*) FROM files"),
            "skipped_lines": self._value("SELECT COALESCE(SUM(skipped_lines), 0) FROM files"),
            "sources": self.source_counts(),
            "members": {
                r[0]: {"sessions": r[1], "chunks": r[2]}
                for r in self._rows(
                    "SELECT member, COUNT(DISTINCT session_id), COUNT(*) FROM chunks GROUP BY member ORDER BY member"
                )
            },
            "keyword_index": "on (PostgreSQL full-text search)",
        }

    def sub_agents(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT DISTINCT agent FROM chunks WHERE agent != 'main' ORDER BY agent")]

    def source_counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {source: {"sessions": 0, "chunks": 0} for source in SOURCES}
        for source, sessions, chunks in self._rows(
            "SELECT source, COUNT(DISTINCT session_id), COUNT(*) FROM chunks GROUP BY source"
        ):
            out[source] = {"sessions": sessions, "chunks": chunks}
        return out

    def size_bytes(self) -> int:
        return int(self._value("SELECT pg_database_size(current_database())"))

    def space(self) -> StoreSpace:
        """The database's size; PostgreSQL's autovacuum makes deleted rows' space reusable itself."""
        return StoreSpace(self.size_bytes(), 0, 0, True)

    def release_space(self) -> None:
        """Nothing to do: autovacuum reclaims deleted rows (a shared server is its owner's to shrink)."""

    def tidy(self) -> None:
        """Nothing to do: the server checkpoints its own log."""

    def vacuum_shortfalls(self) -> list[DiskShortfall]:
        """None: :meth:`vacuum` writes nothing."""
        return []

    def vacuum(self) -> tuple[StoreSpace, StoreSpace]:
        """Nothing rebuilt: a shared server's files are its owner's (VACUUM FULL locks every member out)."""
        space = self.space()
        return space, space


def _folder(path: str) -> str:
    return common.path_parts(path)[-1]


def _name_key(folder: str) -> int:
    """A folder name as the second key of an advisory lock: a signed 32-bit number, the same in every
    process (a collision only makes two names wait on each other)."""
    return int.from_bytes(hashlib.sha256(folder.encode()).digest()[:4], "big", signed=True)


def _text(value: str) -> str:
    """PostgreSQL text cannot hold NUL, which a transcript can; SQLite kept it. Dropped."""
    return value.replace("\x00", "") if "\x00" in value else value
