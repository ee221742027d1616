"""The last run of each hook, kept in ``<home>/hook-status.json`` (owner-only).

Written by the hooks, read by ``causantic hook status``, the MCP ``hook-status`` tool and the
dashboard: it sits below them all, so none of those interfaces imports another.

``hook-status.json`` maps a hook name to its last run (:class:`HookRun`). Hooks run in parallel
processes, so the read-modify-write happens under an exclusive lock and the new file replaces the
old one atomically; a reader never sees half a file. Nothing here raises: a hook that cannot write
its status (read-only home, full disk) still does its job and exits 0.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field

from causantic.config import causantic_home
from causantic.files import atomic_write, file_lock, secure_dir
from causantic.logs import log

STATUS_FILE = "hook-status.json"


class InjectedMoment(TypedDict):
    """One past moment the prompt-memory hook added to a prompt, and why."""

    chunkId: str
    sessionId: str
    project: str
    date: str
    relevance: float  # calibrated, 0..1 (keyword-only scoring)
    coverage: float  # IDF-weighted share of the prompt's words in the chunk
    otherProject: bool


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
                log(f"{hook}: hook-status.json stayed locked; this run is not recorded")
                return
            runs = read_status()
            runs[hook] = run
            atomic_write(home / STATUS_FILE, json.dumps(runs, indent=2, sort_keys=True) + "\n")
    except Exception as exc:
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
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class InjectedMomentInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    chunk_id: str
    session_id: str
    project: str
    date: str
    relevance: float
    coverage: float
    other_project: bool = False


class HookRunInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    last_run: str
    success: bool
    duration_ms: int | None = None
    outcome: str = ""
    project: str | None = None
    session_id: str | None = None
    error: str | None = None
    details: dict[str, int] = Field(default_factory=dict)
    injected: list[InjectedMomentInfo] = Field(
        default_factory=list, description="user-prompt-submit: the past moments added to the last prompt, and why."
    )


class HookStatusOut(BaseModel):
    """Each hook's last run: the one JSON shape of ``causantic hook status --json`` and the MCP tool."""

    model_config = ConfigDict(frozen=True)

    hooks: dict[str, HookRunInfo]


def status_out(runs: dict[str, HookRun]) -> HookStatusOut:
    return HookStatusOut(
        hooks={
            name: HookRunInfo(
                last_run=r.get("lastRun", ""),
                success=bool(r.get("success")),
                duration_ms=r.get("durationMs"),
                outcome=r.get("outcome", ""),
                project=r.get("project"),
                session_id=r.get("sessionId"),
                error=r.get("error"),
                details=r.get("details", {}),
                injected=[
                    InjectedMomentInfo(
                        chunk_id=m["chunkId"],
                        session_id=m["sessionId"],
                        project=m["project"],
                        date=m["date"],
                        relevance=m["relevance"],
                        coverage=m["coverage"],
                        other_project=m.get("otherProject", False),
                    )
                    for m in r.get("injected", [])
                ],
            )
            for name, r in sorted(runs.items())
        }
    )
