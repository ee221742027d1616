"""A running ingest is visible while it writes memory (``<home>/run/ingest-<pid>.json``), and only then:
the file is gone when it ends, however it ends, and one left by a killed process is not shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from postgres_server import new_database
from transcript_files import write_session

from causantic import ingest_runs
from causantic.facade import Memory
from causantic.ingest_runs import RUN_DIR, IngestProgress, running_ingests
from causantic.retrieval.output import IngestRunningOut

REPO = Path(__file__).resolve().parents[2]
HOOK = "Claude Code's session-start hook"


def _sessions(folder: Path, n: int = 3) -> Path:
    for i in range(n):
        write_session(folder, "/work/shop", f"s{i}-session", [(f"Why does invoice {i} fail?", "The tax rounding.")])
    return folder


def _status_files(home: Path) -> list[Path]:
    return sorted((home / RUN_DIR).glob("ingest-*.json"))


def test_an_ingest_shows_its_counts_while_it_runs_and_nothing_after(
    tmp_path: Path, causantic_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_runs, "WRITE_EVERY_S", 0.0)  # every count written, so each can be compared
    folder = _sessions(tmp_path / "projects")
    seen: list[tuple[int, int, list[IngestRunningOut]]] = []
    with Memory() as memory:

        def on_progress(files_done: int, _bytes: int, chunks: int) -> None:
            seen.append((files_done, chunks, memory.ingests_running()))

        report = memory.ingest([folder], embed=False, on_progress=on_progress)
        assert report.files == 3 and report.chunks_added >= 3
        assert len(seen) == 3
        for files_done, chunks, running in seen:
            assert [(r.pid, r.files_total, r.files_done, r.chunk_count) for r in running] == [
                (os.getpid(), 3, files_done, chunks)
            ]
            assert running[0].path == str(folder)
            assert running[0].summary.startswith(f"Ingest running: {files_done} of 3 files, {chunks} chunk")
        assert memory.ingests_running() == []
        assert memory.stats().ingests_running == []
    assert _status_files(causantic_home) == []


def test_an_interrupted_ingest_leaves_no_status(tmp_path: Path, causantic_home: Path) -> None:
    folder = _sessions(tmp_path / "projects")

    def interrupt(*_counts: int) -> None:
        assert len(_status_files(causantic_home)) == 1  # there while it ran
        raise KeyboardInterrupt

    with Memory() as memory, pytest.raises(KeyboardInterrupt):
        memory.ingest([folder], embed=False, on_progress=interrupt)
    assert _status_files(causantic_home) == []


def test_the_status_of_a_killed_ingest_is_not_shown_and_the_next_ingest_removes_it(
    tmp_path: Path, causantic_home: Path
) -> None:
    killed = (
        "import os, sys; from pathlib import Path; from causantic.ingest_runs import IngestProgress\n"
        "p = IngestProgress(Path(sys.argv[1]), [Path('/work/shop')]); p.__enter__(); p.discovered(431, 0)\n"
        "os._exit(9)  # as kill -9 ends it: no finally runs"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-c", killed, str(causantic_home)], check=False, env=env, timeout=60)
    assert len(_status_files(causantic_home)) == 1  # left behind
    assert running_ingests(causantic_home) == []
    with Memory() as memory:
        assert memory.ingests_running() == []
        memory.ingest([_sessions(tmp_path / "projects", 1)], embed=False)
    assert _status_files(causantic_home) == []


def test_the_status_of_a_killed_ingest_whose_pid_went_to_another_process_is_not_shown(
    tmp_path: Path, causantic_home: Path
) -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("this system does not say when a process started (no Linux /proc)")
    killed = (
        "import os, sys; from pathlib import Path; from causantic.ingest_runs import IngestProgress\n"
        "p = IngestProgress(Path(sys.argv[1]), [Path('/work/shop')]); p.__enter__(); p.discovered(431, 0)\n"
        "os._exit(9)  # as kill -9 ends it: no finally runs"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-c", killed, str(causantic_home)], check=False, env=env, timeout=60)
    [left] = _status_files(causantic_home)
    # The system gives the dead ingest's pid to another process (here: one started now, whose pid is
    # written into the file as a reused pid would read).
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as other:
        try:
            status = json.loads(left.read_text(encoding="utf-8"))
            left.write_text(json.dumps({**status, "pid": other.pid}), encoding="utf-8")
            assert running_ingests(causantic_home) == []
            with Memory() as memory:
                assert memory.ingests_running() == []
                assert memory.stats().ingests_running == []
                memory.ingest([_sessions(tmp_path / "projects", 1)], embed=False)
            assert _status_files(causantic_home) == []  # the next ingest removed it
        finally:
            other.kill()


@pytest.mark.slow
def test_a_team_ingest_shows_one_start_time_for_its_local_and_its_shared_part(
    tmp_path: Path, causantic_home: Path, postgres_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Team memory ingests the unshared projects locally, then uploads the shared ones: one command, so
    `causantic stats` shows one ingest started when the command started, in both parts."""
    monkeypatch.setattr(ingest_runs, "WRITE_EVERY_S", 0.0)
    folder = tmp_path / "projects"
    write_session(folder, "/work/diary", "d0-session", [("My notes on the invoice bug", "Kept to myself.")])
    write_session(folder, "/work/shop", "s0-session", [("Why does invoice 0 fail?", "The tax rounding.")])
    settings = {
        "storage.backend": "postgres",
        "storage.postgresUrl": new_database(postgres_server),
        "team.user": "alice",
        "team.shareProjects": ["shop"],
    }
    seen: list[str] = []  # the start shown while each file was read
    with Memory(causantic_home, overrides=settings) as memory:

        def on_progress(*_counts: int) -> None:
            [running] = memory.ingests_running()
            if not seen:  # the parts must start in different seconds for a second start to show
                second = int(time.time())
                while int(time.time()) == second:
                    time.sleep(0.05)
            seen.append(running.started)

        report = memory.ingest([folder], embed=False, on_progress=on_progress)
        assert report.files == 2
        assert memory.ingests_running() == []
    assert len(seen) >= 2  # counts from both parts
    assert len(set(seen)) == 1, seen
    assert _status_files(causantic_home) == []


def test_an_ingest_running_for_a_day_says_so_in_days(causantic_home: Path) -> None:
    """`causantic stats` read "started 26.0 h ago" where the dashboard says "1 day ago"."""
    with IngestProgress(causantic_home, [Path("/work/shop")]) as progress:
        progress.run["started"] = (datetime.now(UTC) - timedelta(hours=26)).isoformat(timespec="seconds")
        progress.discovered(431, 0)
        with Memory() as memory:
            [running] = memory.ingests_running()
    assert running.summary.startswith("Ingest running: 0 of 431 files, 0 chunks so far, started 1 day ago (pid ")


def test_a_wait_names_the_oldest_writer_running_and_counts_the_others(causantic_home: Path) -> None:
    """Writers other than ingests (a vacuum, a forget, a hook) record themselves from their first write;
    one whose process has ended is not named."""
    sleeping = [sys.executable, "-c", "import time; time.sleep(60)"]
    with subprocess.Popen(sleeping) as vacuum, subprocess.Popen(sleeping) as hook:
        try:
            run = causantic_home / RUN_DIR
            run.mkdir(parents=True)
            records = [
                (vacuum.pid, "`causantic vacuum`", "2026-11-25T10:02:00Z"),
                (hook.pid, HOOK, "2026-11-25T10:05:00Z"),
            ]
            records.append((2**22 + 1, "`causantic forget`", "2026-11-25T09:00:00Z"))  # no such process
            for pid, by, started in records:
                (run / f"writer-{pid}.json").write_text(json.dumps({"pid": pid, "by": by, "started": started}))
            # A server's two forgets at once (ingest_runs.writing) are one process writing: not "2 others".
            for n in (1, 2):
                (run / f"writer-{hook.pid}-{n}.json").write_text(
                    json.dumps(
                        {"pid": hook.pid, "by": "the MCP server's forget", "started": f"2026-11-25T10:0{n + 2}:30Z"}
                    )
                )
            holder = ingest_runs.lock_holder(causantic_home)
            assert holder.startswith("the `causantic vacuum` started at "), holder
            assert holder.endswith(f"(pid {vacuum.pid}) (or one other writer)"), holder
            (run / f"writer-{vacuum.pid}.json").unlink()
            assert ingest_runs.lock_holder(causantic_home).startswith("the MCP server's forget started at ")
            for n in (1, 2):
                (run / f"writer-{hook.pid}-{n}.json").unlink()
            assert ingest_runs.lock_holder(causantic_home).startswith(f"{HOOK} started at ")
        finally:
            vacuum.kill()
            hook.kill()


def test_the_ingest_a_writer_waits_for_is_named_with_its_start_in_utc(causantic_home: Path) -> None:
    """A command waiting for the write lock said "the ingest started by a Claude Code hook at 22:14":
    the machine's local time, unmarked, where every other time Causantic prints is UTC and says so."""
    holder = os.getppid()  # a live process other than this one, as the ingest holding the lock is
    run = {
        "pid": holder,
        "by": "a Claude Code hook",
        "processStart": ingest_runs.process_start(holder),
        "started": "2026-11-25T08:14:05Z",
        "source": "/work/shop",
        "phase": "reading",
        "filesDone": 1,
        "filesTotal": 2,
        "chunks": 3,
        "embedded": 0,
        "embedTotal": 0,
    }
    (causantic_home / RUN_DIR).mkdir(parents=True)
    (causantic_home / RUN_DIR / f"ingest-{holder}.json").write_text(json.dumps(run))
    try:
        with pytest.MonkeyPatch.context() as zone:
            zone.setenv("TZ", "Pacific/Kiritimati")  # UTC+14
            time.tzset()
            named = ingest_runs.lock_holder(causantic_home)
    finally:
        time.tzset()  # the runner's own zone again
    assert named == f"the ingest started by a Claude Code hook at 08:14 UTC (pid {holder})"
