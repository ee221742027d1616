"""The last run of each hook, kept in ``<home>/hook-status.json`` (owner-only).

Written by the hooks, read by ``causantic hook status``, the MCP ``hook-status`` tool and the
dashboard: it sits below them all, so none of those interfaces imports another. It loads neither
pydantic nor ``logging`` (the prompt hook records every run and must start fast); the JSON shape
people's scripts read is ``causantic.retrieval.output.HookStatusOut``.

``hook-status.json`` maps a hook name to its last run (:class:`HookRun`). Hooks run in parallel
processes, so the read-modify-write happens under an exclusive lock and the new file replaces the
old one atomically; a reader never sees half a file. Nothing here raises: a hook that cannot write
its status (read-only home, full disk) still does its job and exits 0.
"""

from __future__ import annotations

import json
import time
from typing import TypedDict, cast

from causantic.files import atomic_write, file_lock, secure_dir
from causantic.home import causantic_home

STATUS_FILE = "hook-status.json"
PROMPT_HOOK = "user-prompt-submit"  # the prompt-memory hook: its runs say what memory it added (`injected`)
EARLIER_PROMPTS = 4  # the prompt hook's runs before its last one kept too: "why not on that prompt?" comes late
# The session id `causantic init`'s health check sends its trial session-start under (a time follows
# it). Its run is recorded as the health check's, with no session: `hook status` named it "session
# causanti" after init, as if Claude Code had started a session of that name.
HEALTH_CHECK_SESSION = "causantic-health-check-"
HEALTH_CHECK_OUTCOME = "causantic init's health check"


class InjectedMoment(TypedDict):
    """One past moment the prompt-memory hook added to a prompt, and why."""

    chunkId: str
    sessionId: str
    project: str
    date: str
    relevance: float  # calibrated, 0..1 (keyword-only scoring)
    coverage: float  # IDF-weighted share of the prompt's words in the chunk
    otherProject: bool
    margin: float | None  # the lead session's BM25 over the next session's; None: no other session matched


class HookRun(TypedDict, total=False):
    lastRun: str  # ISO 8601 UTC
    success: bool
    durationMs: int
    outcome: str
    project: str
    sessionId: str
    error: str
    details: dict[str, int]
    injected: list[InjectedMoment]
    earlier: list[HookRun]  # user-prompt-submit: its runs before this one, newest first (EARLIER_PROMPTS)


def record(
    hook: str,
    *,
    success: bool,
    started: float,
    outcome: str,
    project: str | None = None,
    session_id: str | None = None,
    error: str | None = None,
    details: dict[str, int] | None = None,
    injected: list[InjectedMoment] | None = None,
) -> None:
    """Save this run as the hook's last run; never raises."""
    run: HookRun = {
        "lastRun": _now(),
        "success": success,
        "durationMs": round((time.perf_counter() - started) * 1000),
        "outcome": outcome,
    }
    if project:
        run["project"] = project
    if session_id:
        run["sessionId"] = session_id
    if error:
        run["error"] = error
    if details:
        run["details"] = details
    if injected is not None:
        run["injected"] = injected
    try:
        home = secure_dir(causantic_home())
        with file_lock(home / "locks" / "hook-status.lock", timeout=5) as locked:
            if not locked:
                from causantic.logs import log

                log(f"{hook}: hook-status.json stayed locked; this run is not recorded")
                return
            runs = read_status()
            if hook == PROMPT_HOOK and hook in runs:
                before = runs[hook]
                last = cast(HookRun, {k: v for k, v in before.items() if k != "earlier"})
                run["earlier"] = [last, *before.get("earlier", [])][:EARLIER_PROMPTS]
            runs[hook] = run
            atomic_write(home / STATUS_FILE, json.dumps(runs, indent=2, sort_keys=True) + "\n")
    except Exception as exc:
        from causantic.logs import log

        log(f"{hook}: cannot record status", error=exc)


def read_status() -> dict[str, HookRun]:
    """Each hook's last run; empty when no hook has run (or the file is unreadable)."""
    try:
        data = json.loads((causantic_home() / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: cast(HookRun, v) for k, v in data.items() if isinstance(v, dict)}


def _now() -> str:
    """Now as ISO 8601 UTC with milliseconds (``time``, not ``datetime``: one import less per hook)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
