"""One SQLite store used from several threads of a process (the Python library ``Memory`` shared by
threads, the MCP server's and the dashboard's workers): a transaction is the thread's that opened
it. A read on another thread sees only what is committed (WAL gives it its own snapshot) and never
waits for the writer; a write on another thread waits for the transaction to end instead of joining it
(and rolling back with it)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from chunk_records import chunk_record

from causantic.errors import StoreError
from causantic.store.memory import MemoryStore
from causantic.store.records import ChunkScope, Project


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path / "memory.db") as opened:
        yield opened


def _one_session(store: MemoryStore) -> Project:
    project = store.resolve_project("/home/dev/shop", "/home/dev/shop")
    with store.atomic():
        store.save_session(project, "s0", [chunk_record(0, session_id="s0")])
    return project


def _during_open_ingest(
    store: MemoryStore, project: Project, fails: bool, other: Callable[[], None], window: float
) -> bool:
    """Run ``other`` on a thread while an ingest on another thread holds session s1 uncommitted for
    up to ``window`` seconds; the ingest then rolls back (``fails``) or commits. Whether ``other``
    finished before that."""
    saved, release = threading.Event(), threading.Event()

    def ingest() -> None:
        with contextlib.suppress(RuntimeError), store.atomic():
            store.save_session(project, "s1", [chunk_record(1, session_id="s1")])
            saved.set()
            release.wait(10)
            if fails:
                raise RuntimeError("the ingest fails: its session rolls back")

    writer = threading.Thread(target=ingest)
    writer.start()
    assert saved.wait(10)
    worker = threading.Thread(target=other)
    worker.start()
    worker.join(window)  # a read is done at once (a write waits for the ingest)
    early = not worker.is_alive()
    release.set()
    writer.join(10)
    worker.join(10)
    assert not writer.is_alive() and not worker.is_alive(), "a thread is stuck: deadlock"
    return early


@pytest.mark.parametrize("fails", [True, False], ids=["rolled-back", "committed"])
def test_a_read_on_another_thread_sees_only_committed_rows_without_waiting(store: MemoryStore, fails: bool) -> None:
    project = _one_session(store)
    seen: list[Any] = []

    def search() -> None:
        seen.append(
            (
                store.count_chunks(ChunkScope()),
                sorted(store.get_chunks(["c0", "c1"])),
                [c.id for c in store.chunks_in(ChunkScope())],
                [s.session_id for s in store.session_summaries(project.id)],
                store.counts()["chunks"],
            )
        )

    assert _during_open_ingest(store, project, fails, search, 10), "the read waited for the writer's transaction"
    assert seen == [(1, ["c0"], ["c0"], ["s0"], 1)]
    # The count read meanwhile is not kept past the commit.
    assert store.count_chunks(ChunkScope()) == (1 if fails else 2)


def test_a_write_on_another_thread_waits_for_the_open_transaction_instead_of_joining_it(store: MemoryStore) -> None:
    project = _one_session(store)

    def write() -> None:
        store.set_meta("noted", "yes")
        with store.atomic():
            store.save_session(project, "s2", [chunk_record(2, session_id="s2")])

    assert not _during_open_ingest(store, project, True, write, 0.5), "the write joined the open transaction"
    assert store.meta_value("noted") == "yes"
    assert sorted(store.get_chunks(["c0", "c1", "c2"])) == ["c0", "c2"]


def test_a_closed_store_reads_nothing_on_any_thread(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    _one_session(store)
    store.close()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            store.get_chunks(["c0"])
        except StoreError as exc:
            errors.append(exc)

    worker = threading.Thread(target=read)
    worker.start()
    worker.join(10)
    with pytest.raises(StoreError, match="closed"):
        store.project_names()
    assert len(errors) == 1
