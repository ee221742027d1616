"""One session group's chunks and edges, computed without touching any store.

Planning is pure and picklable, so batch ingest runs it in worker processes (both cores) while the
parent process does the writing. Everything a plan needs from configuration is in
:class:`PlanSettings`.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from causantic.config import Config
from causantic.ingest.chunker import ChunkDraft, approx_tokens, chunk_id, chunk_turn, content_hash
from causantic.ingest.edges import Gating, make_gating, within_chain_edges
from causantic.ingest.redact import Redactor, make_redactor
from causantic.ingest.render import RenderedTurn, render_turn
from causantic.ingest.subagents import Spawn, find_spawns, link_subagents
from causantic.store.fts import identifier_terms
from causantic.store.records import ChunkRecord, EdgeRecord, FileMark, iso
from causantic.transcripts import BROKEN_LINE_REASONS
from causantic.transcripts.discovery import SessionFiles, read_session
from causantic.transcripts.model import SessionTranscripts, Transcript
from causantic.transcripts.projects import canonical_project_path
from causantic.transcripts.turns import assemble_turns

MAIN_AGENT = "main"


@dataclass(frozen=True, slots=True)
class PlanSettings:
    max_tokens: int
    tool_result_max_chars: int
    tool_input_max_chars: int
    gating: Gating
    redactor: Redactor

    @classmethod
    def from_config(cls, config: Config) -> PlanSettings:
        g = config.graph
        return cls(
            max_tokens=config.chunking.max_tokens,
            tool_result_max_chars=config.chunking.tool_result_max_chars,
            tool_input_max_chars=config.chunking.tool_input_max_chars,
            gating=make_gating(g.time_gap_minutes, g.topic_shift_gating, g.topic_shift_patterns),
            redactor=make_redactor(config.redaction.enabled, config.redaction.extra_patterns),
        )


@dataclass(frozen=True, slots=True)
class SessionPlan:
    session_id: str
    cwd: str  # the cwd as recorded (or the folder, when no record names one)
    project_path: str  # canonical project identity
    chunks: tuple[ChunkRecord, ...]
    edges: tuple[EdgeRecord, ...]
    subagent_streams: int
    linked_subagents: int


@dataclass(frozen=True, slots=True)
class GroupPlan:
    files: tuple[FileMark, ...]
    sessions: tuple[SessionPlan, ...]
    skipped: Counter[str] = field(default_factory=Counter)
    bytes_read: int = 0


@dataclass(slots=True)
class _Stream:
    agent: str
    agent_id: str | None
    turns: list[RenderedTurn]
    drafts: list[ChunkDraft]
    records: list[ChunkRecord]


def plan_group(files: SessionFiles, settings: PlanSettings) -> GroupPlan:
    paths = group_paths(files)
    stats = {p: os.stat(p) for p in paths if p.exists()}
    sessions, report = read_session(files)
    marks = tuple(
        FileMark(str(p), st.st_size, st.st_mtime_ns, 0) for p, st in stats.items()
    )
    broken = sum(n for reason, n in report.counts.items() if reason in BROKEN_LINE_REASONS)
    if marks and broken:
        first = marks[0]
        marks = (FileMark(first.path, first.size, first.mtime_ns, broken), *marks[1:])
    fallback_time = datetime.fromtimestamp(max((s.st_mtime for s in stats.values()), default=0), UTC)
    plans = tuple(
        plan for session in sessions
        if (plan := plan_session(session, settings, fallback_time)) is not None
    )
    return GroupPlan(marks, plans, report.counts, sum(st.st_size for st in stats.values()))


def plan_session(session: SessionTranscripts, settings: PlanSettings, fallback_time: datetime) -> SessionPlan | None:
    streams: list[_Stream] = []
    spawns: list[Spawn] = []
    links: dict[str, Spawn] = {}
    if session.main is not None:
        streams.append(_plan_stream(session.main, MAIN_AGENT, None, session.session_id, settings, fallback_time))
        spawns = find_spawns(session.main)
        links = link_subagents(session.main, spawns, list(session.subagents))
    for sub in session.subagents:
        spawn = links.get(sub.agent_id or "")
        name = _agent_name(sub, spawn)
        streams.append(_plan_stream(sub, name, sub.agent_id, session.session_id, settings, fallback_time))
    streams = [s for s in streams if s.records]
    if not streams:
        return None
    edges: list[EdgeRecord] = []
    for stream in streams:
        prompts = {t.turn_index: t.prompt for t in stream.turns}
        edges += within_chain_edges(stream.records, prompts, settings.gating)
    main = streams[0] if streams[0].agent == MAIN_AGENT else None
    linked = 0
    if main is not None:
        for stream in streams[1:]:
            spawn = links.get(stream.agent_id or "")
            if spawn is not None:
                edges += _brief_debrief(main, stream, spawn)
                linked += 1
    cwd = session.cwd or str(session.files[0].parent)
    project_path = canonical_project_path(session.cwd) if session.cwd else str(session.files[0].parent)
    return SessionPlan(
        session_id=session.session_id,
        cwd=cwd,
        project_path=project_path,
        chunks=tuple(r for s in streams for r in s.records),
        edges=tuple(edges),
        subagent_streams=len(session.subagents),
        linked_subagents=linked,
    )


def _agent_name(sub: Transcript, spawn: Spawn | None) -> str:
    if spawn is not None:
        for key in ("name", "subagent_type"):
            value = spawn.input.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return sub.agent_id or "subagent"


def _plan_stream(transcript: Transcript, agent: str, agent_id: str | None, session_id: str,
                 settings: PlanSettings, fallback_time: datetime) -> _Stream:
    turns = [
        render_turn(t, tool_result_max_chars=settings.tool_result_max_chars,
                    tool_input_max_chars=settings.tool_input_max_chars, redact=settings.redactor)
        for t in assemble_turns(transcript)
    ]
    drafts: list[ChunkDraft] = []
    records: list[ChunkRecord] = []
    agent_key = agent_id or MAIN_AGENT
    last_time = fallback_time
    for turn in turns:
        for draft in chunk_turn(turn, settings.max_tokens):
            times = [s.timestamp for s in draft.sections if s.timestamp is not None]
            start = min(times) if times else last_time
            end = max(times) if times else start
            last_time = end
            uuids = tuple(dict.fromkeys(s.message_uuid for s in draft.sections))
            drafts.append(draft)
            records.append(ChunkRecord(
                id=chunk_id(session_id, agent_key, turn.anchor, draft.part),
                session_id=session_id,
                agent=agent,
                agent_id=agent_id,
                team_name=None,
                turn_index=turn.turn_index,
                part=draft.part,
                start_time=iso(start),
                end_time=iso(end),
                content=draft.text,
                search_terms=identifier_terms(draft.text),
                content_hash=content_hash(draft.text),
                approx_tokens=approx_tokens(draft.text),
                tool_use_count=sum(1 for s in draft.sections if s.tool_call_id),
                code_block_count=draft.text.count("```") // 2,
                has_thinking=turn.has_thinking and draft.part == 0,
                message_uuids=uuids,
            ))
    return _Stream(agent, agent_id, turns, drafts, records)


def _brief_debrief(main: _Stream, sub: _Stream, spawn: Spawn) -> list[EdgeRecord]:
    spawn_index = next(
        (i for i, d in enumerate(main.drafts) if any(s.tool_call_id == spawn.call_id for s in d.sections)), None
    )
    if spawn_index is None:
        return []
    edges = [EdgeRecord(main.records[spawn_index].id, sub.records[0].id, "brief")]
    return_index = next(
        (i for i, d in enumerate(main.drafts) if any(s.tool_result_id == spawn.call_id for s in d.sections)), None
    )
    if return_index is None and spawn_index + 1 < len(main.records):
        return_index = spawn_index + 1
    if return_index is not None:
        edges.append(EdgeRecord(sub.records[-1].id, main.records[return_index].id, "debrief"))
    return edges


def group_paths(files: SessionFiles) -> list[Path]:
    """Every file of a session group: the main transcript (when present) and its sub-agent files."""
    return [p for p in (files.main, *files.subagents) if p is not None]
