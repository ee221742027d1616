"""A command waiting for a write of the MCP server names it ("the MCP server's forget started at 10:02
UTC (pid 4242)", "the MCP server's clean-up of memory's log …"), where it said "another Causantic
process": a server records that it writes for one write at a time, as long as that write runs, not
for its whole life as a command does.

Real processes: ``causantic serve`` spoken to by the SDK's stdio client, its write holding memory's
write lock until the test lets it go on, and ``causantic ingest`` run beside it as a user would.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from process_support import WRITE_HELD_WHEN_ARMED, McpProcess, appeared, causantic, ingest_waiting, subprocess_env
from transcript_files import write_session

from causantic.examples import SESSIONS_DIR

pytestmark = pytest.mark.slow


def test_an_ingest_waiting_for_the_mcp_servers_forget_names_it(causantic_home: Path, tmp_path: Path) -> None:
    assert causantic("ingest", "--no-embed", str(SESSIONS_DIR)).returncode == 0
    new = write_session(tmp_path / "projects" / "-work-shop", "/work/shop", "s-new", [("Cache carts?", "Redis.")])
    signals = tmp_path / "signals"
    signals.mkdir()
    with McpProcess(args=["-c", WRITE_HELD_WHEN_ARMED, str(signals), "serve", "--no-warm"]) as served:
        preview = served.call("forget", {"project": "acme-shop"})
        assert preview.content[0].text.startswith("Dry run: 6 chunks in 3 sessions")
        (signals / "armed").touch()
        forgetting = served.portal.start_task_soon(
            served.client.call_tool, "forget", {"project": "acme-shop", "dry_run": False, "expected_count": 6}
        )
        pid = int(appeared(signals / "holding"))
        waiting, line = ingest_waiting(new.parent, subprocess_env(CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS="20000"))
        (signals / "go").touch()
        forgotten = forgetting.result(timeout=60)
        out, err = waiting.communicate(timeout=60)
        # The server runs on; its forget's record went with the forget.
        assert not list((causantic_home / "run").glob("writer-*.json"))
    assert re.fullmatch(
        rf"causantic: waiting for the MCP server's forget started at \d\d:\d\d UTC \(pid {pid}\) "
        r"to finish writing memory \(at most 20 s\); Ctrl-C to stop\.",
        line,
    ), line
    assert forgotten.content[0].text.startswith("Deleted 6 chunks from the whole project 'acme-shop'")
    assert waiting.returncode == 0, err
    assert "1 of 1" in out  # it went on to read the new session


def test_an_ingest_waiting_for_the_mcp_servers_clean_up_of_the_log_names_it(
    causantic_home: Path, tmp_path: Path
) -> None:
    """A log a reader kept through an ingest is emptied by the idle server once the reader lets go;
    copying it back into memory.db holds the write lock (long, for a large log), and a command that
    waited meanwhile said 'another Causantic process'."""
    assert causantic("ingest", "--no-embed", str(SESSIONS_DIR)).returncode == 0
    first, second = (
        write_session(tmp_path / name / "-work-shop", "/work/shop", f"s-{name}", [(f"Cache {name}?", "Redis.")]).parent
        for name in ("first", "second")
    )
    signals = tmp_path / "signals"
    signals.mkdir()
    reader = sqlite3.connect(f"file:{causantic_home / 'memory.db'}?mode=ro", uri=True, isolation_level=None)
    env = subprocess_env(CAUSANTIC_STORAGE_IDLE_CHECKPOINT_SECONDS="0.2")
    with McpProcess(args=["-c", WRITE_HELD_WHEN_ARMED, str(signals), "serve", "--no-warm"], env=env) as served:
        assert not served.call("list-projects").is_error
        reader.execute("BEGIN")  # a search on an older snapshot, through the ingest
        reader.execute("SELECT COUNT(*) FROM chunks").fetchone()
        assert causantic("ingest", "--no-embed", str(first)).returncode == 0
        assert (causantic_home / "memory.db-wal").stat().st_size > 0  # kept for the reader
        (signals / "armed").touch()
        reader.execute("COMMIT")
        pid = int(appeared(signals / "holding"))  # the idle server's checkpoint of the log
        waiting, line = ingest_waiting(second, subprocess_env(CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS="20000"))
        (signals / "go").touch()
        out, err = waiting.communicate(timeout=60)
        assert not list((causantic_home / "run").glob("writer-*.json"))
        found = served.call("search", {"query": "Cache second"})
    reader.close()
    assert re.fullmatch(
        rf"causantic: waiting for the MCP server's clean-up of memory's log started at \d\d:\d\d UTC \(pid {pid}\) "
        r"to finish writing memory \(at most 20 s\); Ctrl-C to stop\.",
        line,
    ), line
    assert waiting.returncode == 0, err
    assert "1 of 1" in out
    assert not found.is_error and "Cache second" in found.content[0].text
