"""Frozen row values passed to and returned by the stores."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


def iso(dt: datetime) -> str:
    """Fixed-width UTC ISO 8601 text, so that times sort correctly as strings in SQL."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """A chunk as ingestion produces it; the project is attached when its session is saved."""

    id: str
    session_id: str
    agent: str  # "main" or the agent's name
    agent_id: str | None
    team_name: str | None
    turn_index: int
    part: int
    start_time: str
    end_time: str
    content: str
    search_terms: str
    content_hash: str
    approx_tokens: int
    tool_use_count: int
    code_block_count: int
    has_thinking: bool
    message_uuids: tuple[str, ...]
    source: str = "claude-code"  # the coding agent that wrote the transcript: claude-code, codex, gemini


@dataclass(frozen=True, slots=True)
class EdgeRecord:
    source: str
    target: str
    reference_type: str
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class FileMark:
    """What an ingested file looked like, so an unchanged file is skipped next time."""

    path: str
    size: int
    mtime_ns: int
    skipped_lines: int


@dataclass(frozen=True, slots=True)
class Project:
    id: int
    path: str
    name: str


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk read back with what retrieval and display need."""

    id: str
    session_id: str
    project_id: int
    project: str  # display name
    agent: str
    turn_index: int
    part: int
    start_time: str
    end_time: str
    content: str
    content_hash: str
    approx_tokens: int
    message_uuids: tuple[str, ...]
    source: str = "claude-code"
