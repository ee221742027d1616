"""The write-ahead log does not outgrow an ingest while another process holds memory open.

SQLite deletes ``memory.db-wal`` when the last connection closes, so the log's size matters while
another process stays connected: an MCP server per Claude Code session, the dashboard. Here that
process is real (a reader on its own connection) and so are the ingests (``causantic ingest`` as
the user and the hooks run it). An idle reader leaves the log empty after an ingest; a reader
holding a snapshot through an ingest keeps the log it needs, and the next ingest (one with nothing
new, as a session-end hook runs) empties it once the reader has let go; so does an MCP server or the
dashboard left open, once nothing writes any more.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from process_support import McpProcess, causantic, subprocess_env, wait_for
from transcript_files import write_session

from causantic.facade import Memory

# Holds a read transaction while told to (a line on stdin toggles), connected until stdin ends.
_READER = """
import sqlite3, sys
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, isolation_level=None)
conn.execute("SELECT COUNT(*) FROM chunks").fetchone()  # opens the file and its log (connect alone does not)
print("connected", flush=True)
for line in sys.stdin:
    if line.strip() == "hold":
        conn.execute("BEGIN")
        conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
    else:
        conn.execute("COMMIT")
    print("ok", flush=True)
"""


def _sessions(folder: Path, first: int) -> Path:
    for n in range(first, first + 6):
        turns = [
            (f"turn {n}.{t} " + " ".join(f"w{n}y{t}y{w}" for w in range(400)), f"ok {n}.{t} " * 300) for t in range(15)
        ]
        write_session(folder, "/work/shop", f"{n:08x}-0000-4000-8000-{n:012d}", turns)
    return folder


def _log(home: Path) -> int:
    wal = home / "memory.db-wal"
    return wal.stat().st_size if wal.exists() else 0


class Reader:
    def __init__(self, db: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _READER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "connected"

    def tell(self, what: str) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(what + "\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "ok"

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


def _ingest(folder: Path) -> None:
    done = causantic("ingest", str(folder), "--no-embed")
    assert done.returncode == 0, done.stderr


def test_the_log_is_empty_after_an_ingest_while_another_process_stays_connected(
    tmp_path: Path, causantic_home: Path
) -> None:
    with Memory(causantic_home):
        pass  # the store exists, as after the first command a user runs
    reader = Reader(causantic_home / "memory.db")
    try:
        _ingest(_sessions(tmp_path / "first", 0))
        assert _log(causantic_home) == 0

        reader.tell("hold")  # a reader mid-query through the whole ingest: the log must keep what it reads
        _ingest(_sessions(tmp_path / "second", 6))
        assert _log(causantic_home) > 0
        reader.tell("let go")
        _ingest(tmp_path / "second")  # nothing new: what a session-end hook's ingest does
        assert _log(causantic_home) == 0
    finally:
        reader.close()
    with Memory(causantic_home) as memory:
        assert memory.stats().session_count == 12


@pytest.mark.slow
def test_an_idle_mcp_server_empties_the_log_a_reader_kept_through_an_ingest(
    tmp_path: Path, causantic_home: Path
) -> None:
    with Memory(causantic_home):
        pass
    reader = Reader(causantic_home / "memory.db")
    server = McpProcess(env=subprocess_env(CAUSANTIC_STORAGE_IDLE_CHECKPOINT_SECONDS="0.2"))
    try:
        with server:
            assert not server.call("list-projects").is_error  # connected, as a Claude Code session's server is
            reader.tell("hold")
            _ingest(_sessions(tmp_path / "first", 0))
            assert _log(causantic_home) > 0  # the ingest could not empty what the reader reads
            reader.tell("let go")
            # Nothing writes any more: the server, idle, empties the log (before: it stayed until the next ingest).
            wait_for(lambda: _log(causantic_home) == 0, timeout=30)
            found = server.call("search", {"query": "turn 3.4"})
            assert not found.is_error and "turn 3.4" in found.content[0].text
    finally:
        reader.close()


def test_the_dashboard_left_open_empties_the_log_once_a_reader_lets_go(tmp_path: Path, causantic_home: Path) -> None:
    from starlette.testclient import TestClient

    from causantic.dashboard.app import create_app
    from causantic.dashboard.security import Secrets

    with Memory(causantic_home):
        pass
    app = create_app(
        Secrets(port=8765), opener=lambda: Memory(causantic_home, overrides={"storage.idleCheckpointSeconds": 0.05})
    )
    reader = sqlite3.connect(f"file:{causantic_home / 'memory.db'}?mode=ro", uri=True, isolation_level=None)
    try:
        with TestClient(app, base_url="http://127.0.0.1:8765"):
            reader.execute("BEGIN")
            reader.execute("SELECT COUNT(*) FROM chunks").fetchone()
            with Memory(causantic_home) as memory:
                memory.ingest([_sessions(tmp_path / "first", 0)], embed=False)
            assert _log(causantic_home) > 0
            reader.execute("COMMIT")
            wait_for(lambda: _log(causantic_home) == 0, timeout=30)
    finally:
        reader.close()
