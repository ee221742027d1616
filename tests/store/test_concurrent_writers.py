"""Two processes writing memory at once never corrupt or lose data: a forget or a merge run while an
ingest of the same project writes, a hook's ingest beside a batch ingest of the same folder.

Real processes as a user starts them (``causantic ingest``, ``forget``, ``merge-projects``,
``batch-ingest``, the session-end hook), on one real SQLite file. The second writer starts once the
ingest's status file shows it has stored some of its files, so it lands mid-ingest; whatever the
interleaving, memory must end as the two commands say, and as an ingest alone leaves it otherwise.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from process_support import causantic, run_hook, subprocess_env, wait_for, worker_pids
from transcript_files import write_session

from causantic.ingest_runs import running_ingests
from causantic.runs import read_status

pytestmark = pytest.mark.slow

SESSIONS = 400  # enough that an ingest of them runs for seconds on a loaded machine


def _turns(tag: str, count: int) -> list[tuple[str, str]]:
    return [
        (f"{tag} question {t} " + " ".join(f"w{tag}x{t}x{w}" for w in range(60)), f"{tag} answer {t} " * 40)
        for t in range(count)
    ]


def _sessions(folder: Path, cwd: str, tag: str, count: int, turns: int = 6) -> Path:
    """``count`` Claude Code sessions recorded in ``cwd``, under the projects folder ``folder``."""
    for n in range(count):
        write_session(folder, cwd, f"{n:08x}-{tag}-4000-8000-000000000000", _turns(f"{tag}{n}", turns))
    return folder


def _ingesting(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "causantic", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _mid_ingest(home: Path, ingest: subprocess.Popen[str], files: int = 1) -> None:
    """Return once ``ingest`` has stored ``files`` files and runs on: its status file says so at
    most once a second (ingest_runs.WRITE_EVERY_S), so waiting for more risks the end (a forced
    re-read of unchanged sessions runs fast on a quiet machine)."""
    wait_for(lambda: any(run["filesDone"] >= files for run in running_ingests(home)) or ingest.poll() is not None)
    assert ingest.poll() is None, "the ingest ended before the second writer started: make it longer"


def _rows(home: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


def _sound(home: Path) -> None:
    """SQLite's and FTS5's integrity checks pass and every row's foreign keys hold."""
    with sqlite3.connect(home / "memory.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")  # raises when they differ
    conn.close()


def _finished(process: subprocess.Popen[str]) -> str:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, out + err
    assert "locked" not in out + err and "Traceback" not in err
    return out


def test_a_forget_beside_a_forced_ingest_of_the_same_sessions_stays_forgotten_and_loses_nothing_else(
    causantic_home: Path, tmp_path: Path
) -> None:
    """The ingest re-reads every file, the forgotten project's too, while the forget deletes that
    project: a chunk it read before the deletion and writes after must not come back."""
    projects = _sessions(tmp_path / "projects", "/work/shop", "aaaa", SESSIONS // 2, turns=12)
    _sessions(projects, "/work/blog", "bbbb", SESSIONS // 2, turns=12)
    assert causantic("ingest", "--no-embed", str(projects)).returncode == 0
    before = {row[0] for row in _rows(causantic_home, "SELECT id FROM chunks")}
    shop = {
        row[0]
        for row in _rows(
            causantic_home, "SELECT c.id FROM chunks c JOIN projects p ON p.id = c.project_id WHERE p.name = 'shop'"
        )
    }
    assert shop and shop < before

    env = subprocess_env(CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS="60000")
    ingest = _ingesting("ingest", "--no-embed", "--force", str(projects), env=env)
    _mid_ingest(causantic_home, ingest)
    forget = causantic("forget", "shop", "--yes", env=env, timeout=300)
    assert forget.returncode == 0, forget.stdout + forget.stderr
    _finished(ingest)

    assert f"{len(shop):,} chunks in {SESSIONS // 2} sessions of the whole project 'shop' deleted." in forget.stdout
    forgotten = {row[0] for row in _rows(causantic_home, "SELECT chunk_id FROM forgotten")}
    assert forgotten == shop  # the forget took exactly the project, all of it
    assert {row[0] for row in _rows(causantic_home, "SELECT id FROM chunks")} == before - shop  # the rest, all of it
    assert _rows(
        causantic_home, "SELECT COUNT(*) FROM sessions s JOIN projects p ON p.id = s.project_id WHERE p.name = 'shop'"
    ) == [(0,)]
    _sound(causantic_home)


def test_merging_a_project_while_an_ingest_writes_into_it_moves_everything_into_the_other(
    causantic_home: Path, tmp_path: Path
) -> None:
    """`merge-projects --yes` read the project before waiting for memory's lock, which the ingest held:
    by the time it had the lock the project had grown, and it refused ('memory changed since … preview
    again') whenever an ingest of the project ran. Sessions the ingest stores after the merge follow
    the merged project's folder into the other."""
    old = _sessions(tmp_path / "old", "/work/api-a", "aaaa", 3, turns=3)
    _sessions(old, "/work/api-b", "bbbb", 3, turns=3)
    assert causantic("ingest", "--no-embed", str(old)).returncode == 0
    new = _sessions(tmp_path / "new", "/work/api-b", "cccc", SESSIONS)
    reference = tmp_path / "reference"
    for folder in (old, new):
        assert (
            causantic("ingest", "--no-embed", str(folder), env=subprocess_env(CAUSANTIC_HOME=str(reference))).returncode
            == 0
        )

    env = subprocess_env(CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS="60000")
    ingest = _ingesting("ingest", "--no-embed", str(new), env=env)
    _mid_ingest(causantic_home, ingest)
    merge = causantic("merge-projects", "api-b", "api-a", "--yes", env=env, timeout=300)
    _finished(ingest)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    moved = int(merge.stdout.split(" sessions ", 1)[0])
    # What was there when it had the lock: more than before the ingest (up to all, when the ingest's
    # last write went first: the move then still found more than it read before waiting).
    assert 3 < moved <= 3 + SESSIONS, merge.stdout
    assert "of 'api-b' (/work/api-b) moved into 'api-a' (/work/api-a); 'api-b' is gone." in merge.stdout
    # Nothing lost (every chunk an ingest alone stores), nothing left in api-b.
    chunks = "SELECT c.id, p.name FROM chunks c JOIN projects p ON p.id = c.project_id ORDER BY c.id"
    assert _rows(causantic_home, chunks) == [(chunk, "api-a") for chunk, _ in _rows(reference, chunks)]
    assert _rows(causantic_home, "SELECT name, path FROM projects") == [("api-a", "/work/api-a")]
    _sound(causantic_home)


def test_session_end_hooks_beside_a_batch_ingest_of_the_same_folder_store_each_chunk_once(
    causantic_home: Path, tmp_path: Path
) -> None:
    """A batch ingest (two parsing processes) of a folder while Claude Code's session-end hooks ingest
    sessions of it (each in its own background worker): memory ends as one ingest alone leaves it."""
    projects = _sessions(tmp_path / "user" / ".claude" / "projects", "/work/shop", "aaaa", SESSIONS)
    reference = tmp_path / "reference"
    done = causantic("ingest", "--no-embed", str(projects), env=subprocess_env(CAUSANTIC_HOME=str(reference)))
    assert done.returncode == 0, done.stderr

    env = subprocess_env(CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS="60000", CAUSANTIC_EMBEDDING_EAGER="false")
    batch = _ingesting("batch-ingest", "--no-embed", str(projects), env=env)
    _mid_ingest(causantic_home, batch)
    for session in sorted(projects.glob("*/*.jsonl"))[::40]:  # ten, read or not yet by the batch
        payload = {"session_id": session.stem, "transcript_path": str(session), "cwd": "/work/shop"}
        hooked, _ = run_hook("session-end", {**payload, "hook_event_name": "SessionEnd"}, env=env)
        assert hooked.returncode == 0 and hooked.stdout == ""
    _finished(batch)
    wait_for(lambda: not worker_pids(str(projects)), timeout=300, interval=0.2)
    last = read_status()["session-end"]  # the last hook's worker ingested (its session's folder: all of it)
    assert last["success"] and last["outcome"].startswith("ingested "), last

    for sql in (
        "SELECT id, content_hash FROM chunks ORDER BY id",
        "SELECT source_chunk_id, target_chunk_id, reference_type FROM edges ORDER BY 1, 2, 3",
        "SELECT id, project_id, title FROM sessions ORDER BY id",
    ):
        assert _rows(causantic_home, sql) == _rows(reference, sql), sql
    _sound(causantic_home)
