"""Whole-session evidence reads each session's stem counts from a table the store keeps (SQLite m011,
PostgreSQL m006); whatever writes or deletes chunks, the table must say what counting the chunks'
own words says, or a search would rank by sessions as they were, not as they are."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from chunk_records import chunk_record
from postgres_server import new_database
from transcript_files import write_session

from causantic.config import Config
from causantic.ingest.pipeline import remove_chunks
from causantic.ingest.service import ingest_paths
from causantic.retrieval.forget import ForgetRequest, forget
from causantic.services import Services, open_services, team_init
from causantic.store import migrations
from causantic.store.features import feature_values
from causantic.store.fts import identifier_terms
from causantic.store.memory import MemoryStore
from causantic.store.postgres import migrations as pg_migrations
from causantic.store.protocol import MemoryStoreProtocol
from causantic.store.records import ChunkScope

LISTING = "[Tool:Bash] git log --oneline\n\n[Result:Bash] 1a2b3c4 raise the upload timeout for CI"


@pytest.fixture
def services(backend_config: Config) -> Iterator[Services]:
    with open_services(backend_config) as opened:
        yield opened


def _counted(store: MemoryStoreProtocol, session_ids: list[str]) -> dict[str, tuple[int, dict[str, int]]]:
    """What the sessions' chunks hold, counted from their text: chunks, and per stem of their own
    words (listing output left out) the chunks holding it."""
    out: dict[str, tuple[int, dict[str, int]]] = {}
    for session in session_ids:
        ids = store.session_chunk_ids(session)
        if not ids:
            continue
        held: Counter[str] = Counter()
        for chunk in store.get_chunks(ids).values():
            stems, own, _ = feature_values(chunk.content)
            held.update((own if own is not None else stems).split())
        out[session] = (len(ids), dict(held))
    return out


def _assert_kept(store: MemoryStoreProtocol, session_ids: list[str], also_asked: set[str]) -> None:
    """The table answers for every stem the sessions hold, and for ``also_asked`` (stems held once,
    or never), what counting gives; the scan of the chunks it replaced agrees."""
    expected = _counted(store, session_ids)
    asked = sorted({s for _, held in expected.values() for s in held} | also_asked)
    assert store.session_stem_counts(session_ids, asked) == expected
    assert store._scanned_session_stem_counts(session_ids, asked) == expected  # type: ignore[attr-defined]


def _save(store: MemoryStoreProtocol, project_path: str, session: str, texts: dict[int, str]) -> None:
    with store.atomic():
        project = store.resolve_project(project_path, project_path)
        records = [
            chunk_record(
                i, session_id=session, content=text, search_terms=identifier_terms(text), content_hash=f"h{i}-{text}"
            )
            for i, text in texts.items()
        ]
        store.save_session(project, session, records)


def test_the_counts_follow_saves_rewrites_and_deletions(services: Services) -> None:
    store = services.store
    first = {0: "[User]\nphoto uploads fail on slow links", 1: "[Assistant]\nAdded a retry budget", 2: LISTING}
    _save(store, "/work/photos", "s1", first)
    _save(store, "/work/photos", "s2", {3: "[User]\nretry the uploads"})
    _save(store, "/work/blog", "s3", {4: "[User]\ndraft the release notes"})
    sessions = ["s1", "s2", "s3", "nobody"]
    gone = {"photo", "retry", "timeout", "neverword"}  # "timeout" is only listed, never said
    _assert_kept(store, sessions, gone)
    assert store.session_stem_counts(["s1"], ["timeout", "retry"]) == {"s1": (3, {"retry": 1})}

    # The transcript grew and one answer was rewritten: saved again, as a re-ingest does.
    _save(store, "/work/photos", "s1", {**first, 1: "[Assistant]\nAdded a backoff", 5: "[User]\nthe retry works"})
    _assert_kept(store, sessions, gone)
    with store.atomic():  # a chunk the new chunking no longer makes
        store.drop_superseded("s1", ["c2"])
    _assert_kept(store, sessions, gone)

    remove_chunks(store, services.vectors, store.session_chunk_ids("s2"))  # forget a session
    _assert_kept(store, sessions, gone)
    assert "s2" not in store.session_stem_counts(["s2"], ["retry"])
    blog = store.project_by_path("/work/blog")
    assert blog is not None
    remove_chunks(store, services.vectors, store.project_chunk_ids(blog.id))  # forget a project
    assert store.session_stem_counts(["s1", "s3"], ["draft", "retry"]) == {"s1": (3, {"retry": 1})}


def test_a_text_rewritten_by_an_older_release_is_uncounted_until_its_features_are_filled(services: Services) -> None:
    """An older release sets a chunk's text alone; the trigger that clears its stale features (SQLite
    m010, PostgreSQL m005) takes its stems out of the counts too, and filling them counts the new text."""
    store = services.store
    _save(store, "/work/photos", "s1", {0: "[User]\nretry the upload", 1: "[Assistant]\nraised the retry budget"})
    mark = "?" if isinstance(store, MemoryStore) else "%s"
    with store.atomic():
        store.conn.execute(  # type: ignore[attr-defined]
            f"UPDATE chunks SET content = {mark} WHERE id = 'c1'", ("[Assistant]\nwrote the changelog",)
        )
    assert store.session_stem_counts(["s1"], ["retry", "changelog"]) == {"s1": (2, {"retry": 1})}
    store.fill_text_features()
    _assert_kept(store, ["s1"], {"retry", "budget"})
    assert store.session_stem_counts(["s1"], ["changelog"]) == {"s1": (2, {"changelog": 1})}


def test_ingest_of_a_grown_transcript_and_forgetting_keep_the_counts(backend_config: Config, tmp_path: Path) -> None:
    turns = [("the upload retries are flaky", "I raised the retry budget"), ("run the tests", "All tests pass now")]
    transcript = write_session(tmp_path, "/work/photos", "a1b2c3d4-0000-4000-8000-000000000001", turns)
    with open_services(backend_config) as services:
        store = services.store
        ingest_paths(services, [transcript], embed=False, workers=1)
        session = next(iter({c.session_id for c in store.chunks_in(ChunkScope())}))
        _assert_kept(store, [session], {"changelog"})
        assert "changelog" not in store.session_stem_counts([session], ["changelog", "flaky"])[session][1]
        write_session(tmp_path, "/work/photos", session, [*turns, ("now the changelog", "Updated the retry changelog")])
        ingest_paths(services, [transcript], embed=False, workers=1)
        _assert_kept(store, [session], {"changelog", "flaky"})
        assert "changelog" in store.session_stem_counts([session], ["changelog"])[session][1]

        forget(store, services.vectors, None, ForgetRequest(project="/work/photos", whole_project=True, dry_run=False))
        assert store.session_stem_counts([session], ["retry"]) == {}


def test_an_old_store_s_sessions_are_counted(backend_config: Config) -> None:
    """SQLite counts them at the next ingest, PostgreSQL in the migration (the owner runs it)."""
    with open_services(backend_config) as services:
        for n in range(2):
            _save(services.store, "/work/photos", f"s{n}", {2 * n: f"[User]\nretry upload {n}", 2 * n + 1: LISTING})
        _forget_migration(services.store)
    with open_services(backend_config) as services:
        report = ingest_paths(services, [], embed=False, workers=1)
        assert services.store.meta_value(migrations.SESSION_STEMS) is None  # the table is read, not the chunks
        _assert_kept(services.store, ["s0", "s1"], {"timeout"})
    if backend_config.storage.backend == "sqlite":
        assert "counted the words of 2 sessions ingested by an earlier version" in report.notes


def test_an_old_sqlite_store_is_counted_by_the_next_ingest_a_batch_at_a_time(tmp_path: Path) -> None:
    """Migrating is quick (no counting); until the next ingest counts the sessions, search reads the
    chunks as before, and a crash between batches keeps what was done."""
    db = tmp_path / "memory.db"
    with MemoryStore(db) as store:
        for n in range(3):
            _save(store, "/work/photos", f"s{n}", {2 * n: f"[User]\nretry upload {n}", 2 * n + 1: LISTING})
        sessions = ["s0", "s1", "s2"]
        expected = _counted(store, sessions)
        _forget_migration(store)
    with MemoryStore(db) as store:  # migrates: m011 creates the table empty and leaves the rest to ingest
        assert store.meta_value(migrations.SESSION_STEMS) == ""
        assert store.session_stem_counts(sessions, ["retry", "upload"]) == _pick(expected, {"retry", "upload"})
        with store.atomic():  # one batch of two sessions done, then the process stops
            count, after = migrations.fill_session_stems(store.conn, "", batch=2)
            store.set_meta(migrations.SESSION_STEMS, after)
        assert (count, after) == (2, "s1")
        _save(store, "/work/photos", "s2", {4: "[User]\nretry upload 2", 5: LISTING, 6: "[User]\nretry"})
        expected = _counted(store, sessions)
    with MemoryStore(db) as store:
        assert store.fill_session_stems() == 1 and store.meta_value(migrations.SESSION_STEMS) is None
        _assert_kept(store, sessions, {"timeout"})
        assert store.fill_session_stems() == 0


def test_chunks_an_older_release_adds_are_counted_by_the_trigger(tmp_path: Path) -> None:
    """This version counts the chunks it saves itself (one upsert per stem, not per chunk and stem);
    a release that knows no table only inserts rows, and the insert trigger counts them."""
    with MemoryStore(tmp_path / "memory.db") as store:
        _save(store, "/work/photos", "s1", {0: "[User]\nretry the upload", 1: LISTING})
        text = "[User]\nretry with a budget"
        with store.atomic():
            store.conn.execute(
                "INSERT INTO chunks(id, session_id, project_id, turn_index, part, start_time, end_time, content,"
                " content_hash, approx_tokens, created_at, stems) SELECT 'c9', session_id, project_id, 9, 0,"
                " start_time, end_time, ?, 'h9', 6, created_at, ? FROM chunks WHERE id = 'c0'",
                (text, feature_values(text)[0]),
            )
        _assert_kept(store, ["s1"], {"timeout"})
        assert store.session_stem_counts(["s1"], ["retry"]) == {"s1": (3, {"retry": 2})}


def test_without_json_functions_sqlite_keeps_no_table_and_scans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(migrations, "_json_available", lambda conn: False)
    with MemoryStore(tmp_path / "memory.db") as store:
        _save(store, "/work/photos", "s1", {0: "[User]\nretry upload", 1: LISTING})
        assert store.meta_value(migrations.SESSION_STEMS) == migrations.SESSION_STEMS_UNAVAILABLE
        _assert_kept(store, ["s1"], {"timeout"})
        assert store.fill_session_stems() == 0


def test_team_members_keep_the_counts_but_cannot_write_them(postgres_server: Any, tmp_path: Path) -> None:
    url = new_database(postgres_server)
    team_init(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DO $$ BEGIN CREATE ROLE dana LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute("GRANT causantic_member TO dana")
    member = psycopg.conninfo.make_conninfo(url, user="dana")
    transcript = write_session(tmp_path, "/work/photos", "a1b2c3d4-0000-4000-8000-000000000002", [("retry", "done")])
    config = Config().with_overrides(
        {"storage.backend": "postgres", "storage.postgresUrl": member, "team.user": "dana", "team.shareProjects": "all"}
    )
    with open_services(config) as services:
        ingest_paths(services, [transcript], embed=False, workers=1)
        session = next(iter({c.session_id for c in services.store.chunks_in(ChunkScope())}))
        _assert_kept(services.store, [session], set())
        remove_chunks(services.store, services.vectors, services.store.session_chunk_ids(session))
        assert services.store.session_stem_counts([session], ["retry"]) == {}
    with psycopg.connect(member, autocommit=True) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("INSERT INTO session_stems VALUES ('s', 'x', 1)")


def _pick(counts: dict[str, tuple[int, dict[str, int]]], stems: set[str]) -> dict[str, tuple[int, dict[str, int]]]:
    return {s: (n, {k: v for k, v in held.items() if k in stems}) for s, (n, held) in counts.items()}


def _forget_migration(store: MemoryStoreProtocol) -> None:
    """Make the store one from before the table (SQLite m011, PostgreSQL m006): no table, no
    triggers, no record of the migration."""
    conn: Any = store.conn  # type: ignore[attr-defined]
    sqlite = isinstance(store, MemoryStore)
    migration = migrations.m011_session_stems if sqlite else pg_migrations.m006_session_stems
    version = (migrations.MIGRATIONS if sqlite else pg_migrations.MIGRATIONS).index(migration) + 1  # type: ignore[arg-type]
    with store.atomic():
        if sqlite:
            for trigger in ("insert", "delete", "update"):
                conn.execute(f"DROP TRIGGER chunks_session_stems_{trigger}")
        conn.execute("DROP TABLE session_stems")
        if not sqlite:
            conn.execute(
                "DROP FUNCTION causantic_session_stems() CASCADE; DROP FUNCTION causantic_own_stems(TEXT, TEXT)"
            )
        conn.execute(f"DELETE FROM schema_migrations WHERE version = {version}")
