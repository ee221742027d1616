"""Frozen row values passed to and returned by the stores."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


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
    search_terms: str | None  # None: made by the store as it writes (a huge text's chunks: beside the writes)
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
class SavedChunks:
    """What saving a session's chunks wrote: chunks new to the store, chunks whose text changed
    (embedded again), and chunks whose text is the same under a new turn number (a prompt found
    before them, or messages before them gone, after a change of ingest's rules): rewritten only."""

    new_ids: list[str]
    updated: int
    renumbered: int


@dataclass(frozen=True, slots=True)
class FileMark:
    """What an ingested file looked like, so an unchanged file is skipped next time."""

    path: str
    size: int
    mtime_ns: int
    skipped_lines: int


STAND_IN_PREFIX = "gemini:"
STAND_IN_HEX = 16  # hex digits of the cwd's hash a stand-in's path keeps


def stand_in_project(cwd_hash: str) -> str:
    """The path of the project that stands for a cwd known only by its sha256 (Gemini CLI's
    ``projectHash``) until a session names the cwd itself, which then absorbs it
    (:func:`causantic.ingest.pipeline.write_plan`). PostgreSQL's lock of an ingest's projects makes
    it in SQL too (``PostgresStore.lock_ingest_projects``)."""
    return f"{STAND_IN_PREFIX}{cwd_hash[:STAND_IN_HEX]}"


@dataclass(frozen=True, slots=True)
class Project:
    id: int
    path: str
    name: str


@dataclass(frozen=True, slots=True)
class TextFeatures:
    """What scoring reads from a chunk's text, computed once when it is written
    (:func:`causantic.store.features.feature_values`)."""

    stems: str  # the text's word stems, sorted and space-separated
    own_stems: str | None  # the stems of its own words when listing tools printed part of it, else None
    bulk: float  # the share of the text that is bulky payload, 0..1


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
    user: str | None = None  # team memory: the member whose machine ingested it; None in local memory
    features: TextFeatures | None = None  # read by search; None when not read, or for a row written before
    # The sub-agent's own id from the transcript (None for the main agent): several sub-agents of one
    # type share ``agent`` ("general-purpose") and are told apart by this.
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class ChunkScope:
    """Which chunks a read or a deletion covers: every field set narrows it (they combine with AND).

    Values are matched literally, never as patterns: ``session_prefix="%"`` names the sessions whose
    id starts with a percent sign (none), not every session. An empty value names nothing, so it is
    refused (``ValueError``) rather than read as "no restriction": a scope never covers more than
    its arguments name. ``since`` is inclusive and ``until`` exclusive, on the chunk's start time.
    """

    project_ids: tuple[int, ...] | None = None
    session_id: str | None = None  # exactly this session
    session_prefix: str | None = None  # sessions whose id starts with these characters
    agent: str | None = None  # "main" or an agent's name
    since: datetime | None = None
    until: datetime | None = None
    member: str | None = None  # team memory: one member's chunks (local chunks are nobody's: none match)

    def __post_init__(self) -> None:
        if self.project_ids is not None and not self.project_ids:
            raise ValueError("ChunkScope.project_ids is empty: it names no project (use None for every project).")
        for name in ("session_id", "session_prefix", "agent", "member"):
            value = getattr(self, name)
            if value is not None and not value:
                raise ValueError(f"ChunkScope.{name} is empty: it names nothing (use None for no restriction).")


@dataclass(frozen=True, slots=True)
class ProjectTotals:
    """A project holding chunks, with their totals (times are ISO text)."""

    id: int
    name: str
    path: str
    chunks: int
    sessions: int
    first_seen: str
    last_seen: str
    members: tuple[tuple[str, int], ...] = ()  # team memory: (member, sessions they ingested into it), by name


@dataclass(frozen=True, slots=True)
class ProjectSessions:
    """A project with sessions, counted from the sessions alone (cheap at any size)."""

    id: int
    name: str
    path: str
    sessions: int
    first_seen: str | None
    last_seen: str | None


@dataclass(frozen=True, slots=True)
class SessionTotals:
    """One session of a project: its span, chunk and token counts, agents and stored title."""

    session_id: str
    started: str
    ended: str
    chunks: int
    tokens: int
    agents: tuple[str, ...]
    source: str
    title: str | None  # the first real prompt, recorded at ingest; None for older stores
    members: tuple[str, ...] = ()  # team memory: whose its chunks are, by name; none in local memory


@dataclass(frozen=True, slots=True)
class SessionFigures:
    """What a store holds of a group of sessions beside their chunks: the edges with both ends among
    their chunks, by reference type, and how many of their chunks hold a vector of one model."""

    edges: dict[str, int]
    vectors: int


@dataclass(frozen=True, slots=True)
class SessionEndpoints:
    """A session's first and last main-agent chunk (what cross-session edges join)."""

    session_id: str
    first_id: str
    last_id: str
    started_at: str


@dataclass(frozen=True, slots=True)
class ChunkKey:
    """Where a stored chunk sits in its session's transcript."""

    id: str
    agent_id: str | None
    turn_index: int
    part: int
    message_uuids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChunkText:
    """A chunk's text with what embedding it needs."""

    id: str
    project_id: int
    agent: str
    content: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class ClusterRecord:
    """A stored topic: its label and centroid (float32 bytes)."""

    id: int
    label: str
    centroid: bytes
    size: int
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class TopicTotals:
    """A topic with its size, time span and the projects its chunks come from."""

    id: int
    label: str
    size: int
    first_seen: str
    last_seen: str
    projects: tuple[str, ...]
    store: str | None = None  # team memory beside the local store: where the topic lives ('team', 'local')


@dataclass(frozen=True, slots=True)
class VectorRecord:
    chunk_id: str
    content_hash: str
    vector: Any  # np.ndarray (dims,), float32, unit length


@dataclass(frozen=True, slots=True)
class VectorMatch:
    chunk_id: str
    similarity: float  # cosine similarity, 1 = same direction
    vector: Any  # np.ndarray (dims,), float32, unit length


@dataclass(frozen=True, slots=True)
class VectorHealth:
    chunks: int
    vectors: int  # chunks with a vector of this model
    ann: str  # "not needed", "ready", "missing" (search scans exactly), "unavailable" (no faiss)
    ann_note: str | None = None  # "missing": why, and what makes it (else the SQLite index file's words)

    @property
    def missing(self) -> int:
        return max(0, self.chunks - self.vectors)


@dataclass(frozen=True, slots=True)
class StoreSpace:
    """What memory's files take on disk. PostgreSQL (team memory) reports its database's size as
    ``file_bytes`` and looks after its own free space (autovacuum)."""

    file_bytes: int  # the database file
    journal_bytes: int  # its write-ahead log (SQLite), 0 once checkpointed
    free_bytes: int  # pages inside the file that hold nothing (deleted rows), reused by later writes
    reclaims: bool  # whether a deletion gives its free pages back to the disk by itself

    @property
    def total(self) -> int:
        return self.file_bytes + self.journal_bytes


@dataclass(frozen=True, slots=True)
class DiskShortfall:
    """A disk without room for what rebuilding ``database`` (``VACUUM``) writes on it: each write's
    purpose, folder and bytes, and the disk's free bytes."""

    database: Path
    writes: tuple[tuple[str, Path, int], ...]
    free: int

    @property
    def needed(self) -> int:
        return sum(size for _, _, size in self.writes)
