"""A command waiting for the dashboard's writes names them ("the dashboard's forget started at 10:02
UTC (pid 4242)", "the dashboard's upgrade of memory's database …"), where it said "another
Causantic process".

Real processes: ``causantic dashboard`` over HTTP, its write holding memory's write lock until the
test lets it go on, and ``causantic ingest`` run beside it as a user would.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from pathlib import Path
from urllib.parse import urlencode

import pytest
from dashboard_support import EXAMPLES, _env, causantic, csrf_of, http_request, page_text, start_dashboard
from process_support import WRITE_HELD_WHEN_ARMED, appeared, ingest_waiting
from transcript_files import write_session

pytestmark = pytest.mark.slow


def test_an_ingest_waiting_for_the_dashboards_forget_names_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    causantic(home, "batch-ingest", str(EXAMPLES), "--no-embed")
    new = write_session(tmp_path / "projects" / "-work-shop", "/work/shop", "s-new", [("Cache carts?", "Redis.")])
    signals = tmp_path / "signals"
    signals.mkdir()
    dashboard = start_dashboard(home, ("-c", WRITE_HELD_WHEN_ARMED, str(signals), "dashboard"))
    try:
        form = {"csrf": csrf_of(dashboard), "project": "acme-shop"}

        def post(path: str, **fields: str | list[str]) -> str:
            body = urlencode({**form, **fields}, doseq=True)
            return http_request(dashboard, "POST", path, headers={"Origin": dashboard.base}, body=body)[2]

        ids = re.findall(r'name="id" value="([^"]+)"', post("/forget/preview"))
        assert len(ids) == 6
        (signals / "armed").touch()
        confirmed: list[str] = []
        confirming = threading.Thread(target=lambda: confirmed.append(post("/forget/confirm", id=ids)))
        confirming.start()
        pid = int(appeared(signals / "holding"))
        waiting, line = ingest_waiting(new.parent, {**_env(home), "CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS": "20000"})
        (signals / "go").touch()
        confirming.join(timeout=60)
        out, err = waiting.communicate(timeout=60)
        # The dashboard runs on; its forget's record went with the forget.
        assert not list((home / "run").glob("writer-*.json"))
    finally:
        (signals / "go").touch()
        dashboard.stop()
    assert re.fullmatch(
        rf"causantic: waiting for the dashboard's forget started at \d\d:\d\d UTC \(pid {pid}\) "
        r"to finish writing memory \(at most 20 s\); Ctrl-C to stop\.",
        line,
    ), line
    assert "Deleted 6 chunks" in page_text(confirmed[0])
    assert waiting.returncode == 0, err
    assert "1 of 1" in out  # it went on to read the new session


def test_an_ingest_waiting_for_the_dashboards_upgrade_of_memory_names_it(tmp_path: Path) -> None:
    """The first process to open memory after Causantic was upgraded brings its tables up to date; the
    dashboard doing it was 'another Causantic process' to a command waiting meanwhile."""
    home = tmp_path / "home"
    causantic(home, "batch-ingest", str(EXAMPLES), "--no-embed")
    with sqlite3.connect(home / "memory.db") as conn:  # memory as the release before m014 left it
        conn.execute("DELETE FROM schema_migrations WHERE name = 'm014_project_listing_index'")
    conn.close()
    new = write_session(tmp_path / "projects" / "-work-shop", "/work/shop", "s-new", [("Cache carts?", "Redis.")])
    signals = tmp_path / "signals"
    signals.mkdir()
    (signals / "armed").touch()  # its first write: the upgrade, when it opens memory
    dashboard = start_dashboard(home, ("-c", WRITE_HELD_WHEN_ARMED, str(signals), "dashboard"))
    try:
        pid = int(appeared(signals / "holding"))
        waiting, line = ingest_waiting(new.parent, {**_env(home), "CAUSANTIC_STORAGE_BUSY_TIMEOUT_MS": "20000"})
        (signals / "go").touch()
        out, err = waiting.communicate(timeout=60)
        status, _, projects = http_request(dashboard, "GET", "/projects")
        assert not list((home / "run").glob("writer-*.json"))  # the upgrade's record went with it
    finally:
        (signals / "go").touch()
        dashboard.stop()
    assert re.fullmatch(
        rf"causantic: waiting for the dashboard's upgrade of memory's database started at \d\d:\d\d UTC "
        rf"\(pid {pid}\) to finish writing memory \(at most 20 s\); Ctrl-C to stop\.",
        line,
    ), line
    assert waiting.returncode == 0, err
    assert "1 of 1" in out  # it went on to read the new session
    assert status == 200 and "acme-shop" in page_text(projects)  # the dashboard, upgraded, serves memory
