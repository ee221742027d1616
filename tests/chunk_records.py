"""Chunk records for tests that write to a store directly, without a transcript.

One place knows every field :class:`ChunkRecord` needs; a test names only the fields it is about
(``chunk_record(3, content="…", session_id="s2")``), so a new field is added here once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from causantic.store.records import ChunkRecord

TIME = "2026-01-01T00:00:00.000Z"


def chunk_record(i: int, **fields: Any) -> ChunkRecord:
    """Chunk ``c{i}`` of session ``s1``, main agent, turn ``i``, text ``text {i}``; ``fields`` override."""
    plain = ChunkRecord(
        id=f"c{i}",
        session_id="s1",
        agent="main",
        agent_id=None,
        team_name=None,
        turn_index=i,
        part=0,
        start_time=TIME,
        end_time=TIME,
        content=f"text {i}",
        search_terms="",
        content_hash=f"h{i}",
        approx_tokens=2,
        tool_use_count=0,
        code_block_count=0,
        has_thinking=False,
        message_uuids=(),
    )
    return replace(plain, **fields)
