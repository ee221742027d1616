"""Which session an agent is in now, for ``previous_session`` ("where did I leave off?").

Claude Code gives its MCP server the session id it started in (``CLAUDE_CODE_SESSION_ID``, since
2.1.154) and never updates it: after ``/clear`` the server still holds the cleared session's id. Its
SessionStart hook, which runs again on ``/clear`` with the new id, therefore notes the id under the
process ids of the hook's parent and grandparent (Claude Code itself, or the shell it ran the hook
in) in ``<home>/run/sessions/``; the server, a child of the same Claude Code, reads the note under its
own parent's id. A note written after the server started is newer than its environment.

Codex CLI passes its thread id (``CODEX_THREAD_ID``) to shell commands but not to MCP servers
(openai/codex#19937), and Gemini CLI passes none: there the agent names the session, or the newest
stored session of the project is taken as the previous one. Only this module reads these variables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from causantic.files import atomic_write, prune_older_than, secure_dir
from causantic.home import causantic_home

SESSION_VARIABLES = ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID")  # Claude Code's, and Codex's (shells only)
_SAFE = re.compile(r"[A-Za-z0-9._-]{1,200}")
_KEPT_DAYS = 30  # notes of Claude Code processes long gone are removed when a hook writes one


def note_session(session_id: str) -> None:
    """Note ``session_id`` as the current session of the Claude Code process running this hook; never raises."""
    if not _SAFE.fullmatch(session_id):
        return
    try:
        folder = secure_dir(_notes())
        for pid in _ancestors():
            atomic_write(folder / str(pid), session_id + "\n")
        prune_older_than(folder, _KEPT_DAYS, "*")
    except OSError:
        pass  # previous_session falls back to the server's environment


def current_session(environ: Mapping[str, str], started: float) -> str | None:
    """The session this process's agent is in: the note its Claude Code's SessionStart hook wrote after
    ``started`` (a ``/clear`` since), else the environment's, else None. An older note is never taken:
    its process id may since have gone to another process (a Codex CLI, whose server reads it too)."""
    note = _notes() / str(os.getppid())
    try:
        noted, written = note.read_text(encoding="utf-8").strip(), note.stat().st_mtime
    except OSError:
        noted, written = "", 0.0
    from_env = next((environ[v].strip() for v in SESSION_VARIABLES if environ.get(v, "").strip()), None)
    return noted if noted and written > started else from_env


def _notes() -> Path:
    return causantic_home() / "run" / "sessions"


def _ancestors() -> list[int]:
    """The parent's process id and the grandparent's (from /proc, or ``ps`` where there is none)."""
    parent = os.getppid()
    try:
        stat = Path(f"/proc/{parent}/stat").read_text(encoding="utf-8")
        grandparent = int(stat.rsplit(")", 1)[1].split()[1])
    except OSError:  # macOS: no /proc
        import subprocess

        try:
            asked = subprocess.run(["ps", "-o", "ppid=", "-p", str(parent)], capture_output=True, text=True, timeout=2)
            grandparent = int(asked.stdout.strip() or 0)
        except (OSError, ValueError, subprocess.SubprocessError):
            grandparent = 0
    except (ValueError, IndexError):
        grandparent = 0
    return [parent, grandparent] if grandparent > 1 else [parent]
