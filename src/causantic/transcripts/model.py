"""Typed values the transcript reader produces; nothing below this layer sees raw JSON.

A transcript file becomes one or more :class:`Transcript` values (one per session id and agent),
each a sequence of :class:`Message` values in conversation order. :class:`SessionTranscripts`
bundles a session's main stream with its sub-agent streams, wherever they were found (inline
sidechains, flat ``agent-*.jsonl`` files, or ``<session>/subagents/``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from causantic.sources import Source
from causantic.transcripts.longvalue import LongText


@dataclass(frozen=True, slots=True)
class TextBlock:
    """A message's text. A text of many megabytes on one line (a pasted bundle) stays in its file:
    ``long`` says where, and ``text`` holds only its head (what prompts and titles read); whatever
    needs all of it reads ``long.windows()`` (rendering does)."""

    text: str
    long: LongText | None = None


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """Model reasoning. Kept for display, never indexed or embedded (seed 001: +0.063 AUC)."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's output. An output of many megabytes on one line (a ``cat`` of a log, a huge diff)
    stays in its file like a long :class:`TextBlock`: ``long`` says where, ``text`` holds only its
    head and ``tail`` its end; whatever needs all of it reads ``long.windows()``."""

    tool_use_id: str
    text: str  # string content, or the text of a block list (images become "[image]")
    is_error: bool = False
    long: LongText | None = None
    tail: str = ""  # the end of a long output (its last ``TAIL_CHARS`` characters)

    def whole(self) -> str:
        """All of the output, decoded from the file when it was left there."""
        return self.text if self.long is None else "".join(self.long.windows())


Block = TextBlock | ThinkingBlock | ToolCall | ToolResult


@dataclass(frozen=True, slots=True)
class Message:
    uuid: str
    role: Literal["user", "assistant"]
    timestamp: datetime | None  # timezone-aware UTC
    blocks: tuple[Block, ...]
    session_id: str
    line_no: int  # 1-based line of the (first) record in its file
    agent_id: str | None = None  # the sub-agent stream's id (the record's agentId, or a synthetic one)
    is_sidechain: bool = False
    is_meta: bool = False  # system-injected user text (caveats, command output), not a prompt
    tool_use_result: Any = None  # the record's `toolUseResult`, kept for agent/team linking
    parent_uuid: str | None = None  # the record's `parentUuid` (Claude Code): which stream a record continues
    rewound: str | None = None  # the abandoned branch it is on: the user went back past it (:mod:`rewinds`)


@dataclass(frozen=True, slots=True)
class AgentProgress:
    """A `progress` record of type agent_progress: links a spawning tool call to an agent id."""

    agent_id: str
    parent_tool_use_id: str
    timestamp: datetime | None


@dataclass(frozen=True, slots=True)
class AgentMeta:
    """What a sub-agent's companion ``agent-<id>.meta.json`` file says (Claude Code 2.1.x).

    Every field is optional: real files hold ``agentType`` and ``description``, sometimes
    ``worktreePath``; some also record the spawning tool call (``toolUseId``).
    """

    agent_type: str | None = None
    description: str | None = None  # the spawning call's description, e.g. "Round 2: alice comparison"
    tool_use_id: str | None = None  # id of the tool_use that spawned the agent, when recorded
    worktree_path: str | None = None


@dataclass(frozen=True, slots=True)
class Transcript:
    """One conversation stream: a session's main agent, or one sub-agent of it."""

    path: Path
    session_id: str
    agent_id: str | None  # None for the main stream
    messages: tuple[Message, ...]
    cwd: str | None = None
    progress: tuple[AgentProgress, ...] = ()
    # Every other folder its records name, in the order first named (a `cd` into another project
    # mid-session): team memory shares a session only when each of its folders is shared.
    later_cwds: tuple[str, ...] = ()
    meta: AgentMeta | None = None  # from the sub-agent's .meta.json companion, when there is one
    source: Source = "claude-code"


@dataclass(slots=True)
class SkipReport:
    """Lines the reader passed over, counted by reason, and the files read in no format it knows
    (another agent's transcripts, any other JSON lines). Never fatal."""

    counts: Counter[str] = field(default_factory=Counter[str])
    other_format: list[Path] = field(default_factory=list[Path])

    def add(self, reason: str, n: int = 1) -> None:
        self.counts[reason] += n

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def merge(self, other: SkipReport) -> None:
        self.counts.update(other.counts)
        self.other_format += other.other_format


@dataclass(frozen=True, slots=True)
class SessionTranscripts:
    """A session's main stream with the sub-agent streams found for it."""

    session_id: str
    main: Transcript | None  # None when only sub-agent files of the session are present
    subagents: tuple[Transcript, ...]
    cwd: str | None  # first cwd seen in the session's records
    files: tuple[Path, ...]  # every file that contributed
    source: Source = "claude-code"
    # Gemini CLI records no cwd, only sha256(cwd): the project is matched by it when ingested.
    project_hash: str | None = None
    # A user's fork of another session (Codex CLI ``/fork``): (that session's id, the uuid of its
    # last message the fork copied), when the fork was read with it; the copy itself is left out.
    forked_from: tuple[str, str] | None = None
    copied: frozenset[str] = frozenset()  # uuids of the fork's messages left out as that copy


@dataclass(frozen=True, slots=True)
class Turn:
    """A user prompt and everything up to the next prompt, in record order.

    `messages` holds the prompt message (when there is one), assistant messages and the user
    messages that carry tool results. Turn 0 may have no prompt (a transcript that starts with
    assistant output).
    """

    index: int
    prompt: str
    messages: tuple[Message, ...]
    start_time: datetime | None
    end_time: datetime | None
