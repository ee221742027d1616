"""Structured output of the MCP tools (pydantic, so each tool publishes an output schema).

The model reads a tool's text content; these values ride along as ``structuredContent`` for
clients that want data. They carry identifiers, times and scores plus a short preview of each
chunk, not the whole text again, so an answer's size stays close to its token budget.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from causantic.retrieval.output import ChunkOut


class ReconstructOutput(BaseModel):
    project: str
    mode: str = Field(description="timeline, time-range, session or previous-session.")
    view: str = Field(description="'timeline' (one entry per session, no chunks) or 'text' (the chunks).")
    page: int = Field(description="1 is the part nearest the kept end (the newest, unless keep_newest is off).")
    pages: int | None = Field(description="How many pages there are, when known.")
    earlier: int = Field(description="Sessions (timeline) or chunks (text) older than this page, not shown.")
    later: int = Field(description="Sessions or chunks newer than this page, not shown.")
    tokens: int
    truncated: bool
    split_sessions: list[str] = Field(description="Text view: sessions only partly on this page.")
    sessions: list[SessionInfo] = Field(description="The sessions shown, oldest first.")
    chunks: list[ChunkOut]


class ProjectInfo(BaseModel):
    name: str
    path: str
    chunks: int
    sessions: int
    first_seen: str
    last_seen: str


class ProjectsOutput(BaseModel):
    projects: list[ProjectInfo]


class SessionInfo(BaseModel):
    session_id: str
    source: str = Field(description="The coding agent of the session: claude-code, codex or gemini.")
    started_at: str
    ended_at: str
    chunks: int
    tokens: int
    agents: list[str]
    title: str = Field(description="The session's first real prompt (or a fallback when none was recorded).")


class SessionsOutput(BaseModel):
    project: str
    total: int
    sessions: list[SessionInfo]


class StatsOutput(BaseModel):
    version: str
    chunks: int
    vectors: int | None
    edges: dict[str, int]
    sessions: int
    projects: int
    agents: int
    clusters: int
    keyword_index: str
    sources: dict[str, dict[str, int]] = Field(
        description="Sessions and chunks per coding agent: {source: {sessions, chunks}}."
    )
    projects_detail: list[ProjectInfo]


class ForgetPreview(BaseModel):
    id: str
    date: str
    similarity: float | None
    first_line: str = Field(description="The chunk's first 100 characters, on one line.")


class ForgetOutput(BaseModel):
    project: str
    dry_run: bool
    whole_project: bool = Field(description="True when no filter narrowed it: the whole project.")
    sessions: int = Field(description="Sessions the matched chunks belong to.")
    preview_sessions: list[SessionInfo] = Field(description="Whole project: its newest sessions, by title.")
    count: int = Field(description="Chunks matched by the filters.")
    deleted: int
    preview: list[ForgetPreview]


class InjectedMomentInfo(BaseModel):
    chunk_id: str
    session_id: str
    project: str
    date: str
    relevance: float
    coverage: float
    other_project: bool = False


class HookRunInfo(BaseModel):
    last_run: str
    success: bool
    duration_ms: int | None = None
    outcome: str = ""
    project: str | None = None
    session_id: str | None = None
    error: str | None = None
    details: dict[str, int] = Field(default_factory=dict)
    injected: list[InjectedMomentInfo] = Field(
        default_factory=list, description="user-prompt-submit: the past moments added to the last prompt, and why."
    )


class HookStatusOutput(BaseModel):
    hooks: dict[str, HookRunInfo]
