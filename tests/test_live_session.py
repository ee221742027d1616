"""Which session an agent is in now: the SessionStart hook's note against the server's environment."""

from __future__ import annotations

import time
from pathlib import Path

from causantic.live_session import current_session, note_session


def test_a_note_written_after_the_server_started_wins_over_its_stale_environment(causantic_home: Path) -> None:
    """After /clear the server still holds the cleared session's id; the hook's note has the new one."""
    environ = {"CLAUDE_CODE_SESSION_ID": "cleared-session"}
    started = time.time() - 60
    assert current_session(environ, started) == "cleared-session"  # no note yet
    note_session("new-session")
    assert current_session(environ, started) == "new-session"
    assert current_session(environ, time.time() + 60) == "cleared-session"  # a note older than the server
    assert current_session({}, time.time() + 60) is None  # nor taken when nothing else says


def test_codex_shells_thread_id_names_the_session_and_an_unsafe_id_is_never_noted(causantic_home: Path) -> None:
    assert current_session({"CODEX_THREAD_ID": " 019dba93-8214 "}, time.time()) == "019dba93-8214"
    note_session("../../etc/passwd")
    assert not (causantic_home / "run" / "sessions").exists()
