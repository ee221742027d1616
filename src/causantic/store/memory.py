"""MemoryStore: every SQL statement Causantic runs against ``memory.db``, named for intent.

Writes are idempotent (``ON CONFLICT``), grouped with :meth:`MemoryStore.atomic` (and several
groups per transaction with :meth:`MemoryStore.batch`), and one session is always saved in one
transaction, so a killed ingest leaves the store as it was before that session and the next run
completes it. Nothing outside this package sees SQL or a connection: callers name what they want,
scope chunk reads with a :class:`~causantic.store.records.ChunkScope`, and get frozen records back
(:mod:`causantic.store.protocol` lists the methods the layers above use).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from causantic.errors import store_failure
from causantic.sources import SOURCES
from causantic.store import common
from causantic.store import sqlite as sqlite_util
from causantic.store.base import SqlStore, is_read, marks
from causantic.store.features import TextColumns, opening_stems, text_columns_in_order
from causantic.store.fts import quote_phrase
from causantic.store.keyword import KeywordSearch
from causantic.store.migrations import (
    SESSION_STEMS,
    SESSION_STEMS_UNAVAILABLE,
    STEMS_COUNTED_BY_WRITER,
    TEXT_FEATURES_PENDING,
    fill_session_stems,
    fill_text_features,
    migrate,
)
from causantic.store.records import (
    ChunkRecord,
    ChunkScope,
    DiskShortfall,
    EdgeRecord,
    FileMark,
    Project,
    SavedChunks,
    StoreSpace,
)

KEYWORD_INDEX_DELETIONS = "keyword_index_deletions"  # meta: chunks deleted since the keyword index was rewritten
KEYWORD_COMPACT_SHARE = 0.1
"""Once the chunks deleted since the keyword index was last rewritten reach this share of those it
indexed, the next :meth:`MemoryStore.release_space` rewrites it without them (what they leave in it
then outweighs a rewrite); until then they are left to FTS5's own merges. Not tunable: no answer
depends on it."""
_COUNTED_SCOPES = 64  # scopes whose chunk count is kept (searches use a handful: all, each project)


_CHUNK_COLUMNS = 23
_CHUNK_ROW = "(" + ", ".join(["?"] * _CHUNK_COLUMNS) + ")"
_CHUNK_ROWS_PER_STATEMENT = 1000  # at most; fewer when the SQLite library allows fewer parameters


def _count_own_stems(
    counts: Counter[tuple[str, str]], chunks: Sequence[ChunkRecord], values: Sequence[TextColumns]
) -> None:
    """Add to ``counts`` each chunk's own stems (``own_stems``, else ``stems``) and ``''`` for the
    chunk itself, by session: what m011's insert trigger counts."""
    for chunk, (_, stems, own_stems, _) in zip(chunks, values, strict=False):
        counts[chunk.session_id, ""] += 1
        counts.update((chunk.session_id, stem) for stem in (stems if own_stems is None else own_stems).split())


@sqlite_util.raising_store_errors(lambda store: f"at {store.path}")
class MemoryStore(SqlStore, AbstractContextManager["MemoryStore"]):
    """The SQLite half of memory. Use as a context manager, or call :meth:`close`. Every public
    method raises :class:`~causantic.errors.StoreError` (never ``sqlite3.Error``) when SQLite fails.
    The statements PostgreSQL runs alike are :class:`~causantic.store.base.SqlStore`'s."""

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
        # Whether the store keeps session_stems (m011; not on an SQLite without JSON functions).
        kept = self.conn.execute("SELECT value FROM meta WHERE key = ?", (SESSION_STEMS,)).fetchone()
        self._keeps_stem_counts = not (kept and kept[0] == SESSION_STEMS_UNAVAILABLE)
        # A transaction belongs to the connection, not to a thread: a read on another thread ran
        # inside an open ingest (seeing a session not yet committed, perhaps rolled back), and a
        # write joined it. So the connection is the turn's holder's: a transaction holds the turn
        # from its start to its end (a write elsewhere waits for it), and a read outside this
        # thread's own transaction runs on a read-only connection of this thread, on its own WAL
        # snapshot of what is committed, without waiting.
        self._turn = threading.RLock()
        self._mine = threading.local()  # depth: this thread's open atomic/batch blocks
        self._readers: dict[threading.Thread, sqlite3.Connection] = {}
        self._readers_lock = threading.Lock()
        self._busy_timeout_ms = busy_timeout_ms
        self._log_seen: sqlite_util.LogMark | None = None  # the log as tidy() last saw it

    def close(self) -> None:
        self._keywords.close()
        with self._readers_lock:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()
        self.conn.close()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Everything the block writes commits together or not at all (a savepoint when nested).
        Other threads' writes wait until it ends; their reads see what is committed."""
        with self._turn_held(), self._transactions.atomic():
            yield

    @contextmanager
    def batch(self, commit_every: float = 0.5) -> Iterator[None]:
        """Run many :meth:`atomic` blocks in few transactions, committing at most every
        ``commit_every`` seconds and on leaving; an error rolls back only the blocks not yet committed."""
        with self._turn_held(), self._transactions.batch(commit_every):
            yield

    @contextmanager
    def _turn_held(self) -> Iterator[None]:
        with self._turn:
            self._mine.depth = getattr(self._mine, "depth", 0) + 1
            try:
                yield
            finally:
                self._mine.depth -= 1

    def _reading(self) -> sqlite3.Connection:
        """The connection a read runs on: the writer's inside this thread's own transaction (it sees
        its own writes), else this thread's read-only one."""
        if getattr(self._mine, "depth", 0):
            return self.conn
        me = threading.current_thread()
        reader = self._readers.get(me)
        if reader is None:
            self.conn.total_changes  # noqa: B018 -- a closed store fails here, as the writer's reads did
            with self._readers_lock:
                # A search's helper thread ends with the search: its connection, page cache warm and
                # schema read, serves the next thread (opening a new one made every search ~5% slower).
                ended = [t for t in self._readers if not t.is_alive()]
                spare = [self._readers.pop(t) for t in ended]
                for extra in spare[1:]:
                    extra.close()
                reader = spare[0] if spare else None
                if reader is None:
                    reader = sqlite_util.connect(self.path, busy_timeout_ms=self._busy_timeout_ms, read_only=True)
                self._readers[me] = reader
        return reader

    def _execute(self, sql: str, params: Sequence[Any]) -> sqlite3.Cursor:
        if is_read(sql):
            return self._reading().execute(sql, params)
        with self._turn:  # a write outside a transaction waits for another thread's to end
            return self.conn.execute(sql, params)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._execute(sql, params)

    def _run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._turn:
            self.conn.executemany(sql, rows)

    def _in_ids(
        self, sql: str, ids: Sequence[Any], before: Sequence[Any] = (), after: Sequence[Any] = ()
    ) -> Iterator[sqlite3.Cursor]:
        for batch in common.batches(ids):  # SQLite has no arrays: IN lists, within its parameter limit
            yield self._execute(sql.format(ids=f"IN ({marks(batch)})"), [*before, *batch, *after])

    def _chunk_scope(self, scope: ChunkScope) -> tuple[str, list[object]]:
        """A WHERE condition over chunks aliased ``c`` covering exactly ``scope``; every value is a
        parameter, and the session prefix is compared as text (not LIKE, which would treat ``%`` as a
        wildcard and ignore ASCII case, as PostgreSQL's ``starts_with`` does not), so no value acts as SQL
        or a wildcard."""
        where: list[str] = []
        params: list[object] = []
        if scope.project_ids is not None:
            where.append(f"c.project_id IN ({marks(scope.project_ids)})")
            params.extend(scope.project_ids)
        if scope.session_id is not None:
            where.append("c.session_id = ?")
            params.append(scope.session_id)
        if scope.session_prefix is not None:
            where.append("substr(c.session_id, 1, ?) = ?")
            params += [len(scope.session_prefix), scope.session_prefix]
        if scope.member is not None:
            where.append("0=1")  # local chunks carry no member: a member's scope covers none of them
        tail, values = common.agent_and_time("?", scope.agent, scope.since, scope.until)
        where += tail
        params += values
        return " AND ".join(where) or "1=1", params

    # ---- projects -------------------------------------------------------------------------

    def first_chunk_texts(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Each session's first chunk text, main agent first: a title for sessions stored untitled."""
        out: dict[str, str] = {}
        for session_id in session_ids:  # one index probe each: ranking whole sessions read all their text
            for agent_filter in ("+agent = 'main'", "+agent != 'main'"):  # +: walk the session's index
                row = self._query(
                    f"SELECT content FROM chunks WHERE session_id = ? AND {agent_filter}"
                    " ORDER BY start_time, turn_index, part LIMIT 1",
                    (session_id,),
                ).fetchone()
                if row is not None:
                    out[session_id] = row[0]
                    break
        return out

    # ---- files (ingest checkpoints) -------------------------------------------------------

    def unchanged_file_rules(self, path: str, size: int, mtime_ns: int) -> int | None:
        row = self._query("SELECT size, mtime_ns, rules_version FROM files WHERE path = ?", (path,)).fetchone()
        return int(row["rules_version"]) if row and (row["size"], row["mtime_ns"]) == (size, mtime_ns) else None

    def mark_files(self, marks: Iterable[FileMark], rules_version: int) -> None:
        # Replaced, not upserted: an update of a mark is an older release's, which knows no rules
        # version, and m012's trigger records it as read under the oldest rules.
        self.conn.executemany(
            "INSERT OR REPLACE INTO files(path, size, mtime_ns, skipped_lines, rules_version, ingested_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(m.path, m.size, m.mtime_ns, m.skipped_lines, rules_version, common.now()) for m in marks],
        )

    def file_rules(self) -> dict[str, int]:
        return {r[0]: r[1] for r in self._query("SELECT path, rules_version FROM files")}

    def file_marks_cleared(self) -> bool:
        """Sessions and no file mark at all: what m008 left (it cleared every mark). Marks are
        written with the sessions ingest writes, so no other store is without both."""
        return bool(self._rows("SELECT 1 FROM sessions WHERE NOT EXISTS (SELECT 1 FROM files) LIMIT 1"))

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

        ``source`` is the coding agent that wrote the session, ``cwd`` the folder it was recorded in
        (kept from its first save that names one). Call inside :meth:`atomic` together
        with the session's edges and file marks. When several files hold parts of one session (a
        resumed session), the title of the part that starts first wins.
        """
        kept = self._without_forgotten(chunks)
        if chunks and not kept:  # all forgotten: the session stays gone (its row came back, empty)
            return common.saved_chunks([], [], {})
        self._save_session_row(project, session_id, chunks, team_name, source, title, cwd)
        chunks = kept
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
        columns = text_columns_in_order([(c.content, c.search_terms) for c in rows])  # its worker ends with it
        with self.atomic():
            counts = self._counting_stems_here(bool(new))
            for n, batch in enumerate(common.batches(rows, per_statement)):
                values = [next(columns) for _ in batch]
                if counts is not None:  # the new chunks come first
                    _count_own_stems(counts, batch[: max(0, len(new) - n * per_statement)], values)
                self._insert_chunks(batch, values, project.id, now, source)
            if counts is not None:
                self._add_stem_counts(counts)
        return common.saved_chunks(new, changed, existing)

    def _insert_chunks(
        self, batch: Sequence[ChunkRecord], values: Sequence[TextColumns], project_id: int, now: str, source: str
    ) -> None:
        self.conn.execute(
            "INSERT INTO chunks(id, session_id, project_id, agent, agent_id, team_name, turn_index, part,"
            " start_time, end_time, content, search_terms, content_hash, approx_tokens, tool_use_count,"
            " code_block_count, has_thinking, message_uuids, created_at, source, stems, own_stems, bulk) VALUES "
            + ", ".join([_CHUNK_ROW] * len(batch))
            + common.CHUNK_UPSERT,
            [
                value
                for c, v in zip(batch, values, strict=True)
                for value in common.chunk_row(c, project_id, now, source, v)
            ],
        )

    def _counting_stems_here(self, any_new: bool) -> Counter[tuple[str, str]] | None:
        """When this write adds chunks, take the counting of their stems from the row trigger
        (m011): a Counter to fill with them, added by :meth:`_add_stem_counts` in one upsert per
        (session, stem) instead of one per chunk and stem (a 50 MB pasted line: 37,000 chunks of some
        hundred stems each, 7 s of trigger work). The trigger stands aside while the meta row
        ``STEMS_COUNTED_BY_WRITER`` exists, which this transaction alone sees and removes again.
        None: nothing new, or no table (an SQLite without JSON functions)."""
        if not any_new or not self._keeps_stem_counts:
            return None
        self.set_meta(STEMS_COUNTED_BY_WRITER, "1")
        return Counter()

    def _add_stem_counts(self, counts: Counter[tuple[str, str]]) -> None:
        self.conn.executemany(
            "INSERT INTO session_stems(session_id, stem, chunks) VALUES (?, ?, ?)"
            " ON CONFLICT (session_id, stem) DO UPDATE SET chunks = chunks + excluded.chunks",
            [(session, stem, n) for (session, stem), n in counts.items()],
        )
        self.delete_meta(STEMS_COUNTED_BY_WRITER)

    def delete_chunks(self, ids: Sequence[str], *, remember: bool = True) -> int:
        """Remove chunks with their edges, keyword-index rows, vectors and cluster memberships.

        With ``remember`` the ids are kept as forgotten, so a later ingest of the same transcript does
        not restore them. Sessions left without chunks are removed too, and the chunks' vectors
        (``ON DELETE CASCADE``). Their projects are flagged for relinking (:meth:`mark_relink`) in the
        same transaction: a process killed before it linked the sessions left around the gap leaves
        that to the next ingest.
        """
        now = common.now()
        removed = 0
        with self.atomic():
            for batch in common.batches(ids):
                self.conn.execute(
                    "UPDATE projects SET needs_relink = TRUE WHERE NOT needs_relink"
                    f" AND id IN (SELECT project_id FROM chunks WHERE id IN ({marks(batch)}))",
                    batch,
                )
                if remember:
                    self.conn.executemany(
                        "INSERT OR IGNORE INTO forgotten(chunk_id, forgotten_at) VALUES (?, ?)",
                        [(i, now) for i in batch],
                    )
                removed += self.conn.execute(f"DELETE FROM chunks WHERE id IN ({marks(batch)})", batch).rowcount
            if removed and self.fts_enabled:  # their tombstones in the keyword index, until it is rewritten
                self.conn.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?)"
                    " ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + excluded.value",
                    (KEYWORD_INDEX_DELETIONS, removed),
                )
            self.conn.execute("DELETE FROM sessions WHERE id NOT IN (SELECT DISTINCT session_id FROM chunks)")
            self.conn.execute(
                "UPDATE clusters SET size = (SELECT COUNT(*) FROM chunk_clusters m WHERE m.cluster_id = clusters.id)"
            )
        return removed

    def add_edges(self, edges: Sequence[EdgeRecord]) -> int:
        before = self.conn.total_changes
        now = common.now()
        self.conn.executemany(
            "INSERT INTO edges(source_chunk_id, target_chunk_id, edge_type, reference_type, initial_weight,"
            " created_at) VALUES (?, ?, 'forward', ?, ?, ?) ON CONFLICT DO NOTHING",
            [(e.source, e.target, e.reference_type, e.weight, now) for e in edges if e.source != e.target],
        )
        return self.conn.total_changes - before

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
                self._add_members([(chunk_id, cluster_id, float(d)) for chunk_id, d in members])
                ids.append(cluster_id)
            self.set_meta("clustered_at", now)
        return ids

    def add_cluster_members(self, members: Sequence[tuple[str, int, float]]) -> None:
        """Join chunks to existing clusters: (chunk id, cluster id, distance)."""
        with self.atomic():
            self._add_members(members)

    def _add_members(self, members: Sequence[tuple[str, int, float]]) -> None:
        """Write memberships, then count each cluster's. A chunk deleted since the clustering read it
        (a forget while it ran) is left out: its row would break the foreign key, and fail the run."""
        self.conn.executemany(
            "INSERT OR REPLACE INTO chunk_clusters(chunk_id, cluster_id, distance)"
            " SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?)",
            [(chunk_id, cluster_id, distance, chunk_id) for chunk_id, cluster_id, distance in members],
        )
        self.conn.executemany(
            "UPDATE clusters SET size = (SELECT COUNT(*) FROM chunk_clusters WHERE cluster_id = ?) WHERE id = ?",
            [(cid, cid) for cid in sorted({m[1] for m in members})],
        )

    def session_opening_stems(self, session_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        """The word stems of each session's first main-agent chunk (its opening prompt, where the
        task is stated), without what listing tools printed in it."""
        out: dict[str, frozenset[str]] = {}
        for batch in common.batches(list(dict.fromkeys(session_ids))):
            for row in self._query(
                "SELECT session_id, content, stems, own_stems FROM chunks c WHERE c.rowid IN (SELECT (SELECT rowid"
                " FROM chunks f WHERE f.session_id = s.id AND +f.agent = 'main' ORDER BY f.start_time, f.turn_index,"
                f" f.part LIMIT 1) FROM sessions s WHERE s.id IN ({marks(batch)}))",
                batch,
            ):
                out[row[0]] = opening_stems(row[1], row[2], row[3])
        return out

    def _chunks_moved(self, ids: Sequence[str]) -> None:
        """Their vectors are written again, each under a new seq (REPLACE): the ANN index's scope map
        lists a vector under the project its chunk had when the map was built, and rows newer than
        the map are read exactly (:mod:`causantic.store.vectors`)."""
        for batch in common.batches(list(ids)):
            rows = self.conn.execute(
                f"SELECT chunk_id, model, content_hash, vector FROM vectors WHERE chunk_id IN ({marks(batch)})", batch
            ).fetchall()
            self.conn.executemany(
                "INSERT OR REPLACE INTO vectors(chunk_id, model, content_hash, vector) VALUES (?, ?, ?, ?)",
                [tuple(r) for r in rows],
            )

    def lock_projects(self, project_ids: Iterable[int]) -> None:
        """Nothing to take: a writing transaction holds the whole database from its start
        (``BEGIN IMMEDIATE``), so two writers never hold parts of it in opposite orders."""

    def lock_ingest_projects(self, session_ids: Sequence[str], cwds: Sequence[str], paths: Sequence[str]) -> None:
        """Nothing to take, as for :meth:`lock_projects` (and nothing read)."""

    def lock_project_names(self, paths: Iterable[str]) -> None:
        """Nothing to take, as for :meth:`lock_projects`."""

    def lock_topics(self, model: str, chunk_ids: Sequence[str]) -> None:
        """Nothing to take, as for :meth:`lock_projects`."""

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

    def fill_session_stems(self) -> int:
        """Count the stems of the sessions a store held when migration m011 added their table, a
        batch of sessions per transaction (so a crash keeps what was done, and another writer waits
        a fraction of a second); return how many sessions were counted (0, after one meta read,
        when none waits)."""
        counted = 0
        while True:
            with self.atomic():
                after = self.meta_value(SESSION_STEMS)
                if after is None or after == SESSION_STEMS_UNAVAILABLE:
                    return counted
                count, after = fill_session_stems(self.conn, after)
                if count:
                    self.set_meta(SESSION_STEMS, after)
                else:
                    self.delete_meta(SESSION_STEMS)
            counted += count

    # ---- reads ----------------------------------------------------------------------------

    def count_chunks(self, scope: ChunkScope) -> int:
        """How many chunks :meth:`chunks_in` would yield for ``scope``; read again only after memory
        changed (:meth:`change_stamp`). A count read inside a transaction is not kept: a rollback
        moves no stamp, so it would outlive the rows it counted."""
        where, params = self._chunk_scope(scope)
        stamp = self.change_stamp()  # first: a transaction that began before it is open below
        if self.conn.in_transaction:  # any thread's: its commit moves no stamp of this connection
            return int(self._query(f"SELECT COUNT(*) FROM chunks c WHERE {where}", params).fetchone()[0])
        cached = self._chunk_counts.get(scope)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        count = int(self._query(f"SELECT COUNT(*) FROM chunks c WHERE {where}", params).fetchone()[0])
        if len(self._chunk_counts) >= _COUNTED_SCOPES:
            self._chunk_counts.clear()
        self._chunk_counts[scope] = (stamp, count)
        return count

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

    def opening_prompts(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Per session, the text of its first chunk that opens with a user prompt (the main agent's
        first, another agent's when the main agent has none)."""
        out: dict[str, str] = {}
        for batch in common.batches(session_ids):
            out.update(
                self._query(
                    "SELECT session_id, content FROM (SELECT session_id, content, ROW_NUMBER() OVER"
                    " (PARTITION BY session_id ORDER BY agent != 'main', start_time, turn_index, part) AS rank"
                    f" FROM chunks WHERE session_id IN ({marks(batch)}) AND content LIKE '[User]%') WHERE rank = 1",
                    batch,
                ).fetchall()
            )
        return out

    def change_stamp(self) -> tuple[int, int]:
        """A value that changes whenever memory does: a commit by any other connection or process
        (SQLite's ``data_version``) or a change through this connection. Reads no table."""
        return (self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes)

    def counts(self) -> dict[str, object]:
        one = self._query
        by_type = dict(one("SELECT reference_type, COUNT(*) FROM edges GROUP BY reference_type").fetchall())
        return {
            "chunks": one("SELECT COUNT(*) FROM chunks").fetchone()[0],
            "edges": {"total": sum(by_type.values()), "by_type": by_type},
            "sessions": one("SELECT COUNT(*) FROM sessions").fetchone()[0],
            "projects": one(  # one index probe per project, not a walk over every chunk
                "SELECT COUNT(*) FROM projects p WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.project_id = p.id)"
            ).fetchone()[0],
            "agents": len(agents := self.sub_agents()),
            "agent_names": agents,
            "clusters": one("SELECT COUNT(*) FROM clusters WHERE size > 0").fetchone()[0],  # not emptied by forget
            "files": one("SELECT COUNT(*) FROM files").fetchone()[0],
            "skipped_lines": one("SELECT COALESCE(SUM(skipped_lines), 0) FROM files").fetchone()[0],
            "sources": self.source_counts(),
            # Each store names its engine: beside team memory's, stats joins both ("…; on" said nothing).
            "keyword_index": "on (SQLite FTS5)" if self.fts_enabled else "off (SQLite has no FTS5)",
        }

    def sub_agents(self) -> list[str]:
        """The distinct agents other than main, alphabetically, read by hopping along the agent index (one probe
        per agent) instead of walking every chunk."""
        found: list[str] = []
        row = self._query("SELECT MIN(agent) FROM chunks").fetchone()
        while row is not None and row[0] is not None:
            if row[0] != "main":
                found.append(row[0])
            row = self._query("SELECT MIN(agent) FROM chunks WHERE agent > ?", (row[0],)).fetchone()
        return found

    def source_counts(self) -> dict[str, dict[str, int]]:
        """Sessions and chunks per coding agent; every known source is listed, even when empty.
        Sessions are counted from their own table (a session has one source): counting distinct
        sessions over the chunks took a second at 100k chunks."""
        out: dict[str, dict[str, int]] = {source: {"sessions": 0, "chunks": 0} for source in SOURCES}
        for source, chunks in self._query("SELECT source, COUNT(*) FROM chunks GROUP BY source"):
            out[source] = {"sessions": 0, "chunks": chunks}
        for source, sessions in self._query(
            "SELECT source, COUNT(*) FROM sessions s WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.session_id = s.id)"
            " GROUP BY source"
        ):
            out.setdefault(source, {"sessions": 0, "chunks": 0})["sessions"] = sessions
        return out

    def size_bytes(self) -> int:
        return self.space().total

    def space(self) -> StoreSpace:
        """The file's size, its write-ahead log's and the free space inside it."""
        with self._turn:
            return sqlite_util.space(self.conn, self.path)

    def release_space(self) -> None:
        """After an ingest or a deletion: give free pages back to the disk (a file made with
        incremental auto-vacuum) and truncate the write-ahead log (readers permitting). Nothing
        inside an open transaction, which holds what it would release."""
        with self._turn:
            if not self.conn.in_transaction:
                with sqlite_util.upkeep(self.conn):
                    if self._keyword_index_due():
                        self._compact_keyword_index()
                sqlite_util.settle(self.conn)

    def tidy(self) -> None:
        """Between requests of a long-lived process: empty the write-ahead log once no process has
        written to it since the last call (:func:`~causantic.store.sqlite.checkpoint_if_quiet`).
        Skipped while this process writes; reads carry on beside it, on their own connections."""
        if not self._turn.acquire(blocking=False):
            return
        try:
            if not self.conn.in_transaction:
                self._log_seen = sqlite_util.checkpoint_if_quiet(self.conn, self.path, self._log_seen)
        finally:
            self._turn.release()

    def vacuum_shortfalls(self) -> list[DiskShortfall]:
        """The disks without room for what :meth:`vacuum` would write (none: it can run)."""
        with self._turn:
            return sqlite_util.vacuum_shortfalls(self.conn, self.path)

    def _compact_keyword_index(self) -> None:
        """Rewrite the keyword index without the entries of deleted chunks (FTS5 ``optimize``).

        Why: FTS5 deletes by adding a tombstone for every term of the deleted row, kept until a merge
        reaches it, so forgetting grows the index before anything shrinks it (a 100k-chunk store:
        26.1 MB; 33.1 MB after forgetting 55% of its chunks; 12.4 MB once optimized, in 2.1 s against
        the forgets' 60 s; docs/measurements.md). One transaction: other writers wait for it."""
        if self.fts_enabled:
            with self._turn, sqlite_util.atomic(self.conn):
                self.conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
                self.conn.execute("DELETE FROM meta WHERE key = ?", (KEYWORD_INDEX_DELETIONS,))

    def _keyword_index_due(self) -> bool:
        """Whether the chunks deleted since the keyword index was last rewritten reach
        :data:`KEYWORD_COMPACT_SHARE` of those it indexed."""
        deleted = int(self.meta_value(KEYWORD_INDEX_DELETIONS) or 0)
        return bool(deleted) and deleted >= KEYWORD_COMPACT_SHARE * (deleted + self.count_chunks(ChunkScope()))

    def vacuum(self) -> tuple[StoreSpace, StoreSpace]:
        """Rebuild the file without its free space (``VACUUM``) and the keyword index without its
        deleted entries, with incremental auto-vacuum from now on; the space before and after."""
        with self._turn:
            before = self.space()
            self._compact_keyword_index()
            return before, sqlite_util.vacuum(self.conn, self.path)[1]
