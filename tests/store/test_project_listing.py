"""Listing projects (``list-projects``, the dashboard's Projects page) counts each project's chunks
and sessions and finds its first and last time. In a large memory that must not read every chunk
row: at 100k chunks it took 290 ms, the Projects page's slowest part after each change."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from chunk_records import chunk_record

from causantic.store import common
from causantic.store.memory import MemoryStore


def _store_with_two_projects(path: Path) -> MemoryStore:
    store = MemoryStore(path)
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
