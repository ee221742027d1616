"""Session reconstruction: replay what happened in a project, in order, within a token budget.

Modes (first that applies):
- ``session_id``: that one session;
- ``previous_session``: the session before ``current_session_id`` (how the last one ended);
- a time range: ``since``/``until``, or ``days_back`` from now;
- timeline (the project alone, optionally ``until``): the most recent history, walking back.

When everything does not fit, ``keep_newest`` (default) keeps the most recent chunks, else the
oldest; the result says it was truncated.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from causantic.config import SOURCE_NAMES
from causantic.errors import CausanticError
from causantic.ingest.chunker import approx_tokens
from causantic.retrieval.listing import resolve_project
from causantic.store.memory import MemoryStore
from causantic.store.records import StoredChunk, iso

CHUNK_OVERHEAD_TOKENS = 5
SESSION_HEADER_TOKENS = 20


@dataclass(frozen=True, slots=True)
class ReconstructRequest:
    project: str
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    days_back: float | None = None
    previous_session: bool = False
    current_session_id: str | None = None
    keep_newest: bool = True
    agent: str | None = None
    max_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class Reconstruction:
    project: str
    mode: str
    chunks: tuple[StoredChunk, ...]
    tokens: int
    truncated: bool

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(c.session_id for c in self.chunks))


def reconstruct(store: MemoryStore, request: ReconstructRequest, default_budget: int) -> Reconstruction:
    project = resolve_project(store, request.project)
    budget = request.max_tokens or default_budget
    where, params = ["c.project_id = ?"], [project.id]
    if request.agent:
        where.append("c.agent = ?")
        params.append(request.agent)
    if request.session_id:
        mode = "session"
        where.append("c.session_id LIKE ? || '%'")
        params.append(request.session_id)
    elif request.previous_session:
        mode = "previous-session"
        if not request.current_session_id:
            raise CausanticError("previous_session needs current_session_id (the session you are in now).")
        previous = _previous_session(store, project.id, request.current_session_id)
        if previous is None:
            return Reconstruction(project.name, mode, (), 0, False)
        where.append("c.session_id = ?")
        params.append(previous)
    elif request.since or request.days_back:
        mode = "time-range"
        since = request.since or datetime.now(UTC) - timedelta(days=request.days_back or 0)
        where.append("c.start_time >= ?")
        params.append(iso(since))
        if request.until:
            where.append("c.start_time < ?")
            params.append(iso(request.until))
    else:
        mode = "timeline"
        if request.until:
            where.append("c.start_time < ?")
            params.append(iso(request.until))
        newest_first = store.iter_chunks(" AND ".join(where), params,
                                         order="c.start_time DESC, c.turn_index DESC, c.part DESC")
        kept, tokens, truncated = _fill(newest_first, budget)
        kept.reverse()
        return Reconstruction(project.name, mode, tuple(kept), tokens, truncated)
    order = "c.start_time DESC, c.turn_index DESC, c.part DESC" if request.keep_newest else \
        "c.start_time, c.turn_index, c.part"
    kept, tokens, truncated = _fill(store.iter_chunks(" AND ".join(where), params, order=order), budget)
    if request.keep_newest:
        kept.reverse()
    return Reconstruction(project.name, mode, tuple(kept), tokens, truncated)


def _fill(chunks: object, budget: int) -> tuple[list[StoredChunk], int, bool]:
    kept: list[StoredChunk] = []
    used = 0
    sessions: set[str] = set()
    for chunk in chunks:  # type: ignore[attr-defined]
        cost = approx_tokens(chunk.content) + CHUNK_OVERHEAD_TOKENS
        if chunk.session_id not in sessions:
            cost += SESSION_HEADER_TOKENS
        if used + cost > budget:
            return kept, used, True
        sessions.add(chunk.session_id)
        kept.append(chunk)
        used += cost
    return kept, used, False


def _previous_session(store: MemoryStore, project_id: int, current: str) -> str | None:
    sessions = [r["session_id"] for r in store.session_summaries(project_id)]  # newest first
    if current in sessions:
        index = sessions.index(current)
        return sessions[index + 1] if index + 1 < len(sessions) else None
    return sessions[0] if sessions else None


def render_reconstruction(result: Reconstruction) -> str:
    if not result.chunks:
        return f"No session data found for project {result.project!r} in the requested range."
    lines = [f"Reconstructed {len(result.chunks)} chunks from {len(result.sessions)} session(s) "
             f"({result.tokens} tokens)" + (" [truncated to fit the token budget]" if result.truncated else "")]
    multi_agent = len({c.agent for c in result.chunks}) > 1
    session = agent = None
    for chunk in result.chunks:
        if chunk.session_id != session:
            session, agent = chunk.session_id, None
            bounds = [c for c in result.chunks if c.session_id == session]
            lines.append(f"\n=== Session {session[:8]} · {SOURCE_NAMES.get(chunk.source, chunk.source)} "
                         f"({bounds[0].start_time[:16].replace('T', ' ')} – "
                         f"{bounds[-1].end_time[:16].replace('T', ' ')}) ===")
        if multi_agent and chunk.agent != agent:
            agent = chunk.agent
            lines.append(f"--- Agent: {agent} ---")
        lines.append(chunk.content)
        lines.append("---")
    return "\n".join(lines)

