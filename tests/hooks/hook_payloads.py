"""Hook payloads and the example project moved to a real folder, for the hook tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from process_support import EXAMPLES

ACME = "/home/dev/acme-shop"  # the example sessions' cwd (it need not exist on this machine)
LAST_SESSION = "4005b823-fa0d-5890-9dc8-e686765e4267"


def start_payload(session_id: str, cwd: str = ACME, source: str = "startup") -> dict[str, Any]:
    return {
        "session_id": session_id,
        "transcript_path": f"/nowhere/{session_id}.jsonl",
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": source,
    }


def ingest_payload(transcript: Path, hook_event_name: str, cwd: str = ACME) -> dict[str, Any]:
    return {
        "session_id": transcript.stem,
        "transcript_path": str(transcript),
        "cwd": cwd,
        "hook_event_name": hook_event_name,
        "trigger": "auto",
        "reason": "prompt_input_exit",
    }


def relocated_examples(user_home: Path, project: Path) -> Path:
    """The example sessions under ``user_home/.claude/projects/``, recorded as if run in ``project``
    (a real git checkout); returns their project folder."""
    (project / ".git").mkdir(parents=True, exist_ok=True)
    folder = user_home / ".claude" / "projects" / str(project).replace("/", "-")
    for source in EXAMPLES.rglob("*.jsonl"):
        target = folder / source.relative_to(EXAMPLES / "-home-dev-acme-shop")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text(encoding="utf-8").replace(ACME, str(project)), encoding="utf-8")
    return folder
