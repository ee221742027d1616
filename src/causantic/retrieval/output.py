"""One JSON shape per retrieval answer, shared by ``--json`` and the MCP tools' structured output
(search, recall/predict, reconstruct and the sessions they list).

Pydantic models (so the MCP server publishes them as output schemas) built from the retrieval
results. A chunk carries a short ``preview``; ``content`` (the whole text) is filled where the
caller wants it (the CLI's ``--json``), and left out where the text is already sent beside it (MCP).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from causantic.retrieval.episodes import EpisodeAnswer
from causantic.retrieval.listing import SessionSummary
from causantic.retrieval.reconstruct import Reconstruction
from causantic.retrieval.search import SearchResult
from causantic.store.records import StoredChunk

PREVIEW_CHARS = 160


class ChunkOut(BaseModel):
    id: str
    project: str
    session_id: str
    source: str = Field(description="The coding agent whose session it is: claude-code, codex or gemini.")
    agent: str
    user: str | None = Field(None, description="Team memory: the member it came from; null in local memory.")
    date: str = Field(description="When the chunk's turn started, ISO 8601 UTC.")
    relevance: float | None = Field(None, description="Calibrated relevance to the query, 0..1.")
    is_hit: bool = Field(True, description="A search hit, rather than context around one (episodes).")
    tokens: int
    preview: str
    content: str | None = None


class SearchOut(BaseModel):
    query: str
    mode: str = Field(description="What ran: hybrid, keyword-only or vector-only.")
    tokens: int
    notes: list[str]
    nothing_relevant: bool = Field(description="True when no hit cleared the relevance floor.")
    hits: list[ChunkOut]


class SessionInfo(BaseModel):
    session_id: str
    source: str = Field(description="The coding agent of the session: claude-code, codex or gemini.")
    started_at: str
    ended_at: str
    chunks: int
    tokens: int
    agents: list[str]
    title: str = Field(description="The session's first real prompt (or a fallback when none was recorded).")


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


class EpisodeOut(BaseModel):
    project: str
    session_id: str
    start: str
    end: str
    relevance: float = Field(description="The best hit's calibrated relevance, 0..1.")
    tokens: int
    chunks: list[ChunkOut]


class EpisodicOut(BaseModel):
    kind: str = Field(description="recall (what led to it) or predict (what came next).")
    query: str
    mode: str = Field(description="episodes (around the best hits) or chain (the seeds' chain walk).")
    tokens: int
    notes: list[str]
    nothing_relevant: bool = Field(description="True when nothing in memory cleared the relevance floor.")
    episodes: list[EpisodeOut] = Field(description="In time order; their chunks too.")


def chunk_out(chunk: StoredChunk, relevance: float | None, *, is_hit: bool = True, content: bool = False) -> ChunkOut:
    return ChunkOut(
        id=chunk.id,
        project=chunk.project,
        session_id=chunk.session_id,
        source=chunk.source,
        agent=chunk.agent,
        user=chunk.user,
        date=chunk.start_time,
        relevance=None if relevance is None else round(relevance, 4),
        is_hit=is_hit,
        tokens=chunk.approx_tokens,
        preview=" ".join(chunk.content.split())[:PREVIEW_CHARS],
        content=chunk.content if content else None,
    )


def search_out(query: str, result: SearchResult, *, content: bool = False) -> SearchOut:
    return SearchOut(
        query=query,
        mode=result.mode,
        tokens=result.tokens,
        notes=list(result.notes),
        nothing_relevant=result.nothing_relevant,
        hits=[chunk_out(h.chunk, r, content=content) for h, r in zip(result.hits, result.shown_relevance, strict=True)],
    )


def episodic_out(query: str, answer: EpisodeAnswer, *, content: bool = False) -> EpisodicOut:
    episodes = [
        EpisodeOut(
            project=e.chunks[0].chunk.project,
            session_id=e.chunks[0].chunk.session_id,
            start=e.start,
            end=e.chunks[-1].chunk.end_time,
            relevance=round(e.relevance, 4),
            tokens=e.tokens,
            chunks=[chunk_out(c.chunk, c.relevance, is_hit=c.is_hit, content=content) for c in e.chunks],
        )
        for e in answer.episodes
    ]
    return EpisodicOut(
        kind=answer.kind,
        query=query,
        mode=answer.mode,
        tokens=answer.tokens,
        notes=list(answer.notes),
        nothing_relevant=answer.nothing_relevant,
        episodes=episodes,
    )


def session_out(session: SessionSummary) -> SessionInfo:
    return SessionInfo(
        session_id=session.session_id,
        source=session.source,
        started_at=session.started_at,
        ended_at=session.ended_at,
        chunks=session.chunks,
        tokens=session.tokens,
        agents=list(session.agents),
        title=session.title,
    )


def reconstruction_out(result: Reconstruction, *, content: bool = False) -> ReconstructOutput:
    return ReconstructOutput(
        project=result.project,
        mode=result.mode,
        view=result.view,
        page=result.page,
        pages=result.pages,
        earlier=result.earlier,
        later=result.later,
        tokens=result.tokens,
        truncated=result.truncated,
        split_sessions=list(result.split),
        sessions=[session_out(s) for s in result.sessions],
        chunks=[chunk_out(c, None, content=content) for c in result.chunks],
    )
