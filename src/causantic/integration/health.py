"""The health check after ``causantic init``: run what Claude Code will run, the way it will run it.

Each check is a value (:class:`Check`) with a verdict and a line a person can act on; none raises.
The MCP check starts the registered server command and lists its tools through the SDK's stdio
client; the hook check pipes a SessionStart payload into the registered hook command with ``sh``.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from causantic.integration.entries import Launcher
from causantic.runs import HEALTH_CHECK_SESSION
from causantic.wording import counted

MCP_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str


def run_checks(launcher: Launcher, cwd: Path) -> list[Check]:
    return [_store(), _model(), _mcp_server(launcher), _session_start_hook(launcher, cwd)]


def _store() -> Check:
    from causantic.facade import Memory

    try:
        with Memory() as memory:
            stats = memory.stats()
        held = f"{counted(stats.chunk_count, 'chunk')} in {counted(stats.project_count, 'project')}"
        return Check("memory store", True, f"{held}; keyword index {stats.keyword_index}")
    except Exception as exc:
        return Check("memory store", False, f"{type(exc).__name__}: {exc}")


def _model() -> Check:
    try:
        from causantic.config import load_config
        from causantic.embedding import is_available

        model = load_config().embedding.model
        if is_available(model):
            return Check("embedding model", True, f"{model} is on this machine")
        return Check(
            "embedding model",
            False,
            f"{model} is missing: search runs keyword-only until it is installed (see `causantic models`)",
        )
    except Exception as exc:
        return Check("embedding model", False, f"{type(exc).__name__}: {exc}")


def _mcp_server(launcher: Launcher) -> Check:
    import anyio

    entry = launcher.mcp_entry()

    async def probe() -> tuple[int, float]:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=entry["command"], args=entry["args"], env={**os.environ, **entry["env"]})
        started = time.perf_counter()
        with open(os.devnull, "w") as quiet, anyio.fail_after(MCP_TIMEOUT_S):
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = await session.list_tools()
                return len(tools.tools), time.perf_counter() - started

    try:
        count, seconds = anyio.run(probe)
        return Check("MCP server", True, f"answered tools/list with {count} tools in {seconds:.2f} s")
    except Exception as exc:
        return Check(
            "MCP server",
            False,
            f"{' '.join([entry['command'], *entry['args']])} failed: {type(exc).__name__}: {exc}",
        )


def _session_start_hook(launcher: Launcher, cwd: Path) -> Check:
    payload = json.dumps(
        {
            "session_id": f"{HEALTH_CHECK_SESSION}{int(time.time())}",
            "cwd": str(cwd),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    )
    command = launcher.hook_command("session-start")
    started = time.perf_counter()
    try:
        done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, text=True, timeout=30, cwd=cwd)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("session-start hook", False, f"{command}: {exc}")
    seconds = time.perf_counter() - started
    out = done.stdout.strip()
    try:
        context: Any = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
    except (ValueError, KeyError, TypeError):
        return Check("session-start hook", False, f"printed something that is not hook JSON: {out[:120]!r}")
    if done.returncode != 0:
        return Check("session-start hook", False, f"exit code {done.returncode}: {done.stderr.strip()[:200]}")
    what = f"a {len(context)}-character briefing" if context else "no briefing (no memory of this folder)"
    return Check("session-start hook", True, f"ran in {seconds * 1000:.0f} ms and gave {what}")
