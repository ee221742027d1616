"""Context a chunk lacks as keyword-search fields: its session's task and project, its turn's files.

Both backends store the fields with every chunk and weigh them by configuration; a store from
before them (SQLite m011, PostgreSQL m006) opens without filling them, searches as before, and is
filled by the next ingest.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chunk_records import chunk_record

from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.services import Services, open_services
from causantic.store import migrations
from causantic.store.context import FILES_MOST, files_text, turn_files
from causantic.store.memory import MemoryStore
from causantic.store.postgres import migrations as pg_migrations
from causantic.store.records import ChunkRecord
from causantic.store.sqlite import atomic

ROOT = "/work/demo"
EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "src/causantic/examples/sessions/-home-dev-acme-shop"

# One turn in three chunks: the file it edits is named only in the first, the task only in the title.
UPLOAD_TURN = [
    "[User] make it survive a flaky network\n[Tool:Edit] src/uploader/queue.py",
    "[Assistant] The queue now waits longer after each failure.",
    "[Tool:Bash] make check\n[Result:Bash] 12 passed",
]
OTHER = ["[User] the logo renders blurry", "[Assistant] The SVG had a fixed size; it scales now."]


def _chunks(session: str, texts: list[str], first: int, turn: int = 0) -> list[ChunkRecord]:
    return [
        chunk_record(first + i, session_id=session, content=text, turn_index=turn, part=i)
        for i, text in enumerate(texts)
    ]


def _write(services: Services) -> None:
    store = services.store
    with store.atomic():
        project = store.resolve_project(ROOT, ROOT)
        store.save_session(
            project, "s-upload", _chunks("s-upload", UPLOAD_TURN, 0), title="retry with exponential backoff"
        )
        store.save_session(project, "s-logo", _chunks("s-logo", OTHER, 10), title="logo fixes")


@pytest.fixture
def services(backend_config: Config) -> Iterator[Services]:
    with open_services(backend_config) as opened:
        _write(opened)
        yield opened


def _found(services: Services, query: str, session: float = 0.0, files: float = 0.0) -> list[str]:
    hits = services.store.keyword_search(query, limit=20, context_weights=(session, files))
    return sorted(chunk_id for chunk_id, _ in hits)


def test_turn_files_are_the_paths_the_turns_file_and_shell_calls_name() -> None:
    contents = [
        "[Tool:Read] /work/demo/src/a.py\n[Result:Read] import b",
        "[Tool:Edit] /work/demo/src/a.py\n[Tool:Bash] pytest tests/test_a.py && git diff docs/guide.md",
        "[Tool:Grep] parse_config\n[Tool:Write] /elsewhere/notes.txt\n[User] see /work/demo/README.md",
    ]
    paths = ["work/demo/src/a.py", "tests/test_a.py", "docs/guide.md", "elsewhere/notes.txt"]
    assert turn_files(contents) == paths
    assert files_text(paths) == "a test_a guide notes"
    many = ["\n".join(f"[Tool:Read] /work/demo/f{i}.py" for i in range(FILES_MOST + 5))]
    assert len(turn_files(many)) == FILES_MOST


def test_a_chunk_is_found_by_its_sessions_task_and_its_turns_files_when_they_weigh(services: Services) -> None:
    # The second and third chunks never say "backoff", the third not "queue"; weighed 0, the fields find nothing.
    assert _found(services, "exponential backoff") == []
    assert _found(services, "exponential backoff", session=0.5) == ["c0", "c1", "c2"]
    assert _found(services, "queue") == ["c0", "c1"]
    assert _found(services, "queue", files=0.5) == ["c0", "c1", "c2"]  # the file's name, not its folders
    assert _found(services, "uploader", files=0.5) == ["c0"]
    assert _found(services, "demo") == []
    assert _found(services, "demo", session=0.5) == ["c0", "c1", "c10", "c11", "c2"]  # the project's name
    # A word in the text outranks the same word in the context alone.
    ranked = [h[0] for h in services.store.keyword_search("queue", limit=5, context_weights=(0.5, 0.5))]
    assert ranked[-1] == "c2" and len(ranked) == 3


def test_a_later_title_reaches_the_sessions_earlier_chunks(services: Services) -> None:
    """A resumed session's part that starts earlier brings the title; chunks saved before follow it."""
    store = services.store
    with store.atomic():
        project = store.resolve_project(ROOT, ROOT)
        then = "2025-01-01T00:00:00.000Z"  # before the part saved first
        early = chunk_record(20, session_id="s-logo", content="[User] the mascot", start_time=then, end_time=then)
        store.save_session(project, "s-logo", [early], title="vectorise the mascot")
    assert _found(services, "mascot", session=0.5) == ["c10", "c11", "c20"]


def _store_from_before_context(services: Services) -> None:
    """Make the store one from before the context fields: the keyword index and triggers m004
    made (SQLite) or no context tsvector (PostgreSQL), no context columns, no record of the migration."""
    store = services.store
    if isinstance(store, MemoryStore):
        version = migrations.MIGRATIONS.index(migrations.m011_context_fields) + 1
        with atomic(store.conn):
            for trigger in ("insert", "delete", "update"):
                store.conn.execute(f"DROP TRIGGER chunks_fts_{trigger}")
            store.conn.execute("DROP TABLE chunks_fts")
            store.conn.execute("ALTER TABLE chunks DROP COLUMN context_session")
            store.conn.execute("ALTER TABLE chunks DROP COLUMN context_files")
            for statement in _M004_INDEX:
                store.conn.execute(statement)
            store.conn.execute(f"DELETE FROM schema_migrations WHERE version = {version}")
        return
    version = pg_migrations.MIGRATIONS.index(pg_migrations.m006_context_fields) + 1
    with store.atomic():
        store.conn.execute("DROP TRIGGER chunks_context_tsv ON chunks")
        for column in ("context_session", "context_files", "context_tsv"):
            store.conn.execute(f"ALTER TABLE chunks DROP COLUMN {column}")
        store.conn.execute(f"DELETE FROM schema_migrations WHERE version = {version}")


_M004_INDEX = [
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(content, search_terms, scope_terms, content='chunks',"
    " content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2')",
    "CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN INSERT INTO chunks_fts(rowid, content,"
    " search_terms, scope_terms) VALUES (new.rowid, new.content, new.search_terms, new.scope_terms); END",
    "CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN INSERT INTO chunks_fts(chunks_fts, rowid,"
    " content, search_terms, scope_terms) VALUES ('delete', old.rowid, old.content, old.search_terms,"
    " old.scope_terms); END",
    "CREATE TRIGGER chunks_fts_update AFTER UPDATE OF content, search_terms, project_id, agent ON chunks BEGIN"
    " INSERT INTO chunks_fts(chunks_fts, rowid, content, search_terms, scope_terms) VALUES ('delete', old.rowid,"
    " old.content, old.search_terms, old.scope_terms); INSERT INTO chunks_fts(rowid, content, search_terms,"
    " scope_terms) VALUES (new.rowid, new.content, new.search_terms, new.scope_terms); END",
    "INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')",
]


def _index_consistent(services: Services) -> None:
    store = services.store
    if isinstance(store, MemoryStore):  # FTS5 compares every index entry with the chunks' text
        for table in ("chunks_fts", "chunks_fts_next"):
            if store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                store.conn.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")


def test_an_old_store_opens_unfilled_searches_as_before_and_the_next_ingest_fills_it(services: Services) -> None:
    before = {q: _found(services, q) for q in ("queue", "blurry logo", "flaky network")}
    _store_from_before_context(services)

    with open_services(services.config) as reopened:  # migrates: only columns (and an empty index) are added
        store = reopened.store
        assert {q: _found(reopened, q) for q in before} == before
        assert _found(reopened, "exponential backoff", 0.5, 0.5) == []  # not filled yet
        # Writes while the rows wait: a new session is indexed with its context, a rewrite and a
        # deletion of an unfilled row keep both indexes consistent.
        with store.atomic():
            project = store.resolve_project(ROOT, ROOT)
            store.save_session(project, "s-new", _chunks("s-new", ["[User] cache thumbnails"], 30), title="speed")
            store.conn.execute("UPDATE chunks SET content = '[Assistant] The SVG scales now.' WHERE id = 'c11'")
        store.delete_chunks(["c10"])
        _index_consistent(reopened)

        report = ingest_paths(reopened, [next(EXAMPLE_DIR.glob("*.jsonl"))], embed=False, workers=1)
        assert any("search context of 4 chunks" in note for note in report.notes), report.notes
        _index_consistent(reopened)
        assert _found(reopened, "exponential backoff", session=0.5) == ["c0", "c1", "c2"]
        assert _found(reopened, "queue", files=0.5) == ["c0", "c1", "c2"]
        assert _found(reopened, "speed thumbnails", session=0.5) == ["c30"]
        assert _found(reopened, "svg scales") == ["c11"]
        again = ingest_paths(reopened, [next(EXAMPLE_DIR.glob("*.jsonl"))], embed=False, workers=1, force=True)
        assert not any("search context" in note for note in again.notes)


def test_a_row_an_older_release_writes_later_is_searchable_and_filled_by_reindex(services: Services) -> None:
    """An older release knows no context columns: its rows are indexed by their text, and filled later."""
    from causantic.ingest.service import reindex

    store = services.store
    with store.atomic():
        store.conn.execute("UPDATE chunks SET context_session = NULL, context_files = NULL WHERE id = 'c2'")
        store.conn.execute("UPDATE chunks SET content = '[Result:Bash] 13 passed' WHERE id = 'c2'")
    _index_consistent(services)
    assert _found(services, "13 passed") == ["c2"]
    assert "c2" not in _found(services, "exponential backoff", session=0.5)
    reindex(services)
    _index_consistent(services)
    assert _found(services, "exponential backoff", session=0.5) == ["c0", "c1", "c2"]
