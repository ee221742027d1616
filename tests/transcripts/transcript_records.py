"""Builders for small synthetic Claude Code records, shared by the transcript tests."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

_ids = itertools.count(1)


def _next_uuid() -> str:
    return f"00000000-0000-4000-8000-{next(_ids):012d}"


def user(
    content: str | list[dict[str, Any]],
    *,
    uuid: str | None = None,
    parent: str | None = None,
    session: str = "s1",
    ts: str | None = "2026-01-15T10:00:00.000Z",
    **extra: Any,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": "user",
        "message": {"role": "user", "content": content},
        "uuid": uuid or _next_uuid(),
        "sessionId": session,
        "cwd": "/work/proj",
    }
    if ts is not None:
        record["timestamp"] = ts
    record.update(extra)
    return record


def assistant(
    content: list[dict[str, Any]],
    *,
    message_id: str | None = None,
    uuid: str | None = None,
    parent: str | None = None,
    session: str = "s1",
    ts: str | None = "2026-01-15T10:00:05.000Z",
    **extra: Any,
) -> dict[str, Any]:
    uuid = uuid or _next_uuid()
    record: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": "assistant",
        "message": {"id": message_id or f"msg_{uuid[-6:]}", "role": "assistant", "content": content},
        "uuid": uuid,
        "sessionId": session,
        "cwd": "/work/proj",
    }
    if ts is not None:
        record["timestamp"] = ts
    record.update(extra)
    return record


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(tool_id: str, name: str = "Bash", **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def tool_result(tool_id: str, content: Any, *, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}


def line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(line(r) + b"\n" for r in records)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
