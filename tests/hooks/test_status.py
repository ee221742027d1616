"""hook-status.json: hooks in parallel processes record their runs without losing or tearing any."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from click.testing import CliRunner
from mcp import Client
from process_support import EXAMPLES, subprocess_env

from causantic.cli.main import cli
from causantic.mcp.server import build_server
from causantic.runs import EARLIER_PROMPTS, PROMPT_HOOK, read_status, record

RECORD = (
    "import time, sys; from causantic.runs import record\n"
    "for i in range(15): record(sys.argv[1], success=i % 2 == 0, started=time.perf_counter(), outcome=str(i))"
)


def test_parallel_records_keep_every_hook_and_the_file_stays_valid_json(causantic_home: Path) -> None:
    names = [f"hook-{n}" for n in range(8)]
    processes = [subprocess.Popen([sys.executable, "-c", RECORD, name], env=subprocess_env()) for name in names]
    assert [p.wait(timeout=120) for p in processes] == [0] * len(names)
    runs = read_status()
    assert sorted(runs) == names
    assert all(run["outcome"] == "14" and run["success"] for run in runs.values())
    path = causantic_home / "hook-status.json"
    json.loads(path.read_text())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not list(causantic_home.glob(".hook-status.json.*.tmp"))


def test_reading_status_before_any_hook_ran_gives_nothing(causantic_home: Path) -> None:
    assert read_status() == {}
    causantic_home.mkdir(parents=True)
    (causantic_home / "hook-status.json").write_text("{torn")
    assert read_status() == {}


def test_the_prompt_hook_keeps_its_recent_runs_newest_first_and_other_hooks_only_their_last(
    causantic_home: Path,
) -> None:
    """hook status tells why memory was or was not added to each recent prompt, not only the last."""
    for i in range(EARLIER_PROMPTS + 3):
        record(PROMPT_HOOK, success=True, started=0.0, outcome=f"prompt {i}")
        record("session-start", success=True, started=0.0, outcome=f"start {i}")
    runs = read_status()
    last = runs[PROMPT_HOOK]
    assert last["outcome"] == f"prompt {EARLIER_PROMPTS + 2}"
    assert [r["outcome"] for r in last["earlier"]] == [
        f"prompt {EARLIER_PROMPTS + 1 - i}" for i in range(EARLIER_PROMPTS)
    ]
    assert all("earlier" not in r for r in last["earlier"])  # one list, not runs nested in runs
    assert "earlier" not in runs["session-start"]


def test_hook_status_shows_times_to_the_minute_in_utc_as_every_other_command_does(causantic_home: Path) -> None:
    """Its table read "2026-11-24 10:20:30" (seconds, no zone) and its prompt lines "… 10:20:30 UTC",
    where `list-sessions`, `stats` and the dashboard say "2026-11-24 10:20 UTC" or "2026-11-24 10:20"."""
    record(PROMPT_HOOK, success=True, started=0.0, outcome="nothing relevant", project="acme-shop")
    record("session-start", success=True, started=0.0, outcome="briefing of 10 characters")
    path = causantic_home / "hook-status.json"
    runs = json.loads(path.read_text())
    for run in runs.values():
        run["lastRun"] = "2026-11-24T10:20:30.123Z"
    path.write_text(json.dumps(runs))
    shown = CliRunner().invoke(cli, ["hook", "status"], env={"COLUMNS": "200"}, catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "10:20:30" not in shown.output
    [row] = [line for line in shown.output.splitlines() if "session-start" in line]
    assert "2026-11-24 10:20 UTC" in row
    assert "2026-11-24 10:20 UTC, project acme-shop: no memory added." in shown.output


def test_the_mcp_hook_status_says_how_long_ago_in_the_dashboards_words(causantic_home: Path) -> None:
    """It said "last ran 2 d ago" (and "40 s ago") where the dashboard says "2 days ago" ("just now")."""
    record("session-start", success=True, started=0.0, outcome="briefing of 10 characters")
    record("pre-compact", success=True, started=0.0, outcome="nothing new")
    path = causantic_home / "hook-status.json"
    runs = json.loads(path.read_text())
    now = datetime.now(UTC)
    runs["session-start"]["lastRun"] = (now - timedelta(days=2, hours=3)).isoformat().replace("+00:00", "Z")
    # 5 s before the answer: "just now" holds for 55 s more on a loaded machine (40 s left only 20).
    runs["pre-compact"]["lastRun"] = (now - timedelta(seconds=5)).isoformat().replace("+00:00", "Z")
    path.write_text(json.dumps(runs))

    async def ask() -> Any:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return await client.call_tool("hook-status", {})

    text = anyio.run(ask).content[0].text
    assert "- session-start: last ran 2 days ago (success" in text
    assert "- pre-compact: last ran just now (success" in text


def test_the_health_check_after_init_is_named_as_such_not_as_a_session_of_claude_codes(
    causantic_home: Path, tmp_path: Path, capsys: Any
) -> None:
    """Right after `causantic init`, hook status read "session causanti — no memory of this project":
    init's own trial run of the hook (session id causantic-health-check-…) passed for a session of
    Claude Code's. It is named as the health check, with no session, in every place that shows it."""
    from causantic.facade import Memory
    from causantic.hooks.runner import run_hook
    from causantic.live_session import current_session

    with Memory() as memory:  # a memory, but none of the folder init ran in
        memory.ingest([EXAMPLES], embed=False)
    payload = {"session_id": "causantic-health-check-1764000000", "cwd": str(tmp_path), "source": "startup"}
    assert run_hook("session-start", json.dumps({**payload, "hook_event_name": "SessionStart"})) == 0
    assert capsys.readouterr().out == ""  # no briefing: nothing of this folder in memory

    run = read_status()["session-start"]
    assert run["outcome"] == "causantic init's health check: no memory of this project"
    assert "sessionId" not in run
    shown = CliRunner().invoke(cli, ["hook", "status"], env={"COLUMNS": "200"}, catch_exceptions=False).output
    assert "causantic init's health check: no memory of this project" in shown

    async def ask() -> Any:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return await client.call_tool("hook-status", {})

    told = anyio.run(ask).content[0].text
    assert "session causanti" not in told and "causantic init's health check: no memory of this project" in told
    # nor is it taken for the session an agent is in ("where did I leave off?")
    assert current_session({}, 0.0) is None
