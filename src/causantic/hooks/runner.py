"""One entry point per hook. Whatever happens, the hook exits 0 (PreCompact treats exit 2 as "block
compaction", SessionStart shows other codes as errors), logs what went wrong and records its run.

session-start prints ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext":
…}}`` and nothing else on stdout, or nothing at all when there is nothing to say (no memory of the
project; a resumed conversation that already holds the briefing).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from causantic import write_waits
from causantic.hooks.event import HookEvent, HookProblem, parse_event, read_stdin
from causantic.hooks.prompt_memory import user_prompt_submit
from causantic.logs import log
from causantic.runs import HEALTH_CHECK_OUTCOME, HEALTH_CHECK_SESSION, record
from causantic.wording import counted

HOOKS = ("session-start", "pre-compact", "session-end", "user-prompt-submit")
WORKER = "ingest-worker"
SERVER = "prompt-server"  # the prompt hook's warm process (causantic.hooks.warm)
MAX_CONTEXT_CHARS = 9_500  # Claude Code moves hook output over 10,000 characters into a file


def session_start(name: str, event: HookEvent, started: float) -> tuple[str, str | None]:
    from causantic.config_cache import read_config
    from causantic.facade import Memory
    from causantic.home import memory_missing
    from causantic.hooks.briefing import (
        RESUMED,
        await_cleared_session,
        briefing_in_transcript,
        cached_briefing,
        compacted_note,
    )
    from causantic.live_session import note_session

    if not _health_check(event):  # init's trial run is no session an agent is in
        note_session(event.session_id)  # the MCP server's id is stale after /clear; this one is not
    folder = Path(event.working_dir)
    # The cached configuration, as the CLI's read commands take it: validating it (pydantic) would
    # cost this hook, which Claude Code waits for, more than building the briefing.
    config = read_config(cwd=folder if folder.is_dir() else None)
    if memory_missing(config):
        return "no memory yet (nothing ingested)", None
    if event.source in RESUMED and briefing_in_transcript(event.transcript_path):
        return f"none on {event.source}: the saved conversation already holds a briefing", None
    with Memory(config=config) as memory:
        waited = (
            await_cleared_session(memory, event.transcript_path, event.session_id) if event.source == "clear" else None
        )
        briefing = cached_briefing(
            memory, memory.home, event.working_dir, event.session_id, config.tokens.claude_md_budget
        )
        note = compacted_note(memory, event.working_dir, event.session_id) if event.source == "compact" else None
    if briefing is None and note is None:
        return "no memory of this project", None
    text = "\n\n".join(part for part in (briefing and briefing.text, note) if part)
    output = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": text[:MAX_CONTEXT_CHARS],
        }
    }
    sys.stdout.write(json.dumps(output) + "\n")  # ASCII: safe whatever the locale's encoding
    sys.stdout.flush()
    said = counted(len(briefing.text), "character") if briefing else ""
    outcome = f"briefing of {said}" if briefing else "no briefing (no earlier session)"
    outcome += ", and where this session's turns before the compaction are" if note else ""
    outcome += f", after {waited:.1f} s waiting for the cleared session's ingest" if waited is not None else ""
    return outcome, briefing.project if briefing else None


def ingest_hook(name: str, event: HookEvent, started: float) -> tuple[str, str | None] | None:
    """Record the start first: the worker records its outcome under the same name, maybe before we return."""
    from causantic.hooks.ingest import never_written, spawn_worker, transcript_of

    if name == "session-end" and never_written(event):
        # Trigger: Claude Code opened and closed with no message, so it never wrote the transcript.
        # Why: an everyday event, not a failure (hook status and the dashboard showed it as one).
        return f"nothing to ingest: {Path(event.transcript_path).name} was never written (no message sent)", None
    transcript = transcript_of(event)
    record(
        name,
        success=True,
        started=started,
        outcome=f"ingest of {transcript.name} started in the background",
        session_id=event.session_id,
    )
    spawn_worker(name, event)
    return None


# What each hook wants from its event, for a person who runs it by hand with nothing on stdin.
BY_HAND = {
    "session-start": "to see this folder's briefing: echo '{\"cwd\": \"'$PWD'\"}' | causantic hook session-start",
    "pre-compact": "its transcript_path is the session to ingest (`causantic ingest FILE` ingests one by hand)",
    "session-end": "its transcript_path is the session to ingest (`causantic ingest FILE` ingests one by hand)",
    "user-prompt-submit": "its prompt and cwd say what to look for (`causantic recall TEXT` does it by hand)",
}


def _run_by_hand(name: str) -> None:
    """Nothing on stdin: Claude Code always sends its event, so a person is trying the hook. Say so on
    stderr and record nothing: a 'failed' run (no transcript_path) stayed on the dashboard's overview
    until Claude Code next ran the hook."""
    log(f"{name}: nothing on stdin (run by hand); did nothing, recorded nothing")
    sys.stderr.write(
        f"causantic hook {name}: nothing on stdin, so nothing was done (`causantic hook status` still shows "
        f"Claude Code's last run). Claude Code runs this hook with its event as JSON on stdin; {BY_HAND[name]}.\n"
    )


# A handler returns (outcome, project) to record, or None when it recorded its run itself.
HANDLERS: dict[str, Callable[[str, HookEvent, float], tuple[str, str | None] | None]] = {
    "session-start": session_start,
    "pre-compact": ingest_hook,
    "session-end": ingest_hook,
    "user-prompt-submit": user_prompt_submit,
}


def run_hook(name: str, stdin_text: str | None = None) -> int:
    """Run hook ``name`` on the stdin JSON (read from stdin when not given); always returns 0."""
    started = time.perf_counter()
    write_waits.named(f"Claude Code's {name} hook")  # named to a command that waits for its writes
    event = HookEvent()
    try:
        text = read_stdin() if stdin_text is None else stdin_text
        if not text.strip():
            _run_by_hand(name)
            return 0
        event = parse_event(text)
        if not event.parsed and HANDLERS[name] is not ingest_hook:  # which logs it, with why it did nothing
            log(f"{name}: stdin held no JSON object; running with an empty event")
        done = HANDLERS[name](name, event, started)
        if done is not None:
            outcome, project = done
            trial = _health_check(event)
            record(
                name,
                success=True,
                started=started,
                outcome=f"{HEALTH_CHECK_OUTCOME}: {outcome}" if trial else outcome,
                project=project,
                session_id=None if trial else event.session_id,
            )
    except BaseException as exc:  # fail open: no error may reach Claude Code
        _record_failure(name, name, started, None if _health_check(event) else event.session_id, exc)
    return 0


def _health_check(event: HookEvent) -> bool:
    """Whether ``event`` is `causantic init`'s trial run (:data:`~causantic.runs.HEALTH_CHECK_SESSION`),
    not a session of Claude Code's."""
    return event.session_id.startswith(HEALTH_CHECK_SESSION)


def run_worker(hook: str, event_json: str) -> int:
    """The detached half of pre-compact / session-end; records the hook's final outcome."""
    from causantic.hooks.ingest import run_worker as ingest

    started = time.perf_counter()
    write_waits.named(f"Claude Code's {hook} hook")  # named to a command that waits for this ingest's writes
    event = parse_event(event_json)
    try:
        result = ingest(event)
        record(
            hook,
            success=result.success,
            started=started,
            outcome=result.outcome,
            project=result.project,
            session_id=event.session_id,
            details=result.details,
        )
    except BaseException as exc:
        _record_failure(hook, f"{hook} worker", started, event.session_id, exc)
    return 0


def _record_failure(hook: str, who: str, started: float, session_id: str | None, exc: BaseException) -> None:
    """Log and record a run that did not finish: skipped for a known problem, failed otherwise."""
    if isinstance(exc, HookProblem):
        log(f"{who}: {exc}")
        outcome, error = "skipped", str(exc)
    else:
        log(f"{who}: failed", error=exc)
        outcome, error = "failed", f"{type(exc).__name__}: {exc}"
    record(hook, success=False, started=started, outcome=outcome, error=error, session_id=session_id)


def _serve() -> int:
    """The warm process; it runs detached, so whatever goes wrong is logged and it exits 0."""
    from causantic.config_cache import cached_config
    from causantic.hooks.warm import serve

    try:
        return serve(cached_config(None, ("prompt_memory",)).section("prompt_memory").warm_minutes)
    except BaseException as exc:
        log(f"{SERVER}: stopped", error=exc)
        return 0


def main(argv: list[str]) -> int:
    """``python -m causantic.hooks <hook>``, the fast path Claude Code's settings call."""
    if len(argv) == 3 and argv[0] == WORKER:
        return run_worker(argv[1], argv[2])
    if argv == [SERVER]:
        return _serve()
    if len(argv) != 1 or argv[0] not in HOOKS:
        sys.stderr.write(f"usage: python -m causantic.hooks {{{','.join(HOOKS)}}} < hook-input.json\n")
        return 0
    return run_hook(argv[0])
