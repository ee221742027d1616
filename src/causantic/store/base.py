"""SqlStore: the statements SQLite and PostgreSQL run alike, written once.

:class:`~causantic.store.memory.MemoryStore` (SQLite) and
:class:`~causantic.store.postgres.store.PostgresStore` subclass it. It holds every read and write
whose SQL is the same in both dialects but for three things each subclass names: its placeholder
(statements here are written with ``?``; PostgreSQL's driver wants ``%s``, see :func:`pyformat`),
how a list of ids is matched (``IN (?, …)`` in batches for SQLite, one ``= ANY(?)`` array for
PostgreSQL: :meth:`SqlStore._in_ids`), and the spelling of an aggregate (:attr:`SqlStore.JOINED`).
Statements that differ more (saving a session, deleting chunks, the keyword index, topics'
replacement, counts) stay in the subclass that runs them. The decisions that
need no SQL at all are in :mod:`causantic.store.common`.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar

from causantic.store import common
from causantic.store.migrations import SESSION_STEMS
from causantic.store.records import (
    ChunkKey,
    ChunkRecord,
    ChunkScope,
    ChunkText,
    ClusterRecord,
    EdgeRecord,
    Project,
    ProjectSessions,
    ProjectTotals,
    SessionEndpoints,
    SessionFigures,
    SessionTotals,
    StoredChunk,
    TopicTotals,
)
from causantic.store.rows import CHUNK_COLUMNS, FEATURE_COLUMNS, stored_chunk


@functools.lru_cache(maxsize=1024)
def pyformat(sql: str) -> str:
    """A statement written with ``?`` placeholders as psycopg takes it (``%s``, and a literal ``%``
    doubled). No statement of ours holds a ``?`` that is not a placeholder."""
    return sql.replace("%", "%%").replace("?", "%s")


def is_read(sql: str) -> bool:
    """Whether a statement only reads: ours begin SELECT or WITH (a write so written would fail on a
    read-only SQLite connection). Such a statement may run on a connection of its own while another
    thread holds the store's (an open ingest transaction)."""
    return sql.lstrip()[:6].upper().startswith(("SELECT", "WITH"))


def marks(values: Sequence[object]) -> str:
    """``?, ?, …``: one placeholder per value, for an ``IN (…)`` list."""
    return ", ".join("?" * len(values))


class SqlStore(ABC):
    """The half of a store that both backends share; a subclass provides its transactions
    (:meth:`atomic`), its statement runners (:meth:`_query`, :meth:`_run_many`, :meth:`_in_ids`),
    its chunk scope condition (:meth:`_chunk_scope`) and :meth:`add_edges`."""

    # The distinct values of one column joined by commas (an aggregate over a GROUP BY).
    JOINED: ClassVar[str] = "GROUP_CONCAT(DISTINCT {})"
    # The smaller and the larger of two values: SQLite's two-argument MIN and MAX, PostgreSQL's LEAST
    # and GREATEST.
    LEAST: ClassVar[str] = "MIN"
    GREATEST: ClassVar[str] = "MAX"
    # Where a string starts in another (1 on), 0 when it is not in it: SQLite's INSTR, PostgreSQL's STRPOS.
    POSITION: ClassVar[str] = "INSTR"
    # The columns :func:`~causantic.store.rows.stored_chunk` reads (team memory adds ``c.member``).
    CHUNK_COLUMNS: ClassVar[str] = CHUNK_COLUMNS
    # Whose a group of chunks is (their members, comma-joined): none in local memory, where all are yours.
    MEMBERS: ClassVar[str] = "''"

    # What this store goes without until someone else upgrades its schema (team memory whose owner has
    # not applied a migration a member may do without: PostgresStore.schema_gap); None: nothing.
    schema_note: str | None = None

    @property
    def records_folders(self) -> bool:
        """Whether sessions record the folder they were recorded in (team memory whose owner has not
        applied PostgreSQL's m008 lacks the column)."""
        return True

    # ---- what a backend provides ----------------------------------------------------------

    @abstractmethod
    def atomic(self) -> AbstractContextManager[None]: ...

    @abstractmethod
    def add_edges(self, edges: Sequence[EdgeRecord]) -> int: ...

    @abstractmethod
    def _query(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement written with ``?`` placeholders; returns the driver's cursor."""
        ...

    @abstractmethod
    def _run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement (``?`` placeholders) once per row of values."""
        ...

    @abstractmethod
    def _in_ids(
        self, sql: str, ids: Sequence[Any], before: Sequence[Any] = (), after: Sequence[Any] = ()
    ) -> Iterator[Any]:
        """Run ``sql``, whose ``{ids}`` stands where a column is compared to the list ``ids``, with
        ``before`` and ``after`` the values of the placeholders around it; the cursors, in turn
        (SQLite: one per batch of ids; none for no ids)."""
        ...

    @abstractmethod
    def _chunk_scope(self, scope: ChunkScope) -> tuple[str, list[object]]:
        """A WHERE condition over chunks aliased ``c`` covering exactly ``scope``."""
        ...

    # ---- helpers over them ----------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self._query(sql, params).fetchall())

    def _value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self._query(sql, params).fetchone()
        return row[0] if row else None

    def _rows_in(
        self, sql: str, ids: Sequence[Any], before: Sequence[Any] = (), after: Sequence[Any] = ()
    ) -> Iterator[Any]:
        for cursor in self._in_ids(sql, ids, before, after):
            yield from cursor

    def _joined(self, column: str) -> str:
        return self.JOINED.format(column)

    # ---- projects -------------------------------------------------------------------------

    def resolve_project(self, cwd: str, canonical_path: str, repository: str | None = None) -> Project:
        """The project for a cwd, created on first sight; the cwd is remembered as an alias.

        ``repository`` (``git:<host>/<owner>/<repo>``, :func:`causantic.transcripts.projects.repository_key`)
        is the repository the canonical path is a checkout of. It is remembered as an alias of the
        project too (the first project of it keeps it), and a cwd first seen in another clone of it,
        at another path (another member's machine, a second clone), joins that project: team memory
        held one project per member's path, and ``--project api`` named several. Of a repository
        some of whose clones were split out into projects of their own (:func:`common.clone_key`), a
        clone joins the project split out of a folder of its name, if any."""
        row = self._query(
            "SELECT p.id, p.path, p.name, EXISTS (SELECT 1 FROM project_aliases r WHERE r.cwd = ?) AS known"
            " FROM project_aliases a JOIN projects p ON p.id = a.project_id WHERE a.cwd = ?",
            (repository or "", cwd),
        ).fetchone()
        if row:
            project = Project(row["id"], row["path"], row["name"])
            if repository and not row["known"]:  # a project made before repositories were recorded
                self._add_aliases(project, [repository])
            return project
        keys = [canonical_path, *([repository] if repository else [])]
        with self.atomic():
            self.lock_project_names(keys)  # held already by an ingest's group (lock_group)
            project = (
                self._project_by_path(canonical_path)
                or (self._project_by_alias(common.clone_key(repository, canonical_path)) if repository else None)
                or (self._project_by_alias(repository) if repository else None)
                or self._create_project(canonical_path)
            )
            # The canonical path too, when it is another clone's: the hooks look a folder's project up by it.
            self._add_aliases(project, [cwd, *([canonical_path] if project.path != canonical_path else []), *keys[1:]])
        return project

    def _project_by_alias(self, cwd: str) -> Project | None:
        row = self._query(
            "SELECT p.id, p.path, p.name FROM project_aliases a JOIN projects p ON p.id = a.project_id WHERE a.cwd = ?",
            (cwd,),
        ).fetchone()
        return Project(row["id"], row["path"], row["name"]) if row else None

    def _add_aliases(self, project: Project, cwds: Sequence[str]) -> None:
        self._run_many(
            "INSERT INTO project_aliases(cwd, project_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(cwd, project.id) for cwd in dict.fromkeys(cwds)],
        )

    def _project_by_path(self, path: str) -> Project | None:
        row = self._query("SELECT id, path, name FROM projects WHERE path = ?", (path,)).fetchone()
        return Project(row["id"], row["path"], row["name"]) if row else None

    def _create_project(self, path: str) -> Project:
        # Another writer (a team member) may create it at the same moment: the conflict leaves
        # theirs, which is read back. One creating another project of this folder name waits for
        # this transaction to end (:meth:`lock_project_names`), then names its own apart from this one.
        self._query(
            "INSERT INTO projects(path, name, created_at) VALUES (?, ?, ?) ON CONFLICT (path) DO NOTHING",
            (path, path, common.now()),
        )
        project = self._project_by_path(path)
        assert project is not None
        names = self._name_family(common.path_parts(path)[-1])
        return Project(project.id, path, names[project.id])

    def _name_family(self, basename: str) -> dict[int, str]:
        """Rename the projects with this folder name apart (:func:`common.family_names`)."""
        names = common.family_names(
            ((r[0], r[1]) for r in self._rows("SELECT id, path FROM projects ORDER BY id")), basename
        )
        self._run_many(
            "UPDATE projects SET name = ? WHERE id = ? AND name != ?", [(n, pid, n) for pid, n in sorted(names.items())]
        )
        return names

    def find_projects(self, text: str) -> list[Project]:
        """Projects whose name or path equals ``text``; else whose name or path ends with ``/text``
        in any case (``--project Demo`` names /work/demo). The case is folded here, not by SQL: SQLite's
        LIKE folds ASCII letters only and PostgreSQL's ILIKE every letter, so ``Über`` named a project
        on one backend and not the other; a store has tens of projects, not millions."""
        rows = self._rows(
            "SELECT id, path, name FROM projects WHERE name = ? OR path = ?"
            " UNION SELECT p.id, p.path, p.name FROM project_aliases a JOIN projects p"
            " ON p.id = a.project_id WHERE a.cwd = ?",
            (text, text.rstrip("/") or text, text),
        )
        if not rows:
            # Also by the end of a recorded cwd: another member's clone of the project, at another path.
            tail = "/" + text.casefold()
            cwds: dict[int, list[str]] = {}
            for project_id, cwd in self._rows("SELECT project_id, cwd FROM project_aliases"):
                cwds.setdefault(project_id, []).append(cwd)
            rows = [
                r
                for r in self._rows("SELECT id, path, name FROM projects ORDER BY id")
                if any(c.casefold().endswith(tail) for c in (r["name"], r["path"], *cwds.get(r["id"], ())))
            ]
        return [Project(r["id"], r["path"], r["name"]) for r in rows]

    def project_by_path(self, path: str) -> Project | None:
        """The project at ``path``, or the one a clone at ``path`` joined (:meth:`resolve_project`)."""
        return self._project_by_path(path) or self._project_by_alias(path)

    def absorb_project(self, path: str, into: Project) -> int:
        """Move the sessions, chunks and cwds of the project at ``path`` into ``into``, then delete it;
        returns the sessions moved (0 when there is no such project).

        For a stand-in project (Gemini CLI sessions known only by a hash of their cwd) once a session
        names that cwd. The moved chunks lose their vectors, so the next embedding pass writes them
        again under the new project. Call inside :meth:`atomic`; ``into`` is flagged for relinking.
        """
        old = self._project_by_path(path)
        if old is None or old.id == into.id:
            return 0
        self.lock_projects([old.id, into.id])
        self._query("DELETE FROM vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE project_id = ?)", (old.id,))
        self._query("UPDATE chunks SET project_id = ? WHERE project_id = ?", (into.id, old.id))
        moved = int(self._query("UPDATE sessions SET project_id = ? WHERE project_id = ?", (into.id, old.id)).rowcount)
        self._query("UPDATE project_aliases SET project_id = ? WHERE project_id = ?", (into.id, old.id))
        self._query("DELETE FROM projects WHERE id = ?", (old.id,))
        self.mark_relink(into.id)
        return moved

    def rekey_project(self, path: str, key: str) -> None:
        """Give the project at ``path`` the path ``key``, or merge it into the project at ``key``
        when there is one (:meth:`absorb_project`); nothing when no project is at ``path``.

        For the project of sessions without cwd that an older release keyed by their folder's whole
        path, now keyed by the folder's name (:func:`causantic.transcripts.projects.folder_project`).
        Its cwds stay recorded, so a later session in that folder still finds it. Call inside
        :meth:`atomic`; the projects were locked with the ingest's group (``lock_ingest_projects``:
        the one at ``path`` is the session's, or the one its folder is recorded for)."""
        old = self._project_by_path(path)
        if old is None or path == key:
            return
        into = self._project_by_path(key)
        if into is not None:
            self.absorb_project(path, into)
        else:
            self._query("UPDATE projects SET path = ? WHERE id = ?", (key, old.id))
        self._name_family(common.path_parts(key)[-1])  # a family one shorter, or named by another path

    def session_folders(self, project_id: int) -> dict[str, str | None]:
        """Each session of the project by id, with the folder it was recorded in (None: ingested
        before folders were recorded, SQLite m013 / PostgreSQL m008, and not read again since)."""
        cwd = "cwd" if self.records_folders else "NULL"
        return {r[0]: r[1] for r in self._rows(f"SELECT id, {cwd} FROM sessions WHERE project_id = ?", (project_id,))}

    def project_aliases(self, project_id: int) -> list[str]:
        """The cwds (and ``git:`` repositories) recorded for the project, which later sessions join it by."""
        return [
            r[0] for r in self._rows("SELECT cwd FROM project_aliases WHERE project_id = ? ORDER BY cwd", (project_id,))
        ]

    def new_project_name(self, path: str) -> str:
        """The name a project made at ``path`` would get beside those of its folder name."""
        rows = self._rows("SELECT id, path FROM projects ORDER BY id")
        return common.family_names([*((r[0], r[1]) for r in rows), (-1, path)], common.path_parts(path)[-1])[-1]

    def clone_key(self, repository: str, path: str) -> str:
        """The alias by which clones of ``repository`` kept in a folder of ``path``'s name join one
        project (:func:`common.clone_key`)."""
        return common.clone_key(repository, path)

    def move_sessions(
        self, session_ids: Sequence[str], source: Project, into: Project | str, aliases: Sequence[str]
    ) -> Project:
        """Move the sessions ``session_ids`` of ``source``, with their chunks, into ``into`` (a project,
        or a path: a new project there), and ``aliases`` with them, recorded for ``into`` if they were
        not (later sessions in those folders join ``into``); ``source`` is deleted once it holds no
        session. Returns the project moved into. Call inside :meth:`atomic`; both projects are
        flagged for relinking."""
        if isinstance(into, str):
            self.lock_project_names([into, source.path])
            into = self._project_by_path(into) or self._create_project(into)
        else:
            self.lock_project_names([into.path, source.path])
        self.lock_projects([source.id, into.id])
        ids = list(session_ids)
        moved = [
            r[0]
            for r in self._rows_in("SELECT id FROM chunks WHERE project_id = ? AND session_id {ids}", ids, [source.id])
        ]
        for sql in (
            "UPDATE chunks SET project_id = ? WHERE project_id = ? AND session_id {ids}",
            "UPDATE sessions SET project_id = ? WHERE project_id = ? AND id {ids}",
        ):
            for _ in self._in_ids(sql, ids, [into.id, source.id]):  # each cursor ran its batch
                pass
        self._chunks_moved(moved)
        self._run_many(
            "UPDATE project_aliases SET project_id = ? WHERE project_id = ? AND cwd = ?",
            [(into.id, source.id, cwd) for cwd in aliases],
        )
        self._add_aliases(into, aliases)  # those not recorded yet (a split's clone_key)
        if self._rows("SELECT 1 FROM sessions WHERE project_id = ? LIMIT 1", (source.id,)):
            self.mark_relink(source.id)
        else:
            self._query("DELETE FROM projects WHERE id = ?", (source.id,))
            basename = common.path_parts(source.path)[-1]
            if any(common.path_parts(r[0])[-1] == basename for r in self._rows("SELECT path FROM projects")):
                self._name_family(basename)  # one left of two: its name shortens again
        self.mark_relink(into.id)
        return self.projects_by_id([into.id])[0]

    @abstractmethod
    def _chunks_moved(self, ids: Sequence[str]) -> None:
        """Keep the vector index right for chunks moved to another project."""

    def project_for_cwd_hash(self, digest: str) -> Project | None:
        """The project of a cwd known only by its sha256 hex digest (Gemini CLI's ``projectHash``):
        the project whose path, or one of whose recorded cwds, hashes to it."""
        rows = self._rows(
            "SELECT p.id, p.path, p.name, a.cwd FROM projects p LEFT JOIN project_aliases a ON a.project_id = p.id"
        )
        return common.project_for_cwd_hash(rows, digest)

    def projects_with_chunks(self) -> list[int]:
        return [r[0] for r in self._rows("SELECT DISTINCT project_id FROM chunks")]

    def holds_chunks(self, project_id: int) -> bool:
        """Whether the project has a chunk left (one index probe): a project all forgotten has none."""
        return bool(self._rows("SELECT 1 FROM chunks WHERE project_id = ? LIMIT 1", (project_id,)))

    def projects_by_id(self, ids: Iterable[int]) -> list[Project]:
        rows = self._rows_in("SELECT id, path, name FROM projects WHERE id {ids} ORDER BY id", sorted(ids))
        return [Project(r["id"], r["path"], r["name"]) for r in rows]

    @abstractmethod
    def lock_projects(self, project_ids: Iterable[int]) -> None:
        """Hold these projects' write locks until the transaction ends, taken in id order."""

    @abstractmethod
    def lock_ingest_projects(self, session_ids: Sequence[str], cwds: Sequence[str], paths: Sequence[str]) -> None:
        """:meth:`lock_projects` for the projects an ingest's session group may write: those its
        sessions are stored in, its cwds are recorded for (:meth:`resolve_project`), ``paths`` name."""

    @abstractmethod
    def lock_topics(self, model: str, chunk_ids: Sequence[str]) -> None:
        """Hold, until the transaction ends, the write locks of these chunks' projects, then the
        topics of ``model``: taken before a transaction reads the topics it then writes (a full run
        replacing them, an ingest joining chunks to them)."""

    @abstractmethod
    def lock_project_names(self, paths: Iterable[str]) -> None:
        """Hold, until the transaction ends, the making of projects of these paths' folder names (and
        the renaming of that folder name's projects apart, :meth:`_name_family`); taken before any
        project's write lock."""

    def mark_relink(self, project_id: int) -> None:
        """Flag a project whose sessions changed; cleared once its cross-session edges are redone."""
        self._query("UPDATE projects SET needs_relink = TRUE WHERE id = ? AND NOT needs_relink", (project_id,))

    def projects_to_relink(self) -> list[int]:
        return [r[0] for r in self._rows("SELECT id FROM projects WHERE needs_relink ORDER BY id")]

    def clear_relink(self, project_id: int) -> None:
        self._query("UPDATE projects SET needs_relink = FALSE WHERE id = ?", (project_id,))

    def project_summaries(self) -> list[ProjectTotals]:
        """Projects holding chunks with their totals, most recently active first."""
        return [ProjectTotals(*r) for r in self._rows(common.PROJECT_TOTALS_SQL)]

    def project_names(self) -> list[str]:
        """Names of the projects holding any chunk, alphabetically (one index probe per project)."""
        return [r[0] for r in self._rows(common.PROJECT_NAMES_SQL)]

    def project_activity(self) -> list[ProjectSessions]:
        """Projects with sessions, most recently active first. Read from the sessions table alone,
        so it stays cheap however many chunks there are."""
        return [ProjectSessions(*r) for r in self._rows(common.PROJECT_ACTIVITY_SQL)]

    def project_chunk_ids(self, project_id: int) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM chunks WHERE project_id = ?", (project_id,))]

    def projects_of_chunks(self, ids: Sequence[str]) -> set[int]:
        return {r[0] for r in self._rows_in("SELECT DISTINCT project_id FROM chunks WHERE id {ids}", ids)}

    # ---- sessions -------------------------------------------------------------------------

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
        rows = self._rows(
            "SELECT c.session_id, MIN(c.start_time) AS started, MAX(c.end_time) AS ended, COUNT(*) AS chunks,"
            f" SUM(c.approx_tokens) AS tokens, {self._joined('c.agent')} AS agents, MIN(c.source) AS source,"
            f" (SELECT s.title FROM sessions s WHERE s.id = c.session_id) AS title, {self.MEMBERS} AS members"
            f" FROM chunks c WHERE {' AND '.join(['c.project_id = ?', *where])}"
            " GROUP BY c.session_id ORDER BY started DESC, c.session_id",
            [project_id, *params],
        )
        return [common.session_totals(r) for r in rows]

    def session_chunk_ids(self, session_id: str) -> list[str]:
        return [
            r[0]
            for r in self._rows(
                "SELECT id FROM chunks WHERE session_id = ? ORDER BY start_time, turn_index, part", (session_id,)
            )
        ]

    def session_stem_counts(
        self, session_ids: Sequence[str], stems: Sequence[str]
    ) -> dict[str, tuple[int, dict[str, int]]]:
        """Per session: how many chunks it has, and of ``stems`` (word stems, as
        :func:`~causantic.store.features.word_stems` splits) how many of its chunks hold each in
        their own words (what listing tools printed left out), counted over every chunk of it, not
        only those a search found. Read from the per-session counts the store keeps (SQLite m011,
        PostgreSQL m006): a lookup per session and stem. A chunk written before the store kept stems
        (m009, until the next ingest fills them) counts as holding none. A stem no chunk holds is
        left out."""
        if not session_ids or not stems:
            return {}
        if not self._session_stems_complete():
            return self._scanned_session_stem_counts(session_ids, stems)
        asked = list(dict.fromkeys(stems))
        counts: dict[str, dict[str, int]] = {}
        for row in self._rows_in(
            "SELECT session_id, stem, chunks FROM session_stems"
            f" WHERE session_id {{ids}} AND stem IN ({marks(asked)}, ?)",
            list(dict.fromkeys(session_ids)),
            after=[*asked, ""],
        ):
            if row[2] > 0:
                counts.setdefault(row[0], {})[row[1]] = int(row[2])
        return {session: (held.pop(""), held) for session, held in counts.items() if "" in held}

    def _session_stems_complete(self) -> bool:
        """Whether the per-session stem counts hold every session: not while a store migrated to
        keep them still waits for its next ingest to count the sessions it held
        (:func:`causantic.store.migrations.fill_session_stems`). Once complete, a store stays so."""
        if not self._stem_counts_kept:
            self._stem_counts_kept = self.meta_value(SESSION_STEMS) is None
        return self._stem_counts_kept

    _stem_counts_kept = False

    def _scanned_session_stem_counts(
        self, session_ids: Sequence[str], stems: Sequence[str]
    ) -> dict[str, tuple[int, dict[str, int]]]:
        """:meth:`session_stem_counts` tested in the database on the stems column of every chunk of
        the sessions, so no chunk's text travels (12-45 ms for 30 sessions at 100k chunks)."""
        packed = "' ' || COALESCE(c.own_stems, c.stems, '') || ' '"
        held = ", ".join(f"SUM(CASE WHEN {self.POSITION}({packed}, ?) > 0 THEN 1 ELSE 0 END)" for _ in stems)
        out: dict[str, tuple[int, dict[str, int]]] = {}
        for row in self._rows_in(
            f"SELECT c.session_id, COUNT(*), {held} FROM chunks c WHERE c.session_id {{ids}} GROUP BY c.session_id",
            list(dict.fromkeys(session_ids)),
            before=[f" {stem} " for stem in stems],
        ):
            out[row[0]] = (int(row[1]), {stem: int(n) for stem, n in zip(stems, row[2:], strict=True) if n})
        return out

    def session_project(self, session_id: str) -> Project | None:
        """The project a stored session belongs to; None when the session is not stored."""
        row = self._query(
            "SELECT p.id, p.path, p.name FROM sessions s JOIN projects p ON p.id = s.project_id WHERE s.id = ?",
            (session_id,),
        ).fetchone()
        return Project(row["id"], row["path"], row["name"]) if row else None

    def file_chunks_with_session(self, session_id: str) -> int:
        """Move the session's chunks filed under another project than its own into the session's
        (an older version filed a line copied under another cwd there); returns how many moved. They
        lose their vectors, as :meth:`absorb_project`'s do. Call inside :meth:`atomic`."""
        stray = (
            "SELECT c.id FROM chunks c JOIN sessions s ON s.id = c.session_id"
            " WHERE c.session_id = ? AND c.project_id <> s.project_id"
        )
        self._query(f"DELETE FROM vectors WHERE chunk_id IN ({stray})", (session_id,))
        return int(
            self._query(
                f"UPDATE chunks SET project_id = (SELECT project_id FROM sessions WHERE id = ?) WHERE id IN ({stray})",
                (session_id, session_id),
            ).rowcount
        )

    def session_chunk_keys(self, session_id: str) -> list[ChunkKey]:
        """Where each stored chunk of a session sits in its transcript."""
        return [
            common.chunk_key(r)
            for r in self._rows(
                "SELECT id, agent_id, turn_index, part, message_uuids FROM chunks WHERE session_id = ?", (session_id,)
            )
        ]

    def session_endpoints(self, project_id: int) -> list[SessionEndpoints]:
        """Each session's first and last main-agent chunk in a project, oldest session first."""
        rows = self._rows(
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

    def session_edges(self, session_id: str) -> list[EdgeRecord]:
        """Every edge with an end in the session (so also the cross-session edges in and out)."""
        rows = self._rows(
            "SELECT source_chunk_id, target_chunk_id, reference_type, initial_weight FROM edges"
            " WHERE source_chunk_id IN (SELECT id FROM chunks WHERE session_id = ?)"
            " OR target_chunk_id IN (SELECT id FROM chunks WHERE session_id = ?) ORDER BY id",
            (session_id, session_id),
        )
        return [EdgeRecord(r[0], r[1], r[2], r[3]) for r in rows]

    def agent_spawns(self, session_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(session id, spawning agent, spawned agent) from brief and team-spawn edges."""
        return [
            (r[0], r[1], r[2])
            for r in self._rows_in(
                "SELECT DISTINCT s.session_id, s.agent, t.agent FROM edges e"
                " JOIN chunks s ON s.id = e.source_chunk_id JOIN chunks t ON t.id = e.target_chunk_id"
                " WHERE e.reference_type IN ('brief', 'team-spawn') AND s.session_id {ids} AND s.agent != t.agent",
                session_ids,
            )
        ]

    def session_sizes(self, session_ids: Sequence[str] | None = None) -> dict[str, tuple[str, int]]:
        """Each stored session among ``session_ids`` (None: every one) with its source and chunk count."""
        select = "SELECT s.id, s.source, (SELECT COUNT(*) FROM chunks c WHERE c.session_id = s.id) FROM sessions s"
        rows = self._rows(select) if session_ids is None else self._rows_in(select + " WHERE s.id {ids}", session_ids)
        return {r[0]: (r[1], r[2]) for r in rows}

    def session_figures(self, session_ids: Sequence[str], model: str) -> SessionFigures:
        """The edges between these sessions' chunks (both ends among them) by reference type, and
        how many of their chunks hold a vector of ``model``."""
        inside = set(session_ids)
        edges: dict[str, int] = {}
        for kind, target_session in self._rows_in(
            "SELECT e.reference_type, t.session_id FROM edges e JOIN chunks s ON s.id = e.source_chunk_id"
            " JOIN chunks t ON t.id = e.target_chunk_id WHERE s.session_id {ids}",
            session_ids,
        ):
            if target_session in inside:
                edges[kind] = edges.get(kind, 0) + 1
        vectors = sum(
            r[0]
            for r in self._rows_in(
                "SELECT COUNT(*) FROM vectors v JOIN chunks c ON c.id = v.chunk_id"
                " WHERE v.model = ? AND c.session_id {ids}",
                session_ids,
                before=[model],
            )
        )
        return SessionFigures(edges, int(vectors))

    # ---- chunks ---------------------------------------------------------------------------

    def _save_session_row(
        self,
        project: Project,
        session_id: str,
        chunks: Sequence[ChunkRecord],
        team_name: str | None,
        source: str,
        title: str | None,
        cwd: str | None = None,
        extra: dict[str, object] | None = None,
    ) -> None:
        """Upsert the session row of a save: its span grows to cover ``chunks``; when several files
        hold parts of one session (a resumed session), the title of the part that starts first wins.
        ``cwd``: the folder it was recorded in, kept from the first save naming one. ``extra`` names
        more columns set on insert (team memory's ``member``)."""
        started, ended = common.session_span(chunks)
        folder = {"cwd": cwd} if self.records_folders else {}
        extra = folder | (extra or {})
        names = ["id", "project_id", "started_at", "ended_at", "team_name", "source", "title", *extra]
        self._query(
            f"INSERT INTO sessions({', '.join(names)}) VALUES ({marks(names)})"
            " ON CONFLICT(id) DO UPDATE SET"
            + (" cwd = COALESCE(sessions.cwd, excluded.cwd)," if folder else "")
            + f" started_at = {self.LEAST}(COALESCE(sessions.started_at, excluded.started_at), excluded.started_at),"
            f" ended_at = {self.GREATEST}(COALESCE(sessions.ended_at, excluded.ended_at), excluded.ended_at),"
            " team_name = COALESCE(excluded.team_name, sessions.team_name), source = excluded.source,"
            " title = CASE WHEN excluded.title IS NOT NULL AND (sessions.title IS NULL"
            "  OR excluded.started_at <= COALESCE(sessions.started_at, excluded.started_at))"
            "  THEN excluded.title ELSE sessions.title END",
            (session_id, project.id, started, ended, team_name, source, title, *extra.values()),
        )

    def _without_forgotten(self, chunks: Sequence[ChunkRecord]) -> list[ChunkRecord]:
        """``chunks`` less those forgotten (a forgotten chunk is never stored again)."""
        ids = [c.id for c in chunks]
        gone = {r[0] for r in self._rows_in("SELECT chunk_id FROM forgotten WHERE chunk_id {ids}", ids)}
        return [c for c in chunks if c.id not in gone] if gone else list(chunks)

    def _existing_hashes(self, ids: Sequence[str]) -> dict[str, tuple[str, str, int]]:
        """Stored (content hash, message uuids JSON, turn index) by chunk id."""
        rows = self._rows_in("SELECT id, content_hash, message_uuids, turn_index FROM chunks WHERE id {ids}", ids)
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def protected_chunks(self, ids: Sequence[str]) -> set[str]:
        """The chunks of ``ids`` this member may not delete: none in local memory (team memory: the
        server's row-level security decides)."""
        return set()

    def protected_counts(self, session_ids: Sequence[str]) -> dict[str, int]:
        """Of these sessions' chunks, those this member may not change, counted by the member they are
        of: none in local memory (team memory: the server's row-level security decides)."""
        return {}

    def drop_superseded(self, session_id: str, ids: Sequence[str]) -> int:
        """Delete chunks that ingest no longer produces, with their edges, keyword-index rows and vector
        marks (cascades), and the session row if nothing is left. Unlike ``delete_chunks`` nothing is
        remembered as forgotten: the text may come back in another form. Call inside :meth:`atomic`.
        The topics they were in are counted again: a topic kept its size, and one whose chunks had all
        gone was still counted by `stats` and drawn on the topics map, until the next clustering."""
        topics = {r[0] for r in self._rows_in("SELECT cluster_id FROM chunk_clusters WHERE chunk_id {ids}", ids)}
        removed = sum(
            int(cursor.rowcount)
            for cursor in self._in_ids("DELETE FROM chunks WHERE session_id = ? AND id {ids}", ids, [session_id])
        )
        self._query(
            "DELETE FROM sessions WHERE id = ? AND NOT EXISTS (SELECT 1 FROM chunks WHERE session_id = ?)",
            (session_id, session_id),
        )
        self._count_members(topics)
        return removed

    def _count_members(self, cluster_ids: Iterable[int]) -> None:
        """Set these topics' sizes to their counts of members (in id order: writers lock their rows alike)."""
        for _ in self._in_ids(
            "UPDATE clusters SET size = (SELECT COUNT(*) FROM chunk_clusters m WHERE m.cluster_id = clusters.id)"
            " WHERE id {ids}",
            sorted(set(cluster_ids)),
        ):
            pass  # each batch's statement runs as the loop draws it

    def get_chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        rows = self._rows_in(
            f"SELECT {self.CHUNK_COLUMNS}{FEATURE_COLUMNS} FROM chunks c JOIN projects p ON p.id = c.project_id"
            " WHERE c.id {ids}",
            ids,
        )
        return {r["id"]: stored_chunk(r) for r in rows}

    def chunks_in(
        self, scope: ChunkScope, *, newest_first: bool = False, limit: int | None = None
    ) -> Iterator[StoredChunk]:
        """The chunks of ``scope`` in time order (turn, then part, within a time), oldest first
        unless ``newest_first``; at most ``limit``."""
        where, params = self._chunk_scope(scope)
        order = "DESC" if newest_first else "ASC"
        sql = (
            f"SELECT {self.CHUNK_COLUMNS} FROM chunks c JOIN projects p ON p.id = c.project_id WHERE {where}"
            f" ORDER BY c.start_time {order}, c.turn_index {order}, c.part {order}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        for row in self._query(sql, params):
            yield stored_chunk(row)

    def chunk_texts(self, ids: Sequence[str]) -> dict[str, str]:
        return {r[0]: r[1] for r in self._rows_in("SELECT id, content FROM chunks WHERE id {ids}", ids)}

    def neighbours(self, chunk_id: str, direction: str) -> list[tuple[str, str]]:
        """(next chunk id, reference type) along forward edges, or against them for 'backward'."""
        near, far = ("source_chunk_id", "target_chunk_id")
        if direction != "forward":
            near, far = far, near
        return [
            (r[0], r[1])
            for r in self._rows(
                f"SELECT {far}, reference_type FROM edges WHERE {near} = ? AND edge_type = 'forward' ORDER BY id",
                (chunk_id,),
            )
        ]

    def chunks_needing_vectors(self, model: str, limit: int) -> list[ChunkText]:
        """Chunks with no vector for ``model``, or whose text changed since it was embedded."""
        return [
            ChunkText(*r)
            for r in self._rows(
                "SELECT c.id, c.project_id, c.agent, c.content, c.content_hash FROM chunks c"
                " LEFT JOIN vectors v ON v.chunk_id = c.id AND v.model = ?"
                " WHERE v.chunk_id IS NULL OR v.content_hash != c.content_hash ORDER BY c.rowid LIMIT ?",
                (model, limit),
            )
        ]

    def count_chunks_needing_vectors(self, model: str) -> int:
        return int(
            self._value(
                "SELECT COUNT(*) FROM chunks c LEFT JOIN vectors v ON v.chunk_id = c.id AND v.model = ?"
                " WHERE v.chunk_id IS NULL OR v.content_hash != c.content_hash",
                (model,),
            )
        )

    # ---- edges ----------------------------------------------------------------------------

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
        stored = {
            (r[0], r[1], r[2])
            for r in self._rows_in(
                "SELECT source_chunk_id, target_chunk_id, reference_type FROM edges"
                f" WHERE source_chunk_id {{ids}} AND reference_type IN ({marks(reference_types)})",
                scope_chunk_ids,
                after=reference_types,
            )
            if r[1] in scope
        }
        return self._apply_edges(stored, edges)

    def replace_project_edges(
        self, project_id: int, reference_type: str, edges: Sequence[EdgeRecord]
    ) -> list[EdgeRecord]:
        """:meth:`replace_edges` for one edge type over a whole project, read with one indexed join
        (a project can hold 100k chunks: listing their ids to scope the query would cost far more)."""
        stored = {
            (r[0], r[1], r[2])
            for r in self._rows(
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
            self._run_many(
                "DELETE FROM edges WHERE source_chunk_id = ? AND target_chunk_id = ? AND reference_type = ?",
                sorted(stale),  # in one order: two writers deleting never wait on each other in a cycle
            )
        self.add_edges(new)
        return new

    # ---- topics ---------------------------------------------------------------------------

    def cluster_members(self, model: str) -> dict[int, set[str]]:
        members: dict[int, set[str]] = {}
        for cluster_id, chunk_id in self._rows(
            "SELECT m.cluster_id, m.chunk_id FROM chunk_clusters m JOIN clusters c ON c.id = m.cluster_id"
            " WHERE c.model = ?",
            (model,),
        ):
            members.setdefault(cluster_id, set()).add(chunk_id)
        return members

    def cluster_distances(self, model: str) -> dict[int, list[float]]:
        """Each topic's members' angular distances to its centroid (the spread new chunks are held to)."""
        spread: dict[int, list[float]] = {}
        for cluster_id, distance in self._rows(
            "SELECT m.cluster_id, m.distance FROM chunk_clusters m JOIN clusters c ON c.id = m.cluster_id"
            " WHERE c.model = ?",
            (model,),
        ):
            spread.setdefault(cluster_id, []).append(distance)
        return spread

    def cluster_rows(self, model: str) -> list[ClusterRecord]:
        """The stored topics of ``model`` with their centroids, by id."""
        return [
            ClusterRecord(r[0], r[1], bytes(r[2]), r[3], r[4], r[5])
            for r in self._rows(
                "SELECT id, label, centroid, size, created_at, updated_at FROM clusters WHERE model = ? ORDER BY id",
                (model,),
            )
        ]

    def clusters_of(self, chunk_ids: Sequence[str]) -> dict[str, list[tuple[int, float]]]:
        """Each chunk's clusters with its distance to their centroids, nearest first."""
        out: dict[str, list[tuple[int, float]]] = {}
        for chunk_id, cluster_id, distance in self._rows_in(
            "SELECT chunk_id, cluster_id, distance FROM chunk_clusters WHERE chunk_id {ids} ORDER BY distance",
            chunk_ids,
        ):
            out.setdefault(chunk_id, []).append((cluster_id, distance))
        return out

    def cluster_siblings(
        self, cluster_id: int, *, limit: int, project_ids: Sequence[int] | None = None, agent: str | None = None
    ) -> list[tuple[str, float]]:
        """Members of a cluster nearest its centroid first, within the search scope."""
        where = ["m.cluster_id = ?"]
        params: list[object] = [cluster_id]
        if project_ids:
            where.append(f"c.project_id IN ({marks(project_ids)})")
            params.extend(project_ids)
        if agent:
            where.append("c.agent = ?")
            params.append(agent)
        return [
            (r[0], r[1])
            for r in self._rows(
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
        rows = self._rows(
            "SELECT k.id, k.label, COUNT(c.rowid) AS size, MIN(c.start_time) AS first_seen,"
            f" MAX(c.end_time) AS last_seen, {self._joined('p.name')} AS projects"
            " FROM clusters k JOIN chunk_clusters m ON m.cluster_id = k.id JOIN chunks c ON c.id = m.chunk_id"
            f" JOIN projects p ON p.id = c.project_id WHERE {' AND '.join(where)}"
            " GROUP BY k.id ORDER BY size DESC, k.id",
            params,
        )
        return [TopicTotals(r[0], r[1], r[2], r[3], r[4], tuple(r[5].split(",")) if r[5] else ()) for r in rows]

    def topic_coverage(
        self, model: str, project_id: int | None = None, *, sessions: Sequence[str] | None = None
    ) -> tuple[int, int]:
        """(chunks, chunks in a topic of ``model``), of one project or all: what a topic list covers.
        ``sessions``: of those sessions' chunks only (the local copies of sessions team memory holds too)."""
        if sessions is not None:
            counted = list(
                self._rows_in(
                    "SELECT COUNT(*), COALESCE(SUM(CASE WHEN EXISTS (SELECT 1 FROM chunk_clusters m JOIN clusters k"
                    " ON k.id = m.cluster_id WHERE m.chunk_id = c.id AND k.model = ?) THEN 1 ELSE 0 END), 0)"
                    " FROM chunks c WHERE c.session_id {ids}"
                    + (" AND c.project_id = ?" if project_id is not None else ""),
                    sessions,
                    before=[model],
                    after=[project_id] if project_id is not None else [],
                )
            )
            return sum(int(r[0]) for r in counted), sum(int(r[1]) for r in counted)
        scope, params = ("WHERE c.project_id = ?", [project_id]) if project_id is not None else ("", [])
        chunks = int(self._value(f"SELECT COUNT(*) FROM chunks c {scope}", params))
        in_topics = int(
            self._value(
                "SELECT COUNT(DISTINCT m.chunk_id) FROM chunk_clusters m JOIN clusters k ON k.id = m.cluster_id"
                f" JOIN chunks c ON c.id = m.chunk_id WHERE k.model = ?{' AND c.project_id = ?' if scope else ''}",
                [model, *params],
            )
        )
        return chunks, in_topics

    def topic_sizes(self, model: str) -> list[tuple[int, str, int]]:
        """(id, label, size) of every topic of ``model``, largest first, from the topics table alone."""
        return [
            (r[0], r[1], r[2])
            # A topic whose chunks were all forgotten (size 0) is gone for the reader until the next recluster.
            for r in self._rows(
                "SELECT id, label, size FROM clusters WHERE model = ? AND size > 0 ORDER BY size DESC, id", (model,)
            )
        ]

    # ---- metadata -------------------------------------------------------------------------

    def meta_value(self, key: str) -> str | None:
        value = self._value("SELECT value FROM meta WHERE key = ?", (key,))
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        self._query(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, key: str) -> None:
        self._query("DELETE FROM meta WHERE key = ?", (key,))

    def last_ingested_at(self) -> str | None:
        """When a transcript file was last read into memory (None before the first ingest)."""
        value = self._value("SELECT MAX(ingested_at) FROM files")
        return None if value is None else str(value)
