"""A command that must wait for another process's write lock says so, with who holds it (issue: a
`causantic ingest` started beside a hook's ingest looked frozen for up to 30 s, then failed).

Real processes: a holder process takes memory's write lock (a plain SQLite ``BEGIN IMMEDIATE``,
or the store's own transaction inside a recorded ingest run, as a hook's ingest worker holds it)
until the test tells it to let go; ``causantic`` runs beside it as a user would.
"""

from __future__ import annotations

import json
import queue
import re
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from process_support import causantic, subprocess_env
from transcript_files import write_session

from causantic.examples import SESSIONS_DIR

pytestmark = pytest.mark.slow

HOLDER = """
import sqlite3, sys
from contextlib import nullcontext
from pathlib import Path
from causantic.ingest_runs import IngestProgress
from causantic.store.memory import MemoryStore
from causantic.write_waits import named

home, by = Path(sys.argv[1]), sys.argv[2]
if by:  # an ingest's run, recorded as the hook's worker records it, holding the store's transaction
    named(by)
    with IngestProgress(home, [home]), MemoryStore(home / "memory.db") as store, store.atomic():
        print("holding", flush=True)
        sys.stdin.readline()
else:  # a process that records nothing
    conn = sqlite3.connect(home / "memory.db", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    print("holding", flush=True)
    sys.stdin.readline()
"""
HOOK = "Claude Code's session-end hook"
# `causantic ARGS` as a user runs it, except that the first time it takes memory's write lock (the
# store's own way, recorded as the command records it) it holds it until the test says "go on".
COMMAND_HOLDING = """
import sys
import threading
import causantic.store.sqlite as sqlite_util

real = sqlite_util.run_waiting
held = []

def run_waiting(conn, statement, **options):
    if not held:
        held.append(statement)
        real(conn, "BEGIN IMMEDIATE")
        print("holding", flush=True)
        sys.stdin.readline()
        conn.execute("ROLLBACK")
    real(conn, statement, **options)

sqlite_util.run_waiting = run_waiting
from causantic.cli.main import main
sys.argv = ["causantic", *sys.argv[1:]]
main()
"""


@pytest.fixture
def memory(causantic_home: Path, tmp_path: Path) -> Path:
    """A store holding the examples, and a new session for an ingest to write."""
    done = causantic("ingest", "--no-embed", str(SESSIONS_DIR))
    assert done.returncode == 0, done.stderr
    return write_session(
        tmp_path / "projects" / "-work-shop",
        "/work/shop",
        "s-new",
        [("How do we cache carts?", "With Redis, keyed by user.")],
    ).parent


# `causantic ARGS`, except that its end-of-write upkeep (giving free space back) starts only when the
# test says "go on": another process can take the lock between the command's write and its upkeep.
SETTLING_WHEN_TOLD = """
import sys
import threading
import causantic.store.sqlite as sqlite_util

real = sqlite_util.settle

def settle(conn):
    print("settling", flush=True)
    sys.stdin.readline()
    real(conn)

sqlite_util.settle = settle
from causantic.cli.main import main
sys.argv = ["causantic", *sys.argv[1:]]
main()
"""


@contextmanager
def lock_held(home: Path, by: str = "", *, command: tuple[str, ...] = ()) -> Iterator[subprocess.Popen[str]]:
    """A process holding memory's write lock until :func:`release`: ``causantic COMMAND`` (holding it
    the first time it writes), else a plain process (an ingest run started by ``by``, when given)."""
    with subprocess.Popen(
        [sys.executable, "-c", COMMAND_HOLDING, *command] if command else [sys.executable, "-c", HOLDER, str(home), by],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    ) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        try:
            yield holder
        finally:
            release(holder)


def release(holder: subprocess.Popen[str]) -> None:
    if holder.poll() is None:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)


def start(*args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "causantic", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(**{"CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS": "20000", **env}),
    )


def waiting_line(command: subprocess.Popen[str]) -> str:
    """The first line on the command's stderr that says it waits (or all it printed, if none did)."""
    assert command.stderr is not None
    seen = []
    for line in command.stderr:
        seen.append(line)
        if "waiting" in line:
            return line.strip()
    return "".join(seen)


def test_an_ingest_waiting_for_a_hooks_ingest_says_whose_and_then_finishes(causantic_home: Path, memory: Path) -> None:
    with lock_held(causantic_home, HOOK) as holder:
        command = start("ingest", "--no-embed", str(memory))
        line = waiting_line(command)
        assert line.startswith(f"causantic: waiting for the ingest started by {HOOK} at "), line
        assert f"(pid {holder.pid}) to finish writing memory (at most 20 s); Ctrl-C to stop." in line
        assert command.poll() is None  # still waiting, not failed
        release(holder)
        out, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    assert "chunks added" in out and "1 of 1" in out  # it went on to read the new session


@pytest.mark.parametrize("command", [("vacuum",), ("forget", "acme-shop", "--yes"), ("cluster",)], ids=lambda c: c[0])
def test_a_command_waiting_for_another_command_names_it(
    causantic_home: Path, memory: Path, command: tuple[str, ...]
) -> None:
    """Only ingests recorded that they ran: waiting for a vacuum, a forget or a cluster said 'another
    Causantic process'."""
    with lock_held(causantic_home, command=command) as holder:
        waiting = start("ingest", "--no-embed", str(memory))
        line = waiting_line(waiting)
        assert re.fullmatch(
            rf"causantic: waiting for the `causantic {command[0]}` started at \d\d:\d\d UTC \(pid {holder.pid}\) "
            r"to finish writing memory \(at most 20 s\); Ctrl-C to stop\.",
            line,
        ), line
        release(holder)
        assert holder.returncode == 0
        out, err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, err
    # The command's record went with it: a later wait does not name a process that has ended.
    assert not list((causantic_home / "run").glob("writer-*.json"))


def test_a_json_ingest_that_waits_keeps_its_stdout_to_the_report(causantic_home: Path, memory: Path) -> None:
    with lock_held(causantic_home) as holder:
        command = start("ingest", "--no-embed", "--json", str(memory))
        line = waiting_line(command)
        assert line.startswith("causantic: waiting for another Causantic process to finish writing memory"), line
        release(holder)
        out, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    assert json.loads(out)["chunks_added"] > 0


def test_ctrl_c_stops_a_command_that_waits(causantic_home: Path, memory: Path) -> None:
    with lock_held(causantic_home, HOOK):
        command = start("forget", "acme-shop", "--yes")
        assert "Ctrl-C to stop" in waiting_line(command)
        command.send_signal(signal.SIGINT)
        # The lock is still held: the command ends because it was asked to, not because the wait did.
        _, err = command.communicate(timeout=10)
    assert command.returncode == 130 and "Interrupted." in err and "Traceback" not in err


def test_a_wait_that_times_out_names_what_held_the_lock(causantic_home: Path, memory: Path) -> None:
    with lock_held(causantic_home, HOOK) as holder:
        command = start("ingest", "--no-embed", str(memory), CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS="2000")
        _, err = command.communicate(timeout=60)
    assert command.returncode == 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[0].startswith("causantic: waiting for the ingest started by"), err
    assert f"the ingest started by {HOOK} at " in lines[-1] and f"(pid {holder.pid}) held its write lock" in lines[-1]
    assert "try again when it has finished" in lines[-1] and "Traceback" not in err


def test_a_forced_ingest_that_times_out_does_not_say_none_is_left(causantic_home: Path, memory: Path) -> None:
    """--force re-reads files whose marks are current, so every file counted as stored: the error said
    'Ingest stopped with 4 of 4 changed files stored (the next run reads the 0 left)'."""
    with lock_held(causantic_home):
        done = causantic(
            "ingest",
            "--no-embed",
            "--force",
            str(SESSIONS_DIR),
            env=subprocess_env(CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS="1500"),
            timeout=60,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Ingest stopped (run it again to finish)" in done.stdout + done.stderr
    assert "the next run reads the 0 left" not in done.stdout + done.stderr


@contextmanager
def settling_behind(home: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], subprocess.Popen[str]]]:
    """``causantic ARGS`` whose write is done, and a hook's ingest that took the lock before its upkeep."""
    command = subprocess.Popen(
        [sys.executable, "-c", SETTLING_WHEN_TOLD, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS="20000"),
    )
    assert command.stdin is not None and command.stdout is not None
    assert command.stdout.readline() == "settling\n"
    with command, lock_held(home, HOOK) as holder:
        command.stdin.write("\n")
        command.stdin.flush()
        yield command, holder


UPKEEP_WAIT = (
    rf"causantic: waiting for the ingest started by {HOOK} at \d\d:\d\d UTC \(pid (\d+)\) to finish writing memory, "
    r"to give free space back to the disk \(at most 20 s\); Ctrl-C skips that \(a later write does it\)\."
)


def test_giving_space_back_after_a_forget_says_what_it_waits_for(causantic_home: Path, memory: Path) -> None:
    """The forget's upkeep waited up to the busy timeout in silence, after its deletion was done."""
    with settling_behind(causantic_home, "forget", "acme-shop", "--yes") as (command, holder):
        told = re.fullmatch(UPKEEP_WAIT, waiting_line(command))
        assert told and told[1] == str(holder.pid), told
        release(holder)
        out, err = command.communicate(timeout=60)
    assert command.returncode == 0, err
    assert "6 chunks in 3 sessions of the whole project 'acme-shop' deleted." in out
    assert "smaller" in out  # the space was given back once the hook's ingest let go


def test_ctrl_c_skips_the_upkeep_and_the_forget_reports_what_it_deleted(causantic_home: Path, memory: Path) -> None:
    with settling_behind(causantic_home, "forget", "acme-shop", "--yes") as (command, _):
        assert re.fullmatch(UPKEEP_WAIT, waiting_line(command))
        command.send_signal(signal.SIGINT)
        # The lock is still held: the forget ends because it was asked to, and says what it did.
        out, err = command.communicate(timeout=10)
    assert command.returncode == 0, err
    assert "6 chunks in 3 sessions of the whole project 'acme-shop' deleted." in out
    assert "Interrupted" not in err and "Traceback" not in err


LOG_WAIT = (
    r"causantic: waiting for another Causantic process to finish reading or writing memory, to give its log's "
    r"space back to the disk \(at most 2 s\); Ctrl-C skips that \(a later write does it\)\."
)


@contextmanager
def reader_on_an_old_snapshot(home: Path) -> Iterator[None]:
    """A process reading memory through a command's write (a search of the MCP server, the dashboard):
    the log's checkpoint after the write waits for it, up to 2 s."""
    reader = sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM chunks").fetchone()
        yield
    finally:
        reader.close()


def test_emptying_the_log_behind_a_reader_says_what_it_waits_for(causantic_home: Path, memory: Path) -> None:
    """The forget's deletion was done, then it sat silent for 2 s: the only wait the CLI did not tell."""
    with reader_on_an_old_snapshot(causantic_home):
        command = start("forget", "acme-shop", "--yes")
        line = waiting_line(command)
        out, err = command.communicate(timeout=60)
    assert re.fullmatch(LOG_WAIT, line), line
    assert command.returncode == 0, err
    assert "6 chunks in 3 sessions of the whole project 'acme-shop' deleted." in out


def test_ctrl_c_while_a_vacuums_log_waits_for_a_reader_skips_that_and_the_vacuum_reports(
    causantic_home: Path, memory: Path
) -> None:
    """The rebuilt file is committed before its log's checkpoint: Ctrl-C there is not an interrupted vacuum."""
    with reader_on_an_old_snapshot(causantic_home):
        command = start("vacuum")
        assert re.fullmatch(LOG_WAIT, waiting_line(command))
        command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=10)
    assert command.returncode == 0, err
    assert "Interrupted" not in err and "Traceback" not in err
    assert out.startswith("memory.db: "), err  # the vacuum's report: the size before and after


def test_a_lock_holder_killed_with_sigkill_lets_the_waiting_command_finish_and_is_named_no_more(
    causantic_home: Path, memory: Path
) -> None:
    """kill -9 (a crash, the OOM killer) of a forget holding memory's write lock: the system lets the
    lock go and the ingest waiting for it goes on; the record a killed forget leaves (no exit handler
    ran) names it to no later wait; the forget run again completes, nothing of the killed ones kept."""
    with lock_held(causantic_home, command=("forget", "acme-shop", "--yes")) as holder:
        waiting = start("ingest", "--no-embed", str(memory))
        assert "the `causantic forget` started at" in waiting_line(waiting)
        holder.kill()
        holder.wait(timeout=30)
        out, err = waiting.communicate(timeout=60)
    assert holder.returncode == -signal.SIGKILL
    assert waiting.returncode == 0, err
    assert "1 of 1" in out  # the new session, stored once the lock was free

    with lock_held(causantic_home, command=("forget", "acme-shop", "--yes")) as holder:
        holder.kill()
        holder.wait(timeout=30)
    assert (causantic_home / "run" / f"writer-{holder.pid}.json").exists()  # left behind
    with lock_held(causantic_home) as other:  # a process that records nothing
        again = start("forget", "acme-shop", "--yes")
        line = waiting_line(again)
        release(other)
        out, err = again.communicate(timeout=60)
    assert line.startswith("causantic: waiting for another Causantic process to finish writing memory"), line
    assert again.returncode == 0, err
    assert "6 chunks in 3 sessions of the whole project 'acme-shop' deleted." in out, out
    assert not (causantic_home / "run" / f"writer-{holder.pid}.json").exists()  # removed by the next writer
    with sqlite3.connect(causantic_home / "memory.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] > 0  # the new session's, kept
    conn.close()


# A hook's ingest embedding: its run recorded as the hook's worker records it, holding the vector
# index's embedding lock (held for all of an ingest's embedding) until the test says "go on".
EMBEDDING = """
import sys
import threading
from pathlib import Path
from causantic.files import file_lock
from causantic.ingest_runs import IngestProgress
from causantic.write_waits import named

home = Path(sys.argv[1])
named(sys.argv[2])
[lock] = (home / "vectors").glob(".*.write.lock")
with IngestProgress(home, [home]) as run, file_lock(lock):
    run.embedding(0, 5000)
    print("holding", flush=True)
    sys.stdin.readline()
"""


@contextmanager
def embedding(home: Path) -> Iterator[subprocess.Popen[str]]:
    """A hook's ingest holding the embedding lock until :func:`release` (memory's vectors exist)."""
    assert causantic("embed").returncode == 0  # the examples' vectors: the lock's file is made
    with subprocess.Popen(
        [sys.executable, "-c", EMBEDDING, str(home), HOOK],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    ) as holder:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        try:
            yield holder
        finally:
            release(holder)


def first_line_within(command: subprocess.Popen[str], seconds: float = 20) -> str:
    """The first line the command prints on stderr, or '' when it prints none in ``seconds`` (a wait
    with no limit would make :func:`waiting_line` wait with it)."""
    lines: queue.Queue[str] = queue.Queue()
    assert command.stderr is not None
    stderr = command.stderr
    threading.Thread(target=lambda: lines.put(stderr.readline()), daemon=True).start()
    try:
        return lines.get(timeout=seconds).strip()
    except queue.Empty:
        return ""


def test_an_ingest_waiting_for_a_hooks_embedding_says_whose_and_then_embeds(causantic_home: Path, memory: Path) -> None:
    """The embedding lock has no time limit: the ingest sat silent through all of the hook's embedding."""
    with embedding(causantic_home) as holder:
        command = start("ingest", str(memory))
        line = first_line_within(command)
        release(holder)
        out, err = command.communicate(timeout=120)
    assert re.fullmatch(
        rf"causantic: waiting for the ingest started by {HOOK} at \d\d:\d\d UTC \(pid {holder.pid}\) to finish "
        r"embedding; Ctrl-C to stop\.",
        line,
    ), line
    assert command.returncode == 0, err
    assert re.search(r"vectors added +│ 1\b", out), out


def test_a_forget_waiting_for_an_embedding_says_so_and_ctrl_c_leaves_the_index_file_to_the_next_ingest(
    causantic_home: Path, memory: Path
) -> None:
    """After its deletion the forget waited, silent and with no limit, to take the chunks out of the
    ANN index's file: the hook's embedding holds that file's lock."""
    with embedding(causantic_home):
        command = start("forget", "acme-shop", "--yes")
        line = first_line_within(command)
        command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=30)  # the lock is still held: Ctrl-C ended the wait
    assert re.fullmatch(
        rf"causantic: waiting for the ingest started by {HOOK} at \d\d:\d\d UTC \(pid \d+\) to finish embedding, "
        r"to take the forgotten chunks out of the vector index's file; Ctrl-C skips that \(the next ingest does it\)\.",
        line,
    ), line
    assert command.returncode == 0, err
    assert "6 chunks in 3 sessions of the whole project 'acme-shop' deleted." in out
    assert "Interrupted" not in err and "Traceback" not in err
