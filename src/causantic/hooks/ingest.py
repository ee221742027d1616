"""Pre-compact and session-end: ingest the session's transcript without making Claude Code wait.

The hook only checks that the transcript exists, starts ``python -m causantic.hooks ingest-worker``
detached (a new session, stdin and stdout on /dev/null, stderr to the hook log) and returns:
Claude Code gives all SessionEnd hooks 1.5 s by default and kills what is still attached after.

The worker ingests the transcript's project folder (the session with its sub-agent files; files
unchanged since the last ingest are skipped by size and mtime) while holding a lock named after
that folder, so two ingests of one session never overlap: a second one waits, then reads what was
appended meanwhile. It embeds new chunks under one lock for all workers, because concurrent writers
to the vector table duplicate rows and fail compactions (lance commit conflicts).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from causantic.files import file_lock, secure_dir
from causantic.home import causantic_home
from causantic.hooks.event import HookEvent, HookProblem
from causantic.logs import HOOKS_LOG, log, log_path
from causantic.wording import counted

if TYPE_CHECKING:
    from causantic.facade import Memory
    from causantic.retrieval.output import IngestOut

LOCK_WAIT_S = 600.0


@dataclass(slots=True)
class WorkerResult:
    outcome: str
    project: str | None = None
    details: dict[str, int] = field(default_factory=dict)
    success: bool = True


def spawn_worker(hook: str, event: HookEvent) -> int:
    """Start the detached worker for ``hook``; returns its pid."""
    command = [sys.executable, "-m", "causantic.hooks", "ingest-worker", hook, event.to_json()]
    windows = os.name == "nt"
    flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP if windows else 0  # type: ignore[attr-defined,unused-ignore]
    with _log_stream() as stderr:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            close_fds=True,
            start_new_session=not windows,
            creationflags=flags,
            cwd=event.cwd if os.path.isdir(event.cwd) else None,
        )
    return process.pid


def run_worker(event: HookEvent) -> WorkerResult:
    """Ingest the transcript's folder, embed what is new, refresh an opted-in CLAUDE.md block."""
    from causantic.facade import Memory

    transcript = transcript_of(event)
    target = _ingest_target(transcript)
    with file_lock(ingest_lock(target), timeout=LOCK_WAIT_S) as locked:
        if not locked:
            raise HookProblem(f"another ingest of {target} held its lock for {LOCK_WAIT_S:.0f} s")
        with Memory() as memory:
            report = memory.ingest([target], embed=False, workers=1)
            if report.errors:
                first = report.errors[0]
                raise HookProblem(
                    f"{counted(len(report.errors), 'file')} could not be ingested; first: {first.path}: {first.error}"
                )
            result = WorkerResult(
                _ingested(report) + "".join(f"; {note}" for note in report.notes),
                details={
                    "files": report.files - report.files_unchanged,
                    "chunks": report.chunks_added,
                    "updated": report.chunks_updated,
                    "renumbered": report.chunks_renumbered,
                    "removed": report.chunks_removed,
                    "edges": report.edges_added.total,
                },
            )
            if memory.config.embedding.eager:
                try:
                    result.details["vectors"] = memory.embed_pending().vectors_added
                except Exception as exc:  # chunks are safe in SQLite; `causantic embed` catches up
                    log(f"embedding after ingest deferred: {exc}", error=exc)
                    result.outcome += f"; embedding deferred ({type(exc).__name__}: {exc})"
            result.project = _refresh_claude_md(memory, event)
    return result


def _ingested(report: IngestOut) -> str:
    """What the ingest did to the stored chunks, as `causantic ingest` counts them: a chunk only
    renumbered (same text under a new turn number, not embedded again) is not a changed one."""
    said = [
        f"{n:,} {what}"
        for n, what in (
            (report.chunks_updated, "changed"),
            (report.chunks_renumbered, "renumbered (text unchanged, a new turn number)"),
            (report.chunks_removed, "removed (no longer made from their transcript)"),
        )
        if n
    ]
    if not (report.chunks_added or said) and report.files and report.files_unchanged == report.files:
        return f"ingested {counted(0, 'new chunk')}: {counted(report.files, 'file')} unchanged since the last ingest"
    return ", ".join([f"ingested {counted(report.chunks_added, 'new chunk')}", *said])


def ingest_lock(target: Path) -> Path:
    """The lock a worker holds while it ingests ``target`` (a transcript's project folder, or the file)."""
    return causantic_home() / "locks" / f"ingest-{hashlib.sha256(str(target).encode()).hexdigest()[:16]}.lock"


def _refresh_claude_md(memory: Memory, event: HookEvent) -> str | None:
    """Update the CLAUDE.md block if the user opted in; return the session's project name."""
    from causantic.errors import ProjectNotFound
    from causantic.hooks.briefing import build_briefing
    from causantic.hooks.claude_md import find_claude_md, update_claude_md

    try:
        project = memory.project(event.working_dir)
    except ProjectNotFound:
        return None
    if memory.config.hooks.claude_md:
        path = find_claude_md(project.path)
        briefing = build_briefing(
            memory, event.working_dir, exclude_session=None, budget=memory.config.tokens.claude_md_budget
        )
        if path is not None and briefing is not None and update_claude_md(path, briefing.text):
            log(f"memory block updated in {path}")
    return project.name


def transcript_of(event: HookEvent) -> Path:
    """The transcript to ingest; HookProblem when stdin names none or it does not exist."""
    if not event.transcript_path:
        raise HookProblem(
            f"no transcript_path on stdin{'' if event.parsed else ' (it held no JSON object)'}; nothing to ingest"
        )
    path = Path(event.transcript_path).expanduser()
    if not _in_transcript_folder(path):
        # The path is not repeated: a hook fed /etc/shadow must not copy it into the status file.
        raise HookProblem(
            "transcript_path is not a .jsonl file under a Claude Code projects folder "
            "(~/.claude/projects or $CLAUDE_CONFIG_DIR/projects); ignored"
        )
    if not path.is_file():
        raise HookProblem(f"transcript {path} does not exist (yet); nothing to ingest")
    return path


def never_written(event: HookEvent) -> bool:
    """Whether stdin names a transcript in a Claude Code projects folder that does not exist."""
    path = Path(event.transcript_path).expanduser() if event.transcript_path else None
    return path is not None and _in_transcript_folder(path) and not path.exists()


def _in_transcript_folder(path: Path) -> bool:
    """A ``.jsonl`` file, after symlinks, inside a ``projects`` folder of a Claude configuration folder
    (``.claude``, or ``$CLAUDE_CONFIG_DIR``) wherever that lives."""
    resolved = Path(os.path.realpath(path))
    if resolved.suffix != ".jsonl":
        return False
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    configured = Path(os.path.realpath(Path(config_dir).expanduser())) if config_dir else None
    return any(
        folder.name == "projects" and (folder.parent.name == ".claude" or folder.parent == configured)
        for folder in resolved.parents
    )


def _ingest_target(transcript: Path) -> Path:
    """The project folder in Claude Code's layout (``…/projects/<project>/<id>.jsonl``), else the file."""
    return transcript.parent if transcript.parent.parent.name == "projects" else transcript


def _log_stream() -> BinaryIO:
    """The hook log, opened for appending, for the worker's stderr (else /dev/null)."""
    try:
        path = secure_dir(log_path().parent) / HOOKS_LOG
        return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
    except OSError:
        return open(os.devnull, "wb")  # closed by the caller's with-block
