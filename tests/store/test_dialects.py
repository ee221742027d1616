"""The statements both backends share (store/base.py) answer alike on SQLite and PostgreSQL where the
two dialects differ: ties in an ORDER BY, literal ``%`` in a statement, text that LIKE would read as
a pattern. Each test runs on both stores, written directly (no transcript)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chunk_records import chunk_record
from postgres_server import new_database

from causantic.store.memory import MemoryStore
from causantic.store.postgres.store import PostgresStore


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        opened: Any = MemoryStore(tmp_path / "memory.db")
    else:
        opened = PostgresStore(new_database(request.getfixturevalue("postgres_server")), member="alice")
    yield opened
    opened.close()


def _projects_active_at_one_moment(store: Any) -> list[int]:
    """Five projects, one session each, every chunk at the same time; their ids in creation order."""
    ids = []
    for n, name in enumerate(("zeta", "alpha", "my_app", "myXapp", "50%off")):
        project = store.resolve_project(f"/w/{name}", f"/w/{name}")
        with store.atomic():
            store.save_session(project, f"s{n}", [chunk_record(n, session_id=f"s{n}")])
        ids.append(project.id)
    return ids


def test_projects_equally_recent_are_listed_oldest_first_on_both_backends(store: Any) -> None:
    ids = _projects_active_at_one_moment(store)
    assert [p.id for p in store.project_activity()] == ids
    assert [p.id for p in store.project_summaries()] == ids


def test_topics_of_equal_size_are_listed_by_id_on_both_backends(store: Any) -> None:
    project = store.resolve_project("/w/one", "/w/one")
    with store.atomic():
        store.save_session(project, "s1", [chunk_record(n) for n in range(40)])
    clusters = [(None, f"topic {n}", b"\x00" * 8, [(f"c{n}", 0.1), (f"c{n + 20}", 0.2)]) for n in range(20)]
    ids = store.replace_clusters("m", clusters)
    assert [t.id for t in store.cluster_summaries("m")] == sorted(ids)


def test_a_chunk_rewritten_with_new_text_takes_its_new_times_on_both_backends(store: Any) -> None:
    # A re-ingest under new rules (a compaction's instruction now one line) re-times a turn's parts.
    project = store.resolve_project("/w/one", "/w/one")
    with store.atomic():
        store.save_session(project, "s1", [chunk_record(1)])
    later = "2026-01-01T00:01:30.000Z"
    rewritten = chunk_record(1, content="the summary", content_hash="h-new", start_time=later, end_time=later)
    with store.atomic():
        saved = store.save_session(project, "s1", [rewritten])
        assert (saved.new_ids, saved.updated, saved.renumbered) == ([], 1, 0)
    stored = store.get_chunks(["c1"])["c1"]
    assert (stored.content, stored.start_time, stored.end_time) == ("the summary", later, later)
