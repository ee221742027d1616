"""Structured output of the MCP tools (pydantic, so each tool publishes an output schema).

The model reads a tool's text content; these values ride along as ``structuredContent`` for
clients that want data. They carry identifiers, times and scores plus a short preview of each
chunk, not the whole text again, so an answer's size stays close to its token budget.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from causantic.retrieval.output import SessionInfo


class ProjectInfo(BaseModel):
    name: str
    path: str
    chunks: int
    sessions: int
    first_seen: str
    last_seen: str


class ProjectsOutput(BaseModel):
    projects: list[ProjectInfo]


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
    margin: float | None = None  # the lead session's BM25 over the next session's (None: no other matched)


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
