"""The MCP server and the dashboard write memory only where they say so: answering every tool and
every page writes nothing, so a command never waits for a server it cannot name.

A server names each of its writes to a command waiting for it (``write_waits.write``: its forgets,
the upgrade of memory's database when it opens memory first, the idle clean-up of the log); a write
added to a read path would make that command wait for "another Causantic process" again. Real
processes, each with every SQL statement that writes logged (SQLite's trace callback on every
connection the store opens), spoken to as their clients do.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from dashboard_support import EXAMPLES, _env, causantic, csrf_of, http_request, start_dashboard
from process_support import CORPUS_FOLDERS, REAL_PROJECTS, McpProcess

pytestmark = pytest.mark.slow

# `causantic ARGS` (argv: a log file, then ARGS), with each statement that writes memory appended to
# the log file as it runs: the statement, then the Causantic frames that ran it.
WRITES_LOGGED = """
import re, sys, traceback
import causantic.store.sqlite as sqlite_util

log = open(sys.argv[1], "a", encoding="utf-8")
writes = re.compile(
    r"\\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|BEGIN IMMEDIATE|VACUUM"
    r"|PRAGMA\\s+(wal_checkpoint|incremental_vacuum|user_version\\s*=))",
    re.IGNORECASE,
)
real = sqlite_util.connect

def connect(path, **options):
    conn = real(path, **options)

    def traced(statement):
        # Made at every opening, a no-op once made (no lock); the FTS5 probe is a temporary table.
        if writes.match(statement) and "IF NOT EXISTS schema_migrations" not in statement and " temp." not in statement:
            frames = [f"{f.name}:{f.lineno}" for f in traceback.extract_stack() if "causantic" in f.filename]
            log.write(f"{statement.strip()[:80]} <- {' > '.join(frames[-6:])}\\n")
            log.flush()

    conn.set_trace_callback(traced)
    return conn

sqlite_util.connect = connect
from causantic.cli.main import main
sys.argv = ["causantic", *sys.argv[2:]]
main()
"""


@pytest.fixture
def home(tmp_path: Path, corpus_dir: Path) -> Path:
    """Memory holding the example sessions and two real projects, embedded, with topics: every page
    and tool has an answer."""
    home = tmp_path / "home"
    causantic(home, "ingest", str(EXAMPLES), *(str(corpus_dir / REAL_PROJECTS / name) for name in CORPUS_FOLDERS[:2]))
    causantic(home, "cluster")
    return home


def test_the_mcp_servers_tools_write_nothing_but_a_confirmed_forget(home: Path, tmp_path: Path) -> None:
    log = tmp_path / "writes.log"
    calls = [
        ("search", {"query": "checkout cart"}),
        ("recall", {"query": "checkout cart"}),
        ("predict", {"context": "the checkout cart"}),
        ("reconstruct", {"project": "acme-shop"}),
        ("list-projects", {}),
        ("list-sessions", {"project": "acme-shop"}),
        ("stats", {}),
        ("hook-status", {}),
        ("forget", {"project": "acme-shop"}),  # the preview
    ]
    with McpProcess(args=["-c", WRITES_LOGGED, str(log), "serve"], env=_env(home)) as served:
        for tool, arguments in calls:
            answered = served.call(tool, arguments)
            assert not answered.is_error, (tool, answered.content[0].text)
        assert log.read_text() == ""
        forgotten = served.call("forget", {"project": "acme-shop", "dry_run": False, "expected_count": 6})
        assert not forgotten.is_error, forgotten.content[0].text
    assert "DELETE FROM chunks" in log.read_text()  # the log sees the writes there are


def test_the_dashboards_pages_write_nothing_but_a_confirmed_forget(home: Path, tmp_path: Path) -> None:
    log = tmp_path / "writes.log"
    dashboard = start_dashboard(home, ("-c", WRITES_LOGGED, str(log), "dashboard"))
    try:
        overview = http_request(dashboard, "GET", "/")[2]
        session = re.search(r'href="(/session/[^"]+)"', http_request(dashboard, "GET", "/project?name=acme-shop")[2])
        topic = re.search(r'href="(/topics/\d+[^"]*)"', http_request(dashboard, "GET", "/topics")[2])
        assert overview and session and topic
        for page in ("/projects", session[1], "/search?q=checkout+cart", topic[1].replace("&amp;", "&"), "/settings"):
            status, _, text = http_request(dashboard, "GET", page)
            assert status == 200, (page, text[:300])
        form = {"csrf": csrf_of(dashboard), "project": "acme-shop"}
        preview = http_request(
            dashboard, "POST", "/forget/preview", headers={"Origin": dashboard.base}, body=urlencode(form)
        )
        ids = re.findall(r'name="id" value="([^"]+)"', preview[2])
        assert len(ids) == 6
        assert log.read_text() == ""
        body = urlencode({**form, "id": ids}, doseq=True)
        done = http_request(dashboard, "POST", "/forget/confirm", headers={"Origin": dashboard.base}, body=body)
        assert done[0] == 200
    finally:
        dashboard.stop()
    assert "DELETE FROM chunks" in log.read_text()
