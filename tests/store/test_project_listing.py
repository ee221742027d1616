"""Listing projects (``list-projects``, the dashboard's Projects page) counts each project's chunks
and sessions and finds its first and last time. In a large memory that must not read every chunk
row: at 100k chunks it took 290 ms, the Projects page's slowest part after each change."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from chunk_records import chunk_record
from postgres_server import new_database

from causantic.store import common
from causantic.store.base import SqlStore
from causantic.store.memory import MemoryStore
from causantic.store.postgres.store import PROJECT_MEMBERS_SQL, PostgresStore

S = TypeVar("S", bound=SqlStore)


def _store_with_two_projects(path: Path) -> MemoryStore:
    return _two_projects(MemoryStore(path))


def _two_projects(store: S) -> S:
    with store.atomic():
        web = store.resolve_project("/work/web", "/work/web")
        api = store.resolve_project("/work/api", "/work/api")
        times = ["2026-03-01T09:00:00.000Z", "2026-03-01T09:05:00.000Z", "2026-03-02T10:00:00.000Z"]
        for n, (session, start) in enumerate(zip(["w1", "w1", "w2"], times, strict=True)):
            store.save_session(
                web, session, [chunk_record(n, session_id=session, start_time=start, end_time=start[:-7] + "30.000Z")]
            )
        feb = "2026-02-01T08:00:00.000Z"
        store.save_session(api, "a1", [chunk_record(9, session_id="a1", start_time=feb, end_time=feb)])
    return store


def test_projects_are_listed_with_their_totals_newest_first(tmp_path: Path) -> None:
    with _store_with_two_projects(tmp_path / "memory.db") as store:
        listed = [(p.path, p.chunks, p.sessions, p.first_seen, p.last_seen) for p in store.project_summaries()]
    assert listed == [
        ("/work/web", 3, 2, "2026-03-01T09:00:00.000Z", "2026-03-02T10:00:30.000Z"),
        ("/work/api", 1, 1, "2026-02-01T08:00:00.000Z", "2026-02-01T08:00:00.000Z"),
    ]


def test_the_listing_reads_the_project_index_alone_not_the_chunk_rows(tmp_path: Path) -> None:
    _store_with_two_projects(tmp_path / "memory.db").close()
    conn = sqlite3.connect(tmp_path / "memory.db")
    plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + common.PROJECT_TOTALS_SQL))
    conn.close()
    assert "COVERING INDEX chunks_project_time" in plan, plan


def test_team_memory_lists_projects_from_the_project_index_alone(postgres_server: Any) -> None:
    """PostgreSQL's m009: the totals and each project's sessions by member can be read by an
    index-only scan (every column they read is in the index), so listing need not read the chunk
    rows (×0.38 at 100k chunks, ``benchmarks/project_listing.py --postgres``). The planner is kept
    off the whole-table scan it prefers for so few rows."""
    url = new_database(postgres_server)
    with _two_projects(PostgresStore(url, member="alice")) as store:
        assert [(p.path, p.chunks, p.sessions, p.members) for p in store.project_summaries()] == [
            ("/work/web", 3, 2, (("alice", 2),)),
            ("/work/api", 1, 1, (("alice", 1),)),
        ]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE chunks")
        conn.execute("SET enable_seqscan = off")
        for sql in (common.PROJECT_TOTALS_SQL, PROJECT_MEMBERS_SQL):
            plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql))
            assert "Index Only Scan using chunks_project_time on chunks" in plan, plan
