"""Claude Code transcripts for tests that need sessions of their own words, written as the real
files are laid out (``<projects>/<cwd with dashes>/<session id>.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_session(folder: Path, cwd: str, session_id: str, texts: list[tuple[str, str]], day: int = 2) -> Path:
    """A Claude Code transcript of (prompt, answer) turns in ``cwd``."""
    lines = []
    parent = None
    for n, (prompt, answer) in enumerate(texts):
        stamp = f"2026-11-{day:02d}T09:{n % 60:02d}:00.000Z"
        for kind, body in (("user", prompt), ("assistant", answer)):
            uuid = f"{session_id[:8]}-0000-4000-8000-{2 * n + (kind == 'assistant'):012d}"
            content: Any = body if kind == "user" else [{"type": "text", "text": body}]
            message: dict[str, Any] = {"role": kind, "content": content}
            if kind == "assistant":
                message["id"] = f"msg_{uuid[-8:]}"
            lines.append(
                {
                    "parentUuid": parent,
                    "isSidechain": False,
                    "type": kind,
                    "cwd": cwd,
                    "sessionId": session_id,
                    "uuid": uuid,
                    "timestamp": stamp,
                    "message": message,
                }
            )
            parent = uuid
    path = folder / cwd.strip("/").replace("/", "-") / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
