"""The prompt hook's door into the store: read-only, one connection, and light to import.

Claude Code waits for the user-prompt-submit hook on every prompt, and importing
:class:`~causantic.store.memory.MemoryStore` (with the configuration's validation, migrations and
the keyword search's thread pool behind it) cost that hook more than its search. This class opens
the database read-only and answers only what the hook asks: which project a working directory is,
BM25 hits in a scope, the document counts relevance weighs words by, and chunks by id. Its SQL is
the keyword search's own (:mod:`causantic.store.keyword`), run on one connection with exact
ranking, as ``MemoryStore.keyword_search`` runs it by default.

It never writes, so it never migrates: a store whose schema is behind this version raises
:class:`StaleSchema` (the hook then opens :class:`MemoryStore` once, which migrates, and retries).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from causantic.errors import StoreError, store_failure
from causantic.store import sqlite as sqlite_util
from causantic.store.fts import any_of, match_phrases, quote_phrase
from causantic.store.keyword import Scope, _bm25, _count, text_only
from causantic.store.migrations import MIGRATIONS
from causantic.store.records import ChunkScope, Project, StoredChunk
from causantic.store.rows import CHUNK_COLUMNS, FEATURE_COLUMNS, stored_chunk

_BUSY_TIMEOUT_MS = 2_000  # a writer holding the file longer than this costs the prompt its memory, not a wait


class StaleSchema(StoreError):
    """The store was written by an older version: open it once through MemoryStore to migrate it."""


@sqlite_util.raising_store_errors(lambda index: f"at {index.path}")
class PromptIndex:
    """Read-only queries for the prompt hook. Use as a context manager. It satisfies
    ``causantic.retrieval.moments.MomentsStore``; ``causantic.prompt_services`` opens it."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise StoreError(f"No memory database at {path}.")
        self.path = path
        self.conn = sqlite_util.connect(path, busy_timeout_ms=_BUSY_TIMEOUT_MS, read_only=True)
        try:
            version = self.conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0
            fts = self.conn.execute("SELECT value FROM meta WHERE key = 'fts5'").fetchone()
        except sqlite3.Error as exc:
            self.conn.close()
            raise store_failure(exc, f"at {path}") from exc
        if version < len(MIGRATIONS):
            self.conn.close()
            raise StaleSchema(f"The memory database at {path} needs migrating (schema {version} of {len(MIGRATIONS)}).")
        self.fts_enabled = bool(fts and fts[0] == "available")

    def __enter__(self) -> PromptIndex:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.conn.close()

    def project_for_cwd(self, cwd: str) -> Project | None:
        """The project a working directory belongs to: a directory seen at ingest, a project's own
        path, or the nearest project path above it (None otherwise: see :meth:`project_by_path`)."""
        path = os.path.normpath(cwd) if cwd else ""
        if not path:
            return None
        row = self.conn.execute(
            "SELECT p.id, p.path, p.name FROM project_aliases a JOIN projects p ON p.id = a.project_id"
            " WHERE a.cwd IN (?, ?) UNION ALL SELECT id, path, name FROM projects WHERE path = ? LIMIT 1",
            (cwd, path, path),
        ).fetchone()
        if row is None:
            above = [path]
            while (parent := os.path.dirname(above[-1])) != above[-1]:
                above.append(parent)
            marks = ",".join("?" * len(above))
            row = self.conn.execute(
                f"SELECT id, path, name FROM projects WHERE path IN ({marks}) ORDER BY length(path) DESC LIMIT 1",
                above,
            ).fetchone()
        return Project(row[0], row[1], row[2]) if row is not None else None

    def project_by_path(self, path: str) -> Project | None:
        row = self.conn.execute("SELECT id, path, name FROM projects WHERE path = ?", (path,)).fetchone()
        return Project(row[0], row[1], row[2]) if row is not None else None

    def keyword_search(
        self, query: str, *, project_ids: Sequence[int] | None = None, limit: int = 10
    ) -> list[tuple[str, float]]:
        """BM25 hits as (chunk id, score), best first, higher is better; empty without FTS5."""
        phrases = [text_only(p) for p in match_phrases(query)]
        if not phrases or not self.fts_enabled:
            return []
        try:
            return _bm25(self.conn, any_of(phrases), Scope(project_ids), limit)
        except sqlite3.OperationalError as exc:
            if "fts5" in str(exc).lower() or "syntax" in str(exc).lower():
                return []  # as MemoryStore.keyword_search: a query FTS5 still rejects finds nothing
            raise

    def keyword_document_counts(
        self,
        terms: Sequence[str],
        *,
        project_ids: Sequence[int] | None = None,
        agent: str | None = None,
        most: int = 100_000,
    ) -> list[int]:
        """As :meth:`MemoryStore.keyword_document_counts`: chunks in scope holding each term."""
        if not self.fts_enabled:
            return [0] * len(terms)
        scope = Scope(project_ids, agent)
        return [_count(self.conn, text_only(quote_phrase(t)), most, scope) for t in terms]

    def count_chunks(self, scope: ChunkScope) -> int:
        """Chunks in ``scope``; only its projects and agent are read (the rest is refused)."""
        if scope.session_id or scope.session_prefix or scope.since or scope.until or scope.member:
            raise ValueError("PromptIndex counts chunks by project and agent only.")
        where, params = ["1=1"], list[object]()
        if scope.project_ids:
            where.append(f"project_id IN ({','.join('?' * len(scope.project_ids))})")
            params.extend(scope.project_ids)
        if scope.agent:
            where.append("agent = ?")
            params.append(scope.agent)
        return int(self.conn.execute(f"SELECT COUNT(*) FROM chunks WHERE {' AND '.join(where)}", params).fetchone()[0])

    def get_chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            f"SELECT {CHUNK_COLUMNS}{FEATURE_COLUMNS} FROM chunks c JOIN projects p ON p.id = c.project_id"
            f" WHERE c.id IN ({marks})",
            list(ids),
        )
        return {row["id"]: stored_chunk(row) for row in rows}
