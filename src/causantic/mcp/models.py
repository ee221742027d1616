"""Structured output of the MCP ``hook-status`` tool; every other tool returns one of the facade's
result models (:mod:`causantic.retrieval.output`), the same shape as the CLI's ``--json``.

The model reads a tool's text content; these values ride along as ``structuredContent`` for
clients that want data.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


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
