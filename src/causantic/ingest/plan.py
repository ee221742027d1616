"""One session group's chunks and edges, computed without touching any store.

Planning is pure and picklable, so batch ingest runs it in worker processes (both cores) while the
parent process does the writing. Everything a plan needs from configuration is in
:class:`PlanSettings`. Turning one stream into chunks is :mod:`streams`' job; which sub-agent
streams to keep and how they link is :mod:`subagents`'; agent teams are :mod:`teams`'.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

from causantic.config import Config, GraphConfig, Source
from causantic.ingest.edges import Gating, make_gating, within_chain_edges
from causantic.ingest.redact import redactor_from
from causantic.ingest.streams import MAIN_AGENT, PlannedStream, RenderSettings, plan_stream
from causantic.ingest.subagents import (
    Link,
    agent_label,
    ambient_edges,
    brief_debrief,
    find_spawns,
    link_subagents,
    triage,
)
from causantic.ingest.teams import Team, detect_team, team_edges
from causantic.ingest.titles import session_title
from causantic.store.records import ChunkRecord, EdgeRecord, FileMark, stand_in_project
from causantic.transcripts import BROKEN_LINE_REASONS
from causantic.transcripts.discovery import SessionFiles, read_session
from causantic.transcripts.model import SessionTranscripts
from causantic.transcripts.projects import canonical_project_path, folder_project, repository_key, session_folder

# Edges that join an agent's stream to another agent's: a sub-agent counts as linked when it has one.
LINK_TYPES = frozenset({"brief", "debrief", "team-spawn", "team-report", "peer-message"})
# When graph.timeGapMinutes is 0 (never break on time), agents are still linked by timing within its default.
_DEFAULT_LINK_WINDOW = timedelta(minutes=GraphConfig.model_fields["time_gap_minutes"].default)


@dataclass(frozen=True, slots=True)
class PlanSettings:
    render: RenderSettings
    gating: Gating

    @classmethod
    def from_config(cls, config: Config) -> PlanSettings:
        g = config.graph
        return cls(
            render=RenderSettings(
                max_tokens=config.chunking.max_tokens,
                long_line_chars=config.chunking.long_line_chars,
                tool_result_max_chars=config.chunking.tool_result_max_chars,
                tool_input_max_chars=config.chunking.tool_input_max_chars,
                redactor=redactor_from(config.redaction),
            ),
            gating=make_gating(g.time_gap_minutes, g.topic_shift_gating, g.topic_shift_patterns),
        )

    @property
    def link_window(self) -> timedelta:
        """How far apart in time two agents' chunks may be and still be linked by timing alone."""
        return self.gating.time_gap or _DEFAULT_LINK_WINDOW


@dataclass(frozen=True, slots=True)
class SessionHead:
    """Who a session is and where it belongs, known before its chunks are made: what a writer
    needs to save chunks as they come (see :data:`ChunkSink`)."""

    session_id: str
    cwd: str  # the cwd as recorded (or the folder, when no record names one)
    project_path: str  # canonical project identity
    cwd_hash: str | None  # no cwd recorded, only its sha256 (Gemini CLI): matched when written
    source: Source
    # Codex CLI and Gemini CLI sub-agents are threads of their own: each was stored as a session of
    # its own when read without its parent's file (a hook's ingest of it alone, an older release).
    # Read with it, it is a stream of this session, and that session is dropped (write_plan).
    joined: tuple[str, ...] = ()
    # The repository the project path is a checkout of (transcripts.projects.repository_key), when this
    # machine has it: another member's clone of it at another path is the same project.
    repository: str | None = None
    # The other projects the session worked in (a `cd` from one into another mid-session), by their
    # canonical paths: stored under ``project_path``, and shared with the team only if all of them are.
    also_in: tuple[str, ...] = ()

    @property
    def projects(self) -> tuple[str, ...]:
        """Every project the session worked in, its own first."""
        return (self.project_path, *self.also_in)


class ChunkSink(Protocol):
    """Takes each chunk of a session as it is made (the writer in the parent process saves it); the
    plan then keeps the chunk without its text (SessionPlan.written)."""

    def begin(self, heads: Sequence[SessionHead]) -> None:
        """Every session of the group, before any chunk of it is made."""

    def __call__(self, head: SessionHead, record: ChunkRecord) -> None: ...


@dataclass(frozen=True, slots=True)
class SessionPlan:
    session_id: str
    cwd: str  # the cwd as recorded (or the folder, when no record names one)
    project_path: str  # canonical project identity
    chunks: tuple[ChunkRecord, ...]
    edges: tuple[EdgeRecord, ...]
    subagent_streams: int  # sub-agent streams ingested (stubs, warm-ups and prompt suggestions are not)
    linked_subagents: int  # of those, the ones with a brief/debrief or team edge
    skipped_subagents: Counter[str] = field(default_factory=Counter)  # by kind: stub, warm-up, prompt-suggestion
    teammates: int = 0  # sub-agent streams that are agent-team members
    team_name: str | None = None
    source: Source = "claude-code"
    cwd_hash: str | None = None  # no cwd recorded, only its sha256 (Gemini CLI): matched when written
    skipped_agent_ids: tuple[str, ...] = ()  # sub-agent streams left out (an older store may hold them)
    # The messages of those streams: only a stored chunk made of them alone is theirs to drop (a stub
    # copying one message of a stream kept whole in another file of the session leaves it be).
    skipped_messages: frozenset[str] = frozenset()
    # A Codex fork's messages left out as its copy of the session it forked (an older release kept them).
    copied_messages: frozenset[str] = frozenset()
    # (agent id, turn index, anchor) of each planned turn: its parts' ids (see chunk_id), so only the
    # trailing parts of the same turn are superseded, not those of a turn a copy starts elsewhere.
    turn_anchors: tuple[tuple[str | None, int, str], ...] = ()
    title: str | None = None  # the first real prompt of the session's main stream
    written: bool = False  # its chunks went to a ChunkSink as they were made; ``chunks`` hold no text
    joined: tuple[str, ...] = ()  # see SessionHead.joined
    repository: str | None = None  # see SessionHead.repository
    also_in: tuple[str, ...] = ()  # see SessionHead.also_in

    @property
    def head(self) -> SessionHead:
        return SessionHead(
            self.session_id,
            self.cwd,
            self.project_path,
            self.cwd_hash,
            self.source,
            joined=self.joined,
            repository=self.repository,
            also_in=self.also_in,
        )


@dataclass(frozen=True, slots=True)
class GroupPlan:
    files: tuple[FileMark, ...]
    sessions: tuple[SessionPlan, ...]
    skipped: Counter[str] = field(default_factory=Counter)
    bytes_read: int = 0
    other_format: tuple[str, ...] = ()  # files in no format the readers know: nothing of them is kept


def plan_group(files: SessionFiles, settings: PlanSettings, sink: ChunkSink | None = None) -> GroupPlan:
    """A session group's plan; with ``sink``, its chunks are handed to it as they are made."""
    paths = group_paths(files)
    stats = {p: os.stat(p) for p in paths if p.exists()}
    sessions, report = read_session(files)
    marks = tuple(FileMark(str(p), st.st_size, st.st_mtime_ns, 0) for p, st in stats.items())
    broken = sum(n for reason, n in report.counts.items() if reason in BROKEN_LINE_REASONS)
    if marks and broken:
        first = marks[0]
        marks = (FileMark(first.path, first.size, first.mtime_ns, broken), *marks[1:])
    fallback_time = datetime.fromtimestamp(max((s.st_mtime for s in stats.values()), default=0), UTC)
    if sink is not None:
        sink.begin([_head(session) for session in sessions])
    plans = _forks_linked(
        [plan for session in sessions if (plan := plan_session(session, settings, fallback_time, sink)) is not None],
        {s.session_id: s.forked_from for s in sessions if s.forked_from is not None},
    )
    return GroupPlan(
        marks, plans, report.counts, sum(st.st_size for st in stats.values()), tuple(map(str, report.other_format))
    )


def plan_session(
    session: SessionTranscripts, settings: PlanSettings, fallback_time: datetime, sink: ChunkSink | None = None
) -> SessionPlan | None:
    """A session's chunks and edges: its main stream, the sub-agent streams worth keeping (stubs,
    warm-ups and prompt suggestions are skipped, see :mod:`subagents`), every agent named, and the graph between them.

    None when the session has nothing at all; a plan without chunks only reports skipped streams.
    With ``sink``, chunks go to it as they are made, except an agent team's: peer-message edges are
    found in the chunks' text."""
    main_path = session.main.path if session.main is not None else None
    triaged = triage(session.subagents, main_path)
    subs, skipped = triaged.kept, triaged.skipped
    transcripts = [t for t in (session.main, *subs) if t is not None]
    spawns = find_spawns(transcripts)
    links = link_subagents(transcripts, spawns)
    team = detect_team(session.main, subs, spawns, links)
    render = settings.render
    head = _head(session)
    emit: Callable[[ChunkRecord], None] | None = None
    if sink is not None and team is None:
        emit = functools.partial(sink, head)
    streams: list[PlannedStream] = []
    if session.main is not None:
        streams.append(plan_stream(session.main, MAIN_AGENT, None, session.session_id, render, fallback_time, emit))
    for sub in subs:
        link = links.get(sub.agent_id or "")
        teammate = team.members.get(sub.agent_id or "") if team is not None else None
        agent = teammate or agent_label(sub, link.spawn if link is not None else None)
        team_name = team.name if team is not None and teammate is not None else None
        streams.append(plan_stream(sub, agent, team_name, session.session_id, render, fallback_time, emit))
    streams = [s for s in streams if s.records]
    if not streams and not skipped:
        return None
    edges: list[EdgeRecord] = []
    for stream in streams:
        edges += within_chain_edges(stream.records, stream.prompts, settings.gating)
    edges += _agent_edges(streams, links, team, settings.link_window)
    sub_streams = [s for s in streams if s.agent_id is not None]
    touched = {e.source for e in edges if e.reference_type in LINK_TYPES}
    touched |= {e.target for e in edges if e.reference_type in LINK_TYPES}
    return SessionPlan(
        session_id=session.session_id,
        cwd=head.cwd,
        project_path=head.project_path,
        repository=head.repository,
        also_in=head.also_in,
        chunks=tuple(r for s in streams for r in s.records),
        edges=tuple(edges),
        subagent_streams=len(sub_streams),
        linked_subagents=sum(1 for s in sub_streams if any(r.id in touched for r in s.records)),
        skipped_subagents=skipped,
        teammates=sum(1 for s in sub_streams if team is not None and s.agent_id in team.members),
        team_name=team.name if team is not None else None,
        source=session.source,
        cwd_hash=head.cwd_hash,
        skipped_agent_ids=triaged.skipped_ids,
        copied_messages=session.copied,
        skipped_messages=frozenset(
            m.uuid for sub in session.subagents if sub.agent_id in triaged.skipped_ids for m in sub.messages
        ),
        turn_anchors=tuple((s.agent_id, index, anchor) for s in streams for index, anchor in s.anchors.items()),
        title=session_title([s.transcript for s in streams], render.redactor),
        written=emit is not None,
        joined=head.joined,
    )


def _forks_linked(plans: list[SessionPlan], forked_from: dict[str, tuple[str, str]]) -> tuple[SessionPlan, ...]:
    """`plans` with a ``forked-from`` edge from the chunk of the session a fork copied that shows
    the last message it copied (else that session's last main chunk) to the fork's first chunk."""
    by_id = {plan.session_id: plan for plan in plans}
    out: list[SessionPlan] = []
    for plan in plans:
        origin = forked_from.get(plan.session_id)
        parent = by_id.get(origin[0]) if origin is not None else None
        mine = [c for c in plan.chunks if c.agent_id is None]
        theirs = [c for c in parent.chunks if c.agent_id is None] if parent is not None else []
        if origin is not None and mine and theirs:
            at = next((c for c in theirs if origin[1] in c.message_uuids), theirs[-1])
            plan = replace(plan, edges=(*plan.edges, EdgeRecord(at.id, mine[0].id, "forked-from")))
        out.append(plan)
    return tuple(out)


def _head(session: SessionTranscripts) -> SessionHead:
    cwd, project_path = _where(session)
    cwd_hash = session.project_hash if not session.cwd else None  # Gemini CLI: matched when written
    joined = () if session.source == "claude-code" else tuple(s.agent_id for s in session.subagents if s.agent_id)
    repository = repository_key(project_path) if session.cwd and project_path else None
    later = (c for t in (session.main, *session.subagents) if t is not None for c in (t.cwd, *t.later_cwds) if c)
    also_in = tuple(dict.fromkeys(p for c in later if (p := _elsewhere(c, project_path))))
    return SessionHead(
        session.session_id,
        cwd,
        project_path,
        cwd_hash,
        session.source,
        joined=joined,
        repository=repository,
        also_in=also_in,
    )


def _elsewhere(cwd: str, project_path: str) -> str | None:
    """The project of a folder a session also worked in, when it is not the session's own: a folder
    inside the project (``src/``, or one no longer on this machine) is the project, unless it is a
    repository of its own (a nested checkout is another project, shared only if it is named)."""
    other = canonical_project_path(cwd)
    if not other or other == project_path:
        return None
    inside = other.startswith(project_path.rstrip("/") + "/")
    return None if inside and not os.path.exists(os.path.join(other, ".git")) else other


def _where(session: SessionTranscripts) -> tuple[str, str]:
    """The session's cwd as recorded and its canonical project path."""
    if session.cwd:
        return session.cwd, canonical_project_path(session.cwd)
    if session.project_hash:  # Gemini CLI: until a project matches the hash, the hash stands for it
        return f"gemini:{session.project_hash}", stand_in_project(session.project_hash)
    # The folder is recorded as the cwd: a project an older release made at it takes the folder's
    # key when this session is written (:func:`causantic.ingest.pipeline.session_project`).
    first = session.files[0]
    return str(session_folder(first, session.source)), folder_project(first, session.source)


def _agent_edges(
    streams: list[PlannedStream], links: dict[str, Link], team: Team | None, window: timedelta
) -> list[EdgeRecord]:
    """Brief/debrief for ordinary sub-agents (by their spawn, else the ambient rule), team edges
    for teammates."""
    by_id = {s.agent_id: s for s in streams}
    main = by_id.get(None)
    edges: list[EdgeRecord] = []
    for stream in streams:
        if stream.agent_id is None or (team is not None and stream.agent_id in team.members):
            continue
        link = links.get(stream.agent_id)
        caller = by_id.get(link.spawn.owner) if link is not None else None
        if link is not None and caller is not None:
            edges += brief_debrief(caller, stream, link.spawn, window)
        elif main is not None:
            edges += ambient_edges(main, stream, window)
    if team is not None:
        edges += team_edges(streams, team, links, window)
    return edges


def group_paths(files: SessionFiles) -> list[Path]:
    """Every file of a session group: the main transcript (when present), its sub-agent files and
    its forks' files."""
    return [p for p in (files.main, *files.subagents, *files.forks) if p is not None]
