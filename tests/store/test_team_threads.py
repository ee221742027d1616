"""Searches from several threads at once on one team memory (PostgreSQL, the ``postgres_server``
fixture), as the MCP server and the dashboard run them: each gets the answer it gets alone.

A search reads the vector matches' chunks on its own thread while a helper thread weighs the
query's words and runs the keyword search, whose counting is a transaction of its own (with
planner settings local to it): on one shared connection another thread's statements ran inside it,
and two threads' transactions interleaved.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from chunk_records import chunk_record
from postgres_server import new_database
from transcript_files import write_session

from causantic import Memory
from causantic.store.postgres.store import PostgresStore
from causantic.store.records import ChunkScope

QUERIES = (
    "redirect loop after login on Safari",
    "flaky deploy pipeline cache key",
    "database migration rollback",
    "session cookie SameSite",
    "pytest fixture teardown order",
    "slow dashboard page render",
)


def _transcripts(folder: Path) -> Path:
    """Six short Claude Code sessions in two projects, one topic each."""
    for n, query in enumerate(QUERIES):
        turns = [
            (
                f"{query}: question {turn}, step {turn} of the fix",
                f"{query}: what we found {turn}, step {turn} of the fix",
            )
            for turn in range(4)
        ]
        cwd = "/home/dev/shop" if n % 2 else "/home/dev/api"
        write_session(folder, cwd, f"7e{n:06d}-0000-4000-8000-{n:012d}", turns, day=n + 1)
    return folder


def test_searches_from_many_threads_at_once_each_get_their_own_answer(postgres_server: Any, tmp_path: Path) -> None:
    url = new_database(postgres_server)
    settings = {
        "storage.backend": "postgres",
        "storage.postgresUrl": url,
        "team.user": "alice",
        "team.shareProjects": "all",
    }
    with Memory(tmp_path / "alice", overrides=settings) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")])
        asks = [(q, p) for n, q in enumerate(QUERIES) for p in (None, "shop" if n % 2 else "api")]

        def answer(ask: tuple[str, str | None]) -> list[str]:
            result = memory.search(ask[0], project=ask[1], limit=5)
            assert result.mode == "hybrid", result.notes
            return [h.chunk.id for h in result.hits]

        alone = [answer(ask) for ask in asks]
        assert all(alone)
        with ThreadPoolExecutor(max_workers=6) as pool:
            for _ in range(4):
                assert list(pool.map(answer, asks)) == alone


def _during_failing_ingest(store: PostgresStore, other: Callable[[], None], window: float) -> bool:
    """Run ``other`` on a thread while an ingest on another thread holds session s1 uncommitted for up
    to ``window`` seconds, then rolls back; whether ``other`` had finished by then."""
    project = store.resolve_project("/home/dev/shop", "/home/dev/shop")
    saved, release = threading.Event(), threading.Event()

    def ingest() -> None:
        with contextlib.suppress(RuntimeError), store.atomic():
            store.save_session(project, "s1", [chunk_record(1)])
            saved.set()
            release.wait(10)
            raise RuntimeError("the ingest fails: its session rolls back")

    writer = threading.Thread(target=ingest)
    writer.start()
    assert saved.wait(10)
    worker = threading.Thread(target=other)
    worker.start()
    worker.join(window)
    early = not worker.is_alive()
    release.set()
    writer.join(10)
    worker.join(10)
    assert not writer.is_alive() and not worker.is_alive(), "a thread is stuck: deadlock"
    return early


def test_a_read_from_another_thread_never_sees_joins_or_waits_for_an_open_ingest_transaction(
    postgres_server: Any,
) -> None:
    """An ingest's session is one transaction on the store's connection: a search on another thread
    of the same process (the library used from threads) reads only what is committed, at once, and a
    session that rolls back was never seen."""
    store = PostgresStore(new_database(postgres_server), member="alice")
    seen: list[tuple[int, list[str]]] = []

    def search() -> None:
        seen.append((store.count_chunks(ChunkScope()), list(store.get_chunks(["c1"]))))

    assert _during_failing_ingest(store, search, 10), "the read waited for the ingest's transaction to end"
    assert seen == [(0, [])]
    assert store.count_chunks(ChunkScope()) == 0
    store.close()


def test_a_write_from_another_thread_waits_for_the_open_transaction_instead_of_joining_it(
    postgres_server: Any,
) -> None:
    store = PostgresStore(new_database(postgres_server), member="alice")
    waited = not _during_failing_ingest(store, lambda: store.set_meta("noted", "yes"), 0.5)
    assert waited, "the write joined the open transaction"
    assert store.meta_value("noted") == "yes"  # it did not roll back with the ingest
    assert store.count_chunks(ChunkScope()) == 0
    store.close()
