"""Browsing memory as a person would: a project's sessions with titles, and one session in order.

The dashboard draws these values; nothing here renders. A session's *title* is its first real
prompt (harness-injected text is already removed from prompts at ingest). A session holds its main
agent's stream and its sub-agents' streams; brief and team-spawn edges say which agent started
which, so the streams form a tree hung on the chunk where each one was started.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from causantic.errors import CausanticError
from causantic.retrieval.listing import (
    SessionSummary,
    TopicSummary,
    combined_counts,
    list_sessions,
    projects_beside,
    stats,
)
from causantic.retrieval.options import SESSION_ID_MIN
from causantic.sources import SOURCE_NAMES
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.records import ChunkScope, EdgeRecord, Project, ProjectSessions, StoredChunk
from causantic.wording import counted

TITLE_MAX_CHARS = 140
TIMELINE_PAGE = 200  # sessions a page of a project's timeline shows (the dashboard's Older/Newer pages)
MAIN = "main"
SPAWN_EDGES = ("brief", "team-spawn")
RunKey = tuple[str, str | None]  # (agent, agent id): one agent run of a session
MAIN_RUN: RunKey = (MAIN, None)


class SessionNotFound(CausanticError):
    pass


class TopicNotFound(CausanticError):
    pass


@dataclass(frozen=True, slots=True)
class AgentNode:
    name: str
    depth: int  # 0 for the main agent, 1 for what it started, ...


@dataclass(frozen=True, slots=True)
class SessionEntry:
    summary: SessionSummary
    title: str
    agents: tuple[AgentNode, ...]  # depth-first, main first
    source: str


@dataclass(frozen=True, slots=True)
class Timeline:
    project: Project
    sessions: list[SessionEntry]
    total: int


@dataclass(frozen=True, slots=True)
class Stream:
    """One agent's chunks in order, and the streams started from each of them.

    A stream is one agent run: two sub-agents of one type ("dev" started at 23:52 and again at 01:17)
    are two streams, each hung where it was started."""

    agent: str
    chunks: list[StoredChunk]
    spawned: dict[str, list[Stream]] = field(default_factory=dict)  # chunk id -> streams started there

    @property
    def task(self) -> str:
        """What the run was asked first, on one line (its brief), as a session's title is its first prompt."""
        return title_of(self.chunks[0].content) if self.chunks else "(no prompt)"

    def holds(self, chunk_id: str) -> bool:
        return any(c.id == chunk_id for c in self.chunks) or any(
            s.holds(chunk_id) for streams in self.spawned.values() for s in streams
        )


@dataclass(frozen=True, slots=True)
class SessionView:
    session_id: str
    project: str
    title: str
    started_at: str
    ended_at: str
    tokens: int
    chunk_count: int
    main: Stream
    detached: list[Stream]  # streams no edge attaches to a chunk of this session
    edges: dict[str, list[EdgeRecord]]  # chunk id -> its edges (either end)
    elsewhere: dict[str, StoredChunk]  # chunks of other sessions that edges reach


def title_of(opening: str | None) -> str:
    """The first real prompt of a session, on one line, cut at a word near ``TITLE_MAX_CHARS``."""
    if not opening or not opening.startswith("[User]"):
        return "(no prompt)"
    body = opening.removeprefix("[User]").lstrip("\n")
    prompt = body.split("\n\n[", 1)[0]
    line = " ".join(prompt.split())
    if len(line) <= TITLE_MAX_CHARS:
        return line or "(no prompt)"
    return line[:TITLE_MAX_CHARS].rsplit(" ", 1)[0] + "…"


def timeline(
    store: MemoryStoreProtocol,
    project: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = TIMELINE_PAGE,
    offset: int = 0,
) -> Timeline:
    """A project's sessions, newest first from ``offset``, with titles and their agent trees."""
    proj, summaries, total = list_sessions(store, project, since=since, until=until, limit=limit, offset=offset)
    ids = [s.session_id for s in summaries]
    openings = store.opening_prompts(ids)
    spawns: dict[str, list[tuple[str, str]]] = {}
    for session_id, parent, child in store.agent_spawns(ids):
        spawns.setdefault(session_id, []).append((parent, child))
    entries = [
        SessionEntry(
            s,
            title_of(openings.get(s.session_id)),
            _agent_tree(s.agents, spawns.get(s.session_id, [])),
            SOURCE_NAMES.get(s.source, s.source),  # the coding agent that wrote it, as recall names it
        )
        for s in summaries
    ]
    return Timeline(proj, entries, total)


def _agent_tree(agents: tuple[str, ...], spawns: list[tuple[str, str]]) -> tuple[AgentNode, ...]:
    children: dict[str, list[str]] = {}
    parent_of: dict[str, str] = {}
    for parent, child in spawns:
        if child not in parent_of and child != MAIN:
            parent_of[child] = parent
            children.setdefault(parent, []).append(child)
    roots = [MAIN] if MAIN in agents else []
    roots += sorted(a for a in agents if a != MAIN and a not in parent_of)
    out: list[AgentNode] = []
    seen: set[str] = set()

    def visit(agent: str, depth: int) -> None:
        if agent in seen:
            return
        seen.add(agent)
        out.append(AgentNode(agent, depth))
        for child in sorted(children.get(agent, [])):
            visit(child, depth + 1)

    for root in roots:
        visit(root, 0)
    return tuple(out)


def session_view(store: MemoryStoreProtocol, session_id: str) -> SessionView:
    """One session: its streams in order as a tree, with every edge touching it. ``session_id`` may
    be the start of an id, as the CLI's ``--session`` takes it (pages and answers show 8 characters)."""
    chunks_by_id = store.get_chunks(store.session_chunk_ids(session_id))
    if not chunks_by_id:
        session_id = _session_starting(store, session_id)
        chunks_by_id = store.get_chunks(store.session_chunk_ids(session_id))
    ordered = sorted(chunks_by_id.values(), key=lambda c: (c.start_time, c.turn_index, c.part))
    by_run: dict[RunKey, list[StoredChunk]] = {}
    for chunk in ordered:
        by_run.setdefault(_run_of(chunk), []).append(chunk)
    edges = store.session_edges(session_id)
    by_chunk: dict[str, list[EdgeRecord]] = {}
    for edge in edges:
        for end in {edge.source, edge.target}:
            if end in chunks_by_id:
                by_chunk.setdefault(end, []).append(edge)
    # Each sub-agent run hangs on the first chunk of another run that started it.
    started_at: dict[RunKey, str] = {}
    for edge in edges:
        source, target = chunks_by_id.get(edge.source), chunks_by_id.get(edge.target)
        if (
            edge.reference_type in SPAWN_EDGES
            and source
            and target
            and _run_of(source) != _run_of(target)
            and target.agent != MAIN
            and _run_of(target) not in started_at
        ):
            started_at[_run_of(target)] = source.id
    streams = {run: Stream(run[0], chunks) for run, chunks in by_run.items()}
    placed: set[RunKey] = set()
    for run, chunk_id in started_at.items():
        parent = _run_of(chunks_by_id[chunk_id])
        if _would_cycle(run, parent, started_at, chunks_by_id):
            continue
        streams[parent].spawned.setdefault(chunk_id, []).append(streams[run])
        placed.add(run)
    for stream in streams.values():  # runs started at one chunk, in the order they began
        for started in stream.spawned.values():
            started.sort(key=lambda s: s.chunks[0].start_time)
    main = streams.get(MAIN_RUN) or Stream(MAIN, [])
    # In the order they began (the runs of one agent type in turn), each under its own fold.
    detached = [s for run, s in streams.items() if run != MAIN_RUN and run not in placed]
    other_ids = {e for edge in edges for e in (edge.source, edge.target) if e not in chunks_by_id}
    first = ordered[0]
    return SessionView(
        session_id,
        first.project,
        title_of(store.opening_prompts([session_id]).get(session_id)),
        first.start_time,
        max(c.end_time for c in ordered),
        sum(c.approx_tokens for c in ordered),
        len(ordered),
        main,
        detached,
        by_chunk,
        store.get_chunks(sorted(other_ids)) if other_ids else {},
    )


def _run_of(chunk: StoredChunk) -> RunKey:
    """The agent run a chunk belongs to: its agent's name and, for a sub-agent, its own id (the main
    agent's chunks are one run, whatever id a transcript gave them)."""
    return MAIN_RUN if chunk.agent == MAIN else (chunk.agent, chunk.agent_id)


def _session_starting(store: MemoryStoreProtocol, prefix: str) -> str:
    """The one session whose id starts with ``prefix``; else :class:`SessionNotFound` saying why."""
    found: list[str] = []
    if len(prefix) >= SESSION_ID_MIN:
        for chunk in store.chunks_in(ChunkScope(session_prefix=prefix)):
            if chunk.session_id not in found:
                found.append(chunk.session_id)
    if len(found) == 1:
        return found[0]
    if found:
        raise SessionNotFound(
            f"{prefix!r} is the start of {counted(len(found), 'session id')} ({', '.join(found)}): give more of it."
        )
    raise SessionNotFound(f"No session {prefix!r} in memory (it may have been forgotten).")


def _would_cycle(run: RunKey, parent: RunKey, started_at: dict[RunKey, str], chunks: dict[str, StoredChunk]) -> bool:
    """True when ``parent`` descends from ``run`` (a malformed graph must not hide a stream)."""
    seen = {run}
    while parent != MAIN_RUN and parent in started_at:
        if parent in seen:
            return True
        seen.add(parent)
        parent = _run_of(chunks[started_at[parent]])
    return parent in seen


@dataclass(frozen=True, slots=True)
class Overview:
    counts: dict[str, object]  # as :func:`causantic.retrieval.listing.stats`
    vectors: int
    vector_bytes: int
    vector_file_bytes: int  # of vector_bytes, the ANN index files beside the database
    without_vectors: int  # chunks the active model has no vector for
    last_ingest: str | None
    newest_session: str | None
    projects: list[ProjectSessions]
    store_chunks: dict[str, int] = field(default_factory=dict)  # team memory beside local: each one's chunks


def overview(store: MemoryStoreProtocol, vectors: VectorIndexProtocol) -> Overview:
    """What memory holds and how fresh it is, from counts that stay cheap at any size."""
    counts = stats(store)
    projects = project_activity(store)
    embedded = vectors.count()  # counted once: a walk over every vector's index entry
    missing = max(0, int(counts["chunks"]) - embedded)  # type: ignore[call-overload]
    return Overview(
        counts,
        embedded,
        vectors.size_bytes(rows=embedded),
        vectors.file_bytes(),
        missing,
        store.last_ingested_at(),
        projects[0].last_seen if projects else None,
        projects,
    )


def combined_overview(team: Overview, local: Overview) -> Overview:
    """Team memory's overview with the local store's beside it (unshared projects): counts add up, the
    projects list holds both, and ``store_chunks`` says how many chunks each store holds."""
    projects = projects_beside(team.projects, local.projects)
    counts = combined_counts(team.counts, local.counts)
    counts["projects"] = len(projects)  # a project uploaded after it was kept locally: once
    return Overview(
        counts,
        team.vectors + local.vectors,
        team.vector_bytes + local.vector_bytes,
        team.vector_file_bytes + local.vector_file_bytes,
        team.without_vectors + local.without_vectors,
        max(filter(None, (team.last_ingest, local.last_ingest)), key=_instant, default=None),
        projects[0].last_seen if projects else None,
        projects,
        {"team": int(team.counts["chunks"]), "local": int(local.counts["chunks"])},  # type: ignore[call-overload]
    )


def _instant(stamp: str) -> datetime:
    """A stored time as an instant: SQLite writes ISO with a Z, PostgreSQL a space and an offset."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def project_activity(store: MemoryStoreProtocol) -> list[ProjectSessions]:
    """Projects with their session counts and active dates, most recent first (cheap at any size)."""
    return store.project_activity()


@dataclass(frozen=True, slots=True)
class TopicSize:
    id: int
    label: str
    size: int
    store: str | None = None  # as TopicSummary.store


def topic_sizes(store: MemoryStoreProtocol, model: str) -> list[TopicSize]:
    """Every topic with its size, largest first (summaries with dates and projects: topic_members)."""
    return [TopicSize(*row) for row in store.topic_sizes(model)]


def project_names(store: MemoryStoreProtocol) -> list[str]:
    """Every project in memory by name, for a choice of project (cheaper than their summaries)."""
    return store.project_names()


def topic_members(
    store: MemoryStoreProtocol, model: str, topic_id: int, *, limit: int = 50
) -> tuple[TopicSummary, list[StoredChunk]]:
    """A topic and its chunks nearest its centroid first."""
    rows = store.cluster_summaries(model, cluster_id=topic_id)
    if not rows:
        raise TopicNotFound(f"No topic {topic_id} (topics change when memory is reclustered).")
    topic = rows[0]
    ids = [chunk_id for chunk_id, _ in store.cluster_siblings(topic_id, limit=limit)]
    chunks = store.get_chunks(ids)
    return topic, [chunks[i] for i in ids if i in chunks]
