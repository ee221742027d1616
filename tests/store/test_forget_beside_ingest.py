"""Forgetting many sessions while another connection ingests, ingests of different sessions at once,
and two members ingesting the same session at once: each finishes (no ``deadlock detected``, no
"database is locked"), and the per-session stem counts the triggers keep (SQLite m011, PostgreSQL
m006) say what counting the chunks says.

Each side is its own store on its own connection (two members' processes, or the hook's ingest beside
a `causantic forget`), started together at a barrier, for several rounds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from postgres_server import backend_settings
from transcript_files import write_session

from causantic.config import Config
from causantic.ingest.pipeline import remove_chunks
from causantic.ingest.service import ingest_paths
from causantic.retrieval.forget import ForgetRequest, forget
from causantic.services import Services, open_services
from causantic.store.features import feature_values
from causantic.store.protocol import MemoryStoreProtocol
from causantic.store.records import ChunkScope, VectorRecord

PROJECT = "/work/shop"
BLOG = "/work/blog"
TURNS = 80  # of each session of a two-project group: its save takes long enough for the other side to start
ROUNDS = 4
SESSIONS = 8  # forgotten at once, each round
WORDS = ("upload", "retry", "budget", "cookie", "redirect", "cache", "deploy", "fixture", "timeout", "schema")


def _turns(n: int, count: int) -> list[tuple[str, str]]:
    """``count`` turns whose words overlap between sessions and turns (shared stems: shared count rows)."""
    return [
        (
            f"the {WORDS[(n + t) % 10]} {WORDS[(n + 2 * t) % 10]} fails in step {t}",
            f"fixed the {WORDS[(n + 3 * t) % 10]} and the {WORDS[(t + 5) % 10]} {WORDS[n % 10]}",
        )
        for t in range(count)
    ]


def _session_id(round_: int, n: int) -> str:
    return f"{round_:04x}{n:04x}-0000-4000-8000-{n:012d}"


def _together(*steps: Callable[[], object]) -> list[BaseException]:
    """Run ``steps`` on threads released at once; the exceptions they raised."""
    start = threading.Barrier(len(steps))
    failures: list[BaseException] = []

    def run(step: Callable[[], object]) -> None:
        start.wait()
        try:
            step()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(step,)) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(t.is_alive() for t in threads), "a side is stuck"
    return failures


def _assert_counts_kept(store: MemoryStoreProtocol, forgotten: list[str]) -> None:
    """The stem counts of every stored session equal a recount of its chunks, and sessions left
    without chunks have none."""
    chunks = list(store.chunks_in(ChunkScope()))
    expected: dict[str, tuple[int, dict[str, int]]] = {}
    for chunk in chunks:
        stems, own, _ = feature_values(chunk.content)
        count, held = expected.setdefault(chunk.session_id, (0, {}))
        for stem in set((own if own is not None else stems).split()):
            held[stem] = held.get(stem, 0) + 1
        expected[chunk.session_id] = (count + 1, held)
    asked = sorted({s for _, held in expected.values() for s in held})
    sessions = sorted(set(expected) | set(forgotten))
    assert store.session_stem_counts(sessions, asked) == expected


def _project_sessions(folder: Path, round_: int, turns: int = 6) -> list[Path]:
    return [
        write_session(folder, PROJECT, _session_id(round_, n), _turns(n, turns), day=1 + n) for n in range(SESSIONS)
    ]


def _assert_ran(failures: list[BaseException]) -> None:
    assert failures == [], [f"{type(e).__name__}: {e}" for e in failures]


def test_forgetting_a_project_while_one_of_its_sessions_is_ingested_finishes_and_keeps_the_counts(
    backend_config: Config, tmp_path: Path
) -> None:
    """The hook ingests the session in progress while the user forgets the project: the forget
    deletes what it found, the ingest keeps the turns the forget had not seen."""
    with open_services(backend_config) as forgetter, open_services(backend_config) as ingester:
        for round_ in range(ROUNDS):
            folder = tmp_path / f"round{round_}"
            ingest_paths(ingester, _project_sessions(folder, round_), embed=False, workers=1)
            grown = write_session(folder, PROJECT, _session_id(round_, 0), _turns(0, 14), day=1)  # 8 turns more
            request = ForgetRequest(project=PROJECT, whole_project=True, dry_run=False, member="alice")
            _assert_ran(
                _together(
                    lambda r=request: forget(forgetter.store, forgetter.vectors, None, r),
                    lambda g=grown: ingest_paths(ingester, [g], embed=False, workers=1),
                )
            )
            _assert_counts_kept(ingester.store, [_session_id(round_, n) for n in range(SESSIONS)])


def test_forgetting_many_sessions_while_another_session_of_the_project_is_ingested(
    backend_config: Config, tmp_path: Path
) -> None:
    with open_services(backend_config) as forgetter, open_services(backend_config) as ingester:
        live = write_session(tmp_path / "live", PROJECT, "ffff0000-0000-4000-8000-000000000000", _turns(3, 4))
        ingest_paths(ingester, [live], embed=False, workers=1)
        for round_ in range(ROUNDS):
            ingest_paths(ingester, _project_sessions(tmp_path / f"round{round_}", round_), embed=False, workers=1)
            live = write_session(
                tmp_path / "live", PROJECT, "ffff0000-0000-4000-8000-000000000000", _turns(3, 8 + 4 * round_)
            )
            request = ForgetRequest(project=PROJECT, session_id=f"{round_:04x}", dry_run=False, member="alice")
            _assert_ran(
                _together(
                    lambda r=request: forget(forgetter.store, forgetter.vectors, None, r),
                    lambda g=live: ingest_paths(ingester, [g], embed=False, workers=1),
                )
            )
            _assert_counts_kept(ingester.store, [_session_id(round_, n) for n in range(SESSIONS)])
            assert ingester.store.session_chunk_ids("ffff0000-0000-4000-8000-000000000000")


def test_two_ingests_of_different_sessions_and_of_the_same_session_at_once(
    backend_config: Config, tmp_path: Path
) -> None:
    """Two members (team memory) or two processes (SQLite) write one project at once: sessions apart,
    then the same grown session (each member has a copy of the transcript)."""
    bob = (
        backend_config.with_overrides({"team.user": "bob"})
        if backend_config.storage.backend == "postgres"
        else backend_config
    )
    with open_services(backend_config) as first, open_services(bob) as second:
        for round_ in range(ROUNDS):
            paths = _project_sessions(tmp_path / f"round{round_}", round_)
            _assert_ran(
                _together(
                    lambda p=paths: ingest_paths(first, p[::2], embed=False, workers=1),
                    lambda p=paths: ingest_paths(second, p[1::2], embed=False, workers=1),
                )
            )
            grown = _project_sessions(tmp_path / f"round{round_}", round_, turns=9)
            _assert_ran(
                _together(
                    lambda p=grown: ingest_paths(first, p, embed=False, workers=1),
                    lambda p=grown: ingest_paths(second, p, embed=False, workers=1),
                )
            )
            _assert_counts_kept(first.store, [])
            assert (
                first.store.count_chunks(ChunkScope()) == (round_ + 1) * SESSIONS * 9
            )  # a chunk a turn, each stored once


def test_forgetting_chunks_while_their_vectors_are_written_finishes(backend_config: Config, tmp_path: Path) -> None:
    """The session-end hook embeds a session's new chunks while the user forgets the project: the
    forgotten chunks get no vector, and neither side fails."""
    import numpy as np

    with open_services(backend_config) as forgetter, open_services(backend_config) as embedder:
        for round_ in range(ROUNDS):
            ingest_paths(embedder, _project_sessions(tmp_path / f"r{round_}", round_, 30), embed=False, workers=1)
            chunks = list(embedder.store.chunks_in(ChunkScope()))
            vectors = np.random.default_rng(round_).normal(size=(len(chunks), embedder.vectors.dims))
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            records = [
                VectorRecord(c.id, c.content_hash, v.astype("float32")) for c, v in zip(chunks, vectors, strict=True)
            ]
            request = ForgetRequest(project=PROJECT, whole_project=True, dry_run=False, member="alice")
            _assert_ran(
                _together(
                    lambda r=request: forget(forgetter.store, forgetter.vectors, None, r),
                    lambda v=records: embedder.vectors.upsert(v),
                )
            )
            assert embedder.store.count_chunks(ChunkScope()) == 0
            assert embedder.vectors.count() == 0


def test_a_clustering_that_read_chunks_forgotten_before_it_wrote_keeps_the_rest(
    backend_config: Config, tmp_path: Path
) -> None:
    """Topics are computed from vectors read at the start (seconds of clustering, after an ingest or
    by `causantic cluster`), then written: a chunk forgotten meanwhile is left out of its topic, and
    the topic counts the members it has, instead of the write failing on the missing chunk."""
    with open_services(backend_config) as services:
        ingest_paths(services, _project_sessions(tmp_path, 0, 2), embed=False, workers=1)
        read = sorted(c.id for c in services.store.chunks_in(ChunkScope()))[:4]
        remove_chunks(services.store, services.vectors, read[1:2])  # forgotten while it clustered
        (topic,) = services.store.replace_clusters("m", [(None, "uploads", b"\0" * 8, [(c, 0.1) for c in read[:3]])])
        services.store.add_cluster_members([(read[1], topic, 0.2), (read[3], topic, 0.3)])  # a later ingest's
        assert services.store.cluster_members("m") == {topic: {read[0], read[2], read[3]}}
        assert [r.size for r in services.store.cluster_rows("m")] == [3]


def _two_project_file(folder: Path, first: tuple[str, str], second: tuple[str, str], turns: int) -> Path:
    """One transcript file holding two sessions (a resumed session's file also holds the one it
    resumed), each in its own project: ``first`` and ``second`` are (cwd, session id), in file order."""
    paths = [
        write_session(folder / sid, cwd, sid, _turns(n, turns), day=1 + n)
        for n, (cwd, sid) in enumerate((first, second))
    ]
    both = folder / "group" / f"{second[1]}.jsonl"
    both.parent.mkdir(parents=True, exist_ok=True)
    both.write_text("".join(p.read_text(encoding="utf-8") for p in paths), encoding="utf-8")
    return both


@pytest.mark.parametrize("workers", [1, 2])
def test_two_ingests_of_groups_whose_sessions_sit_in_two_projects_in_opposite_orders(
    backend_config: Config, tmp_path: Path, workers: int
) -> None:
    """Each group's transaction takes both projects' locks at its start, in id order: taken in the
    order of the group's sessions, the group of a blog session then a shop session held the blog
    and waited for the shop, the other held the shop and waited for the blog (``deadlock
    detected``). One worker: the groups are planned by the writing process, their chunks saved as
    they are made; two: planned in worker processes (a second group each, so there are workers),
    then written."""
    with open_services(backend_config) as first, open_services(backend_config) as second:
        for n, cwd in enumerate((PROJECT, BLOG)):  # the shop's project first: the lower id
            ingest_paths(
                first, [write_session(tmp_path / "seed", cwd, _session_id(99, n), _turns(n, 2))], embed=False, workers=1
            )
        for round_ in range(ROUNDS):
            ids = [_session_id(round_, n) for n in range(4)]
            shop_then_blog = [_two_project_file(tmp_path / f"r{round_}a", (PROJECT, ids[0]), (BLOG, ids[1]), TURNS)]
            blog_then_shop = [_two_project_file(tmp_path / f"r{round_}b", (BLOG, ids[2]), (PROJECT, ids[3]), TURNS)]
            if workers > 1:
                shop_then_blog.append(write_session(tmp_path / "extra", PROJECT, _session_id(round_, 4), _turns(4, 1)))
                blog_then_shop.append(write_session(tmp_path / "extra", BLOG, _session_id(round_, 5), _turns(5, 1)))
            _assert_ran(
                _together(
                    lambda p=shop_then_blog: ingest_paths(first, p, embed=False, workers=workers),
                    lambda p=blog_then_shop: ingest_paths(second, p, embed=False, workers=workers),
                )
            )
            assert all(len(first.store.session_chunk_ids(s)) == TURNS for s in ids)


def _written_before_waiting(
    holder: Services, writer: Services, projects: list[str], step: Callable[[], object]
) -> set[str] | None:
    """Hold the write locks of ``projects`` on ``holder``'s connection while ``step`` runs on
    ``writer``'s; the tables ``step``'s transaction had written (``RowExclusiveLock``, seen in
    ``pg_locks`` from a third connection) when it stopped to wait for them; None if it never waited.
    A writer that takes the project locks first has written nothing when it waits."""
    pid = writer.store.conn.info.backend_pid  # type: ignore[attr-defined]
    url = holder.store.url  # type: ignore[attr-defined]
    written: set[str] | None = None
    with psycopg.connect(url, autocommit=True) as watcher, holder.store.atomic():
        holder.store.lock_projects(p.id for path in projects for p in holder.store.find_projects(path))
        thread = threading.Thread(target=step)
        thread.start()
        while thread.is_alive() and written is None:
            locks = watcher.execute(
                "SELECT coalesce(relation::regclass::text, ''), mode, granted FROM pg_locks WHERE pid = %s", (pid,)
            ).fetchall()
            if not all(granted for *_, granted in locks):
                written = {table for table, mode, _ in locks if mode == "RowExclusiveLock"}
            time.sleep(0.02)
    thread.join(60)
    return written


def _shop_and_blog(services: Services, folder: Path) -> None:
    for n, cwd in enumerate((PROJECT, BLOG)):
        ingest_paths(services, [write_session(folder, cwd, _session_id(0, n), _turns(n, 6))], embed=False, workers=1)


def test_merging_a_project_into_another_takes_both_projects_locks_before_moving_anything(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """absorb_project (Gemini CLI sessions first stored under a stand-in project join the real one)
    moves chunks and sessions between two projects: it takes both projects' locks first, in id
    order, as every writer of chunks does, and a writer holding one of them makes it wait before it
    has moved a row. Not provoked as a deadlock here: ingest already locks a group's stand-ins with
    its projects (lock_group), so the pair absorb then locks is held by its caller."""
    config = backend_settings(request, "postgres")
    with open_services(config) as holder, open_services(config) as writer:
        _shop_and_blog(writer, tmp_path)
        (shop,) = writer.store.find_projects(PROJECT)

        def absorb() -> None:
            with writer.store.atomic():
                writer.store.absorb_project(BLOG, shop)

        assert _written_before_waiting(holder, writer, [PROJECT, BLOG], absorb) == set()
        assert len(writer.store.project_chunk_ids(shop.id)) == 12  # then it moved the blog's 6


def test_filling_old_rows_text_features_takes_their_projects_locks_first(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Rows an older release wrote without text features are filled (`causantic reindex`), each
    moving its session's stem counts: the transaction takes the projects' locks first, so a forget
    or an ingest of those projects waits for it (or it for them) instead of their locking each
    other's rows in opposite orders. A deadlock between them is not provoked reliably (it needs the
    fill's rowid order and the other's order to cross while both run): the lock is observed instead."""
    config = backend_settings(request, "postgres")
    with open_services(config) as holder, open_services(config) as writer:
        _shop_and_blog(writer, tmp_path)
        with writer.store.atomic():  # as an older release rewrote the texts: m005 clears their features
            writer.store.conn.execute("UPDATE chunks SET content = content || ' (edited)'")  # type: ignore[attr-defined]
        assert _written_before_waiting(holder, writer, [PROJECT, BLOG], writer.store.fill_text_features) == set()
        assert writer.store.fill_text_features() == 0  # the waiting fill then filled all 12
