"""Chunk rows read back as :class:`StoredChunk`: the one column list and row mapping, shared by
:class:`~causantic.store.memory.MemoryStore`, :class:`~causantic.store.postgres.store.PostgresStore`
and the prompt hook's light :class:`~causantic.store.prompt_index.PromptIndex` (which must not
import the first one's chain)."""

from __future__ import annotations

import json
from typing import Any

from causantic.store.records import StoredChunk, TextFeatures

# Over ``chunks c JOIN projects p ON p.id = c.project_id``.
CHUNK_COLUMNS = (
    "c.id, c.session_id, c.project_id, p.name AS project, c.agent, c.turn_index, c.part, c.start_time,"
    " c.end_time, c.content, c.content_hash, c.approx_tokens, c.message_uuids, c.source, c.agent_id"
)

# The text features search scores with (:mod:`causantic.store.features`), read after CHUNK_COLUMNS
# by the reads that feed search only: NULL in a row written before the store kept them.
FEATURE_COLUMNS = ", c.stems, c.own_stems, c.bulk"


def stored_chunk(row: Any) -> StoredChunk:
    """A row of :data:`CHUNK_COLUMNS` (``sqlite3.Row`` or the PostgreSQL store's ``Row``); with a
    ``member`` column too (team memory), that is the chunk's user; with :data:`FEATURE_COLUMNS`,
    its text features."""
    keys = row.keys()
    return StoredChunk(
        id=row["id"],
        session_id=row["session_id"],
        project_id=row["project_id"],
        project=row["project"],
        agent=row["agent"],
        turn_index=row["turn_index"],
        part=row["part"],
        start_time=row["start_time"],
        end_time=row["end_time"],
        content=row["content"],
        content_hash=row["content_hash"],
        approx_tokens=row["approx_tokens"],
        message_uuids=tuple(json.loads(row["message_uuids"])),
        source=row["source"],
        agent_id=row["agent_id"],
        user=row["member"] if "member" in keys else None,
        features=TextFeatures(row["stems"], row["own_stems"], row["bulk"])
        if "stems" in keys and row["stems"] is not None
        else None,
    )
