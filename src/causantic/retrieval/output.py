"""One JSON shape per answer of the ``Memory`` facade, printed by ``--json`` (the MCP tools answer in
text): search, recall/predict, reconstruct, projects, sessions, topics, stats, forget, prune, project
moves, team status, embedding and clustering runs.

Frozen pydantic models (so a script can validate ``causantic … --json`` against them) built from
the retrieval results. A chunk carries its whole stored text (``content``) and a short ``preview``.

One naming rule holds across every model: a plural noun (``sessions``, ``chunks``, ``projects``,
``topics``, ``agents``, ``members``) is those things, a list (or an object of them keyed by name),
never a number; a number of them says so, ``<noun>_count`` (``session_count``, ``chunk_count``), or
is a participle (``chunks_added``, ``topics_found``). ``tests/test_json_shapes.py`` walks every
model and every command's ``--json`` answer and fails when a key is one kind here and another there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from causantic.errors import TeamDownReason
from causantic.ingest_runs import IngestRun, running_text
from causantic.retrieval.episodes import EpisodeAnswer
from causantic.retrieval.forget import ForgetResult, PruneResult
from causantic.retrieval.format import WEAK_RELEVANCE, chunks_left_out, weak_count
from causantic.retrieval.listing import ProjectSummary, SessionList, SessionSummary, TopicCoverage, TopicSummary
from causantic.retrieval.reconstruct import Reconstruction
from causantic.retrieval.regroup import ProjectMove, move_notes, move_summary
from causantic.retrieval.search import SearchResult
from causantic.store.records import StoredChunk, iso

if TYPE_CHECKING:  # the ingest pipeline is not for a search's output to load
    from causantic.ingest.pipeline import IngestReport
    from causantic.ingest.topics import ClusterReport
    from causantic.runs import HookRun

PREVIEW_CHARS = 160


class Out(BaseModel):
    """A result: read-only once built, as every answer of the facade."""

    model_config = ConfigDict(frozen=True, defer_build=True)


class ChunkOut(Out):
    id: str
    project: str
    session_id: str
    source: str = Field(description="The coding agent whose session it is: claude-code, codex or gemini.")
    agent: str
    user: str | None = Field(None, description="Team memory: the member it came from; null in local memory.")
    store: str = Field(
        "local", description="Where it lives: 'team' (team memory, PostgreSQL) or 'local' (this machine's SQLite)."
    )
    date: str = Field(description="When the chunk's turn started, ISO 8601 UTC.")
    relevance: float | None = Field(None, description="Calibrated relevance to the query, 0..1.")
    is_hit: bool = Field(True, description="A search hit, rather than context around one (episodes).")
    tokens: int
    preview: str
    content: str


class SearchOut(Out):
    query: str
    mode: str = Field(description="What ran: hybrid, keyword-only or vector-only.")
    tokens: int
    notes: list[str]
    nothing_relevant: bool = Field(description="True when no hit cleared the relevance floor.")
    hits: list[ChunkOut]
    weak: int = Field(0, description="How many hits, the last ones, are only weakly related (relevance < weak_below).")
    weak_below: float = Field(WEAK_RELEVANCE, description="Relevance under which a shown hit is called weakly related.")


class SessionInfo(Out):
    session_id: str
    source: str = Field(description="The coding agent of the session: claude-code, codex or gemini.")
    started_at: str
    ended_at: str
    chunk_count: int
    tokens: int
    agents: list[str]
    title: str = Field(description="The session's first real prompt (or a fallback when none was recorded).")
    members: list[str] = Field(
        default_factory=list, description="Team memory: whose chunks it holds, by member name; empty in local memory."
    )


class ReconstructOutput(Out):
    project: str
    mode: str = Field(description="timeline, time-range, session or previous-session.")
    view: str = Field(description="'timeline' (one entry per session, no chunks) or 'text' (the chunks).")
    page: int = Field(description="1 is the part nearest the kept end (the newest, unless keep_oldest).")
    pages: int | None = Field(description="How many pages there are, when known.")
    earlier_count: int = Field(description="Sessions (timeline) or chunks (text) older than this page, not shown.")
    later_count: int = Field(description="Sessions or chunks newer than this page, not shown.")
    tokens: int
    truncated: bool
    split_sessions: list[str] = Field(description="Text view: sessions only partly on this page.")
    sessions: list[SessionInfo] = Field(description="The sessions shown, oldest first.")
    chunks: list[ChunkOut]


class EpisodeOut(Out):
    project: str
    session_id: str
    start: str
    end: str
    relevance: float = Field(description="The best hit's calibrated relevance, 0..1.")
    tokens: int = Field(
        description="What the episode costs as told (tool results cut, each chunk with its header line); a "
        "chunk's own tokens are its stored text's."
    )
    chunks: list[ChunkOut]
    left_out_before: int = Field(
        0, description="Chunks of the session left out between the episode before (of the same session) and this one."
    )
    left_out_within: list[int] = Field(
        default_factory=list,
        description="Per chunk, those of the session left out right before it in this episode (a long turn told "
        "from its request, then the match's neighbourhood); empty when none is.",
    )


class EpisodicOut(Out):
    kind: str = Field(description="recall (what led to it) or predict (what came next).")
    query: str
    mode: str = Field(description="episodes (around the best hits) or chain (the seeds' chain walk).")
    tokens: int
    notes: list[str]
    nothing_relevant: bool = Field(description="True when nothing in memory cleared the relevance floor.")
    order: str = Field(
        description="best: the episodes of the best-ranked match's session first (the asker's project's, asked "
        "from it), then the others as their best matches rank, a session's together in time order; time: all in "
        "time order (episodes.order). Each episode's chunks are in time order."
    )
    episodes: list[EpisodeOut] = Field(description="In the answer's order (order); each one's chunks in time order.")


def chunk_out(chunk: StoredChunk, relevance: float | None, *, is_hit: bool = True) -> ChunkOut:
    return ChunkOut(
        id=chunk.id,
        project=chunk.project,
        session_id=chunk.session_id,
        source=chunk.source,
        agent=chunk.agent,
        user=chunk.user,
        store="local" if chunk.user is None else "team",
        date=chunk.start_time,
        relevance=None if relevance is None else round(relevance, 4),
        is_hit=is_hit,
        tokens=chunk.approx_tokens,
        preview=" ".join(chunk.content.split())[:PREVIEW_CHARS],
        content=chunk.content,
    )


def search_out(query: str, result: SearchResult) -> SearchOut:
    return SearchOut(
        query=query,
        mode=result.mode,
        tokens=result.tokens,
        notes=list(result.notes),
        nothing_relevant=result.nothing_relevant,
        hits=[chunk_out(h.chunk, r) for h, r in zip(result.hits, result.shown_relevance, strict=True)],
        weak=weak_count(result.shown_relevance),
    )


def episodic_out(query: str, answer: EpisodeAnswer) -> EpisodicOut:
    episodes = [
        EpisodeOut(
            project=e.chunks[0].chunk.project,
            session_id=e.chunks[0].chunk.session_id,
            start=e.start,
            end=e.chunks[-1].chunk.end_time,
            relevance=round(e.relevance, 4),
            tokens=e.tokens,
            chunks=[chunk_out(c.chunk, c.relevance, is_hit=c.is_hit) for c in e.chunks],
            left_out_before=chunks_left_out(answer, i),
            left_out_within=list(e.gaps),
        )
        for i, e in enumerate(answer.episodes)
    ]
    return EpisodicOut(
        kind=answer.kind,
        query=query,
        mode=answer.mode,
        tokens=answer.tokens,
        notes=list(answer.notes),
        nothing_relevant=answer.nothing_relevant,
        order=answer.order,
        episodes=episodes,
    )


def session_out(session: SessionSummary) -> SessionInfo:
    return SessionInfo(
        session_id=session.session_id,
        source=session.source,
        started_at=session.started_at,
        ended_at=session.ended_at,
        chunk_count=session.chunks,
        tokens=session.tokens,
        agents=list(session.agents),
        title=session.title,
        members=list(session.members),
    )


def reconstruction_out(result: Reconstruction) -> ReconstructOutput:
    return ReconstructOutput(
        project=result.project,
        mode=result.mode,
        view=result.view,
        page=result.page,
        pages=result.pages,
        earlier_count=result.earlier,
        later_count=result.later,
        tokens=result.tokens,
        truncated=result.truncated,
        split_sessions=list(result.split),
        sessions=[session_out(s) for s in result.sessions],
        chunks=[chunk_out(c, None) for c in result.chunks],
    )


class ProjectInfo(Out):
    name: str
    path: str
    chunk_count: int
    session_count: int
    first_seen: str
    last_seen: str
    members: dict[str, int] = Field(
        default_factory=dict, description="Team memory: the members who ingested its sessions, with how many each."
    )


class ProjectsOut(Out):
    projects: list[ProjectInfo]


class SessionsOut(Out):
    project: str
    total: int = Field(description="Sessions matching the range; the list holds at most the limit of them.")
    sessions: list[SessionInfo]


class TopicInfo(Out):
    id: int
    label: str
    size: int
    first_seen: str
    last_seen: str
    projects: list[str]
    store: str | None = Field(
        None,
        description=(
            "Team memory with unshared projects beside it: where the topic lives, 'team' or 'local' (each "
            "store numbers its own topics); null with one store."
        ),
    )


class TopicsOut(Out):
    topics: list[TopicInfo]
    chunk_count: int = Field(description="Chunks in memory (in the project, when one was named).")
    in_no_topic: int = Field(
        description="Of those, the chunks in no topic: HDBSCAN leaves what fits no dense group as noise."
    )


class EdgeCounts(Out):
    total: int
    by_type: dict[str, int]


class SourceCounts(Out):
    session_count: int
    chunk_count: int


def source_counts(counts: Mapping[str, int]) -> SourceCounts:
    """A coding agent's or a member's part of memory, from the store's ``{"sessions", "chunks"}``."""
    return SourceCounts(session_count=counts["sessions"], chunk_count=counts["chunks"])


class StoreShare(Out):
    chunk_count: int
    session_count: int
    project_count: int
    vector_count: int | None = Field(description="Chunks with a vector of the configured model; null when unreadable.")


class IngestRunningOut(Out):
    """An ingest writing memory right now (``causantic.ingest_runs``): counts may still change."""

    pid: int
    started: str = Field(description="ISO 8601 UTC.")
    path: str = Field(description="What it reads: a folder or file (the first, when several).")
    phase: str = Field(description="finding files, reading or embedding.")
    files_done: int
    files_total: int | None = Field(description="Null until the files to read are known.")
    chunk_count: int = Field(description="Chunks written so far.")
    embedded: int = Field(description="Embedding phase: new chunks embedded so far, of embed_total.")
    embed_total: int
    summary: str = Field(description="The line `causantic stats` and the dashboard show.")


class TeamUnavailableOut(Out):
    """Why team memory is not answering, for scripts (``reason``) and people (``message``)."""

    reason: TeamDownReason = Field(
        description=(
            "unreachable: the server does not answer (down, out of reach, a timeout); refused: it answered but "
            "refused the login or holds no such database; schema: no team memory there yet, no pgvector, or "
            "schema changes this release needs that only the tables' owner may make; error: anything else."
        )
    )
    message: str = Field(description="Which server, why, and what to do (never the URL or its password).")


class StatsOut(Out):
    version: str
    chunk_count: int = Field(description="In all of memory: with team memory, its chunks and your local ones.")
    vector_count: int | None = Field(description="Chunks with a vector of the configured model; null when unreadable.")
    chunks_without_vectors: int | None = Field(description="Chunks vector search cannot find yet (run embed).")
    vector_index: str = Field(description="ANN index: not needed, ready, missing, unavailable, or error.")
    vector_error: str | None = Field(None, description="Why the vector figures are missing, when they are.")
    vector_index_note: str | None = Field(
        None, description="vector_index missing: what search does meanwhile, and what makes the index."
    )
    edges: EdgeCounts
    session_count: int
    project_count: int
    agent_count: int = Field(description="Agents besides main (sub-agents, teammates).")
    agents: list[str] = Field(
        default_factory=list, description="Those agents' names, alphabetically (e.g. Explore, general-purpose)."
    )
    topic_count: int = Field(description="Topics (`causantic clusters --json` lists them).")
    topics_off: str | None = Field(
        None, description="Why topics are off (scikit-learn, an optional extra, is not installed) and what to install."
    )
    skipped_line_count: int = Field(description="Damaged transcript lines skipped at ingest.")
    keyword_index: str
    sources: dict[str, SourceCounts] = Field(description="Sessions and chunks per coding agent.")
    members: dict[str, SourceCounts] = Field(
        default_factory=dict, description="Team memory: the sessions and chunks each member ingested, by name."
    )
    sqlite_bytes: int = Field(
        description="The SQLite file with its write-ahead log (team memory: the database's size)."
    )
    journal_bytes: int = Field(0, description="Of sqlite_bytes, the write-ahead log (emptied after each ingest).")
    free_bytes: int = Field(
        0,
        description="Of sqlite_bytes, free space inside the file left by deleted memory: reused by later ingests, "
        "given back to the disk by `causantic vacuum`.",
    )
    vector_bytes: int | None = Field(
        description="The vectors and their index: their part of sqlite_bytes, plus vector_file_bytes."
    )
    vector_file_bytes: int | None = Field(
        None, description="Of vector_bytes, the ANN index files beside the database (not in sqlite_bytes)."
    )
    projects: list[ProjectInfo] = Field(description="Each project, as `causantic list-projects --json` lists them.")
    stores: dict[str, StoreShare] = Field(
        default_factory=dict,
        description=(
            "Team memory with unshared projects beside it: each store's part, 'team' (PostgreSQL) and "
            "'local' (this machine's SQLite), as search's `store` names them; empty with one store."
        ),
    )
    team_unavailable: TeamUnavailableOut | None = Field(
        None,
        description=(
            "Team memory (storage.backend postgres) is configured but not answering; the figures are then "
            "this machine's local memory only. Null while it answers."
        ),
    )
    team_schema_note: str | None = Field(
        None,
        description=(
            "Team memory answers, but lacks schema changes of this release that members work without: what "
            "goes without them, and which role runs `causantic team init` to end it (as `team status` says)."
        ),
    )
    ingests_running: list[IngestRunningOut] = Field(
        default_factory=list, description="Ingests writing memory now (its figures may change); empty when none runs."
    )
    older_rules_elsewhere: dict[str, int] = Field(
        default_factory=dict,
        description="Of files_under_older_rules, those outside the agents' folders, by folder: a plain "
        "batch-ingest and the hooks do not read them; `causantic batch-ingest FOLDER` does.",
    )
    files_under_older_rules: int = Field(
        0,
        description=(
            "Transcript files this machine ingested under older ingest rules: the next ingest reads them "
            "again, so their chunks follow this version's rules."
        ),
    )


class ForgetHit(ChunkOut):
    """A chunk a forget matched: a search hit's shape, and the query's similarity."""

    similarity: float | None = Field(
        description="With a query filter: the chunk's cosine similarity to it (what threshold compares); else null."
    )


class ForgetOut(Out):
    project: str
    dry_run: bool
    whole_project: bool = Field(description="True when no filter narrowed it: the whole project.")
    session_count: int = Field(description="Sessions the matched chunks belong to.")
    preview_sessions: list[SessionInfo] = Field(description="Whole project: its newest sessions, by title.")
    chunk_count: int = Field(description="Chunks matched by the filters.")
    deleted: int
    preview_chunks: list[ForgetHit] = Field(
        description="The first matches (most similar first with a query), shaped as search hits."
    )
    other_members: dict[str, int] = Field(
        default_factory=dict,
        description="Team memory: matched chunks other members ingested, by member; deleting them needs "
        "the causantic_admin role (without it nothing is deleted), unless other_members_deletable.",
    )
    other_members_deletable: bool = Field(
        False,
        description="Team memory: this member's database role may delete the other members' chunks too (a "
        "login the team shares, an admin's, the tables' owner's), so a real run deletes them with the rest.",
    )
    only_mine: bool = Field(False, description="Team memory: only the forgetting member's own chunks matched.")
    freed_bytes: int = Field(0, description="A real run: how many bytes smaller memory's files became.")
    size_bytes: int = Field(0, description="A real run: memory's files after it (SQLite: with the write-ahead log).")
    free_bytes: int = Field(
        0,
        description="A real run: free space left inside memory.db (reused by later ingests; `causantic vacuum` "
        "gives it back to the disk).",
    )


class PruneProject(Out):
    project: str
    chunk_count: int
    session_count: int


class PruneOut(Out):
    before: str = Field(description="Chunks before this time (UTC), in every project.")
    dry_run: bool
    chunk_count: int = Field(description="Chunks matched.")
    session_count: int = Field(description="Sessions the matched chunks belong to.")
    deleted: int
    projects: list[PruneProject] = Field(description="The matches by project, most chunks first.")
    freed_bytes: int = Field(0, description="A real run: how many bytes smaller memory's files became.")
    size_bytes: int = Field(0, description="A real run: memory's files after it.")
    free_bytes: int = Field(0, description="A real run: free space left inside memory.db (`causantic vacuum`).")


def prune_out(result: PruneResult) -> PruneOut:
    return PruneOut(
        before=iso(result.before),
        dry_run=result.dry_run,
        chunk_count=result.count,
        session_count=result.sessions,
        deleted=result.deleted,
        projects=[
            PruneProject(project=p.project, chunk_count=p.chunks, session_count=p.sessions) for p in result.projects
        ],
        freed_bytes=result.freed_bytes,
        size_bytes=result.size_bytes,
        free_bytes=result.free_bytes,
    )


class VacuumOut(Out):
    bytes_before: int = Field(description="The SQLite file and its write-ahead log before.")
    bytes_after: int = Field(description="...and after: free space gone, the log emptied.")
    free_before: int = Field(description="Free space inside the file before (left by deleted memory).")
    reclaims: bool = Field(description="Whether later deletions give their space back by themselves (always, after).")
    reclaimed_before: bool = Field(
        description="Whether they already did before this vacuum (a file this release made)."
    )


class EmbedOut(Out):
    model: str
    vectors_added: int
    vector_count: int = Field(description="Vectors of the model in the index now.")


class ModelInfo(Out):
    id: str
    dims: int
    repository: str = Field(description="Where its files are downloaded from (a Hugging Face repository).")
    status: str = Field(description="ready, or not on this machine.")
    note: str


class ModelsOut(Out):
    """``causantic models --json``: the embedding models Causantic knows."""

    models: list[ModelInfo]


class ClusterOut(Out):
    """A clustering run, its counts named as ``clusters --json`` names them (``topics`` is a list there)."""

    topics_found: int = Field(description="Topics found.")
    chunk_count: int = Field(description="Embedded chunks grouped.")
    in_no_topic: int = Field(description="Of those, the chunks in no topic (HDBSCAN's noise).")
    kept_identities: int = Field(description="Topics that kept their id from the run before.")
    seconds: float


def cluster_out(report: ClusterReport) -> ClusterOut:
    return ClusterOut(
        topics_found=report.clusters,
        chunk_count=report.clustered_chunks + report.noise_chunks,
        in_no_topic=report.noise_chunks,
        kept_identities=report.kept_identities,
        seconds=report.seconds,
    )


class ProjectMoveOut(Out):
    """A merge-projects or split-project: its preview, or what it moved."""

    action: str = Field(description="merge or split.")
    from_project: str = Field(description="The project the sessions leave, by name.")
    from_path: str
    into_project: str = Field(description="The project they join (a split: the one it makes, named as it will be).")
    into_path: str
    session_ids: list[str] = Field(description="Every session that moves, by id.")
    sessions: list[SessionInfo] = Field(description="Those holding chunks, newest first.")
    chunk_count: int = Field(description="The chunks that move.")
    aliases: list[str] = Field(description="The folders (and repositories) that move with them: later sessions follow.")
    left: int = Field(description="Sessions that stay in the source (it is deleted when none does).")
    unrecorded: int = Field(description="A split: sessions of the source whose folder is not recorded.")
    other_members: dict[str, int] = Field(
        description="Team memory: other members' chunks this member may not move, by member (then nothing moves)."
    )
    dry_run: bool
    summary: str = Field(description="What moves (or moved), in words, as the command prints it.")
    notes: list[str]


def move_out(move: ProjectMove) -> ProjectMoveOut:
    return ProjectMoveOut(
        action=move.action,
        from_project=move.source,
        from_path=move.source_path,
        into_project=move.target,
        into_path=move.target_path,
        session_ids=list(move.session_ids),
        sessions=[
            SessionInfo(
                session_id=s.session_id,
                source=s.source,
                started_at=s.started,
                ended_at=s.ended,
                chunk_count=s.chunks,
                tokens=s.tokens,
                agents=list(s.agents),
                title=s.title or "",
                members=list(s.members),
            )
            for s in move.sessions
        ],
        chunk_count=move.chunks,
        aliases=list(move.aliases),
        left=move.left,
        unrecorded=move.unrecorded,
        other_members=dict(move.others),
        dry_run=move.dry_run,
        summary=move_summary(move),
        notes=move_notes(move),
    )


class TeamInitOut(Out):
    """``causantic team init --json``: the server checked, and the schema made or upgraded there."""

    server: str
    server_version: str = Field(description="PostgreSQL's version.")
    pgvector_version: str | None = Field(description="The vector extension's version in the database.")
    schema_version: int
    ann_indexes_made: list[str] = Field(description="The models whose vector index (HNSW) this run made.")


class SettingChangeOut(Out):
    key: str
    before: str | None = Field(description="As config.json spelled it (JSON text); null: not set there.")
    after: str = Field(description="As config.json spells it now (JSON text); a password's URL as asterisks.")


class SettingOverrideOut(Out):
    key: str
    set_in: str = Field(description="The environment variable or project file whose value wins over config.json.")


class ProjectShareOut(Out):
    name: str
    path: str
    session_count: int = Field(description="Sessions in your local memory.")
    local_only_count: int = Field(
        description="Of them, those team memory lacks (a shared project's: `batch-ingest --force` uploads them)."
    )


class TeamJoinOut(Out):
    """``causantic team join --json``: the server checked as this member, the settings written, and
    where the next ingest puts each project of local memory."""

    server: str
    role: str = Field(description="The login role the URL names.")
    user: str = Field(description="The name on your rows (team.user, else your login name).")
    schema_version: int
    schema_note: str | None = Field(description="What members go without until the tables' owner upgrades.")
    members: list[str] = Field(description="Members with rows in team memory, by name.")
    config_file: str
    changes: list[SettingChangeOut] = Field(description="The keys written whose value changed.")
    overridden: list[SettingOverrideOut]
    share_all: bool
    shared: list[ProjectShareOut] = Field(description="Projects of local memory the next ingest shares.")
    kept_local: list[ProjectShareOut] = Field(description="Projects of local memory that stay local.")
    unmatched: list[str] = Field(description="team.shareProjects names no project of local memory answers to yet.")


class TeamLeaveOut(Out):
    """``causantic team leave --json``: storage.backend set back to sqlite in config.json."""

    config_file: str
    changes: list[SettingChangeOut] = Field(description="The keys written whose value changed.")
    overridden: list[SettingOverrideOut]


class TeamMemberOut(Out):
    user: str
    session_count: int
    chunk_count: int
    text_bytes: int
    last_ingest: str | None = Field(description="ISO 8601 UTC; null when the member never ingested.")


class TeamStatusOut(Out):
    """``causantic team status --json``: who shares the team memory."""

    server: str
    schema_version: int
    database_bytes: int
    schema_missing: list[int] = Field(description="Migrations of this release the database lacks.")
    schema_note: str | None = Field(description="What members go without until the tables' owner applies them.")
    members: list[TeamMemberOut]


def project_out(p: ProjectSummary) -> ProjectInfo:
    return ProjectInfo(
        name=p.name,
        path=p.path,
        chunk_count=p.chunks,
        session_count=p.sessions,
        first_seen=p.first_seen,
        last_seen=p.last_seen,
        members=dict(p.members),
    )


def projects_out(projects: list[ProjectSummary]) -> ProjectsOut:
    return ProjectsOut(projects=[project_out(p) for p in projects])


def sessions_out(listing: SessionList) -> SessionsOut:
    return SessionsOut(
        project=listing.project, total=listing.total, sessions=[session_out(s) for s in listing.sessions]
    )


def topics_out(topics: list[TopicSummary], coverage: TopicCoverage) -> TopicsOut:
    return TopicsOut(
        topics=[TopicInfo.model_validate(t, from_attributes=True) for t in topics],
        chunk_count=coverage.chunks,
        in_no_topic=coverage.in_no_topic,
    )


def forget_out(result: ForgetResult) -> ForgetOut:
    return ForgetOut(
        project=result.project,
        dry_run=result.dry_run,
        whole_project=result.whole_project,
        session_count=result.sessions,
        preview_sessions=[session_out(x) for x in result.session_summaries],
        chunk_count=result.count,
        deleted=result.deleted,
        preview_chunks=[ForgetHit(**dict(chunk_out(c, None)), similarity=sim) for c, sim in result.preview],
        other_members=dict(result.others),
        other_members_deletable=result.others_deletable,
        only_mine=result.only_mine,
        freed_bytes=result.freed_bytes,
        free_bytes=result.free_bytes,
        size_bytes=result.size_bytes,
    )


class SkippedLines(Out):
    total: int
    by_reason: dict[str, int]


class IngestError(Out):
    path: str
    error: str


class IngestOut(Out):
    """What an ingest did (``IngestReport.as_dict``)."""

    files: int
    files_unchanged: int
    files_rules_changed: int = Field(
        0, description="Of the files read, those unchanged but read under older ingest rules: read again to convert."
    )
    files_waiting: int = Field(
        0, description="Team memory: files of shared projects not uploaded (server unreachable); the next run does."
    )
    notes: list[str] = Field(
        default_factory=list,
        description="Team memory unavailable (unreachable, or its schema behind) and what was kept locally; "
        "what a member goes without until the team database is upgraded.",
    )
    bytes_read: int
    session_count: int
    chunks_added: int
    chunks_updated: int = Field(description="Stored chunks whose text changed: embedded again.")
    chunks_renumbered: int = Field(
        0, description="Stored chunks whose text is unchanged under a new turn number (ingest rules changed)."
    )
    chunks_removed: int
    edges_added: EdgeCounts
    skipped_lines: SkippedLines = Field(description="Damaged lines skipped, by reason.")
    ignored_records: dict[str, int] = Field(
        description="Record kinds left out by design, and records kept with a value nested too deep cut"
        " ('value nested too deep, cut')."
    )
    examples_removed: list[str]
    subagent_streams: int
    linked_subagents: int
    skipped_subagents: dict[str, int]
    teammates: int
    errors: list[IngestError] = Field(description="Files or folders that could not be read at all.")
    vectors_added: int | None = Field(description="null: embedding deferred.")
    vectors_elsewhere: int = Field(
        0,
        description="New chunks of this run that another ingest running at the same time embedded (not counted in "
        "vectors_added): in team memory, another member's.",
    )
    topics_note: str | None = Field(
        description=(
            "What topic upkeep did, in words ('3 of 5 new chunks joined existing topics'); null: no vectors added."
        )
    )
    seconds: float
    embed_seconds: float


def ingest_out(report: IngestReport) -> IngestOut:
    return IngestOut.model_validate(report.as_dict())


class InjectedMomentInfo(Out):
    chunk_id: str
    session_id: str
    project: str
    date: str
    relevance: float
    coverage: float
    other_project: bool = False
    margin: float | None = Field(None, description="The lead session's BM25 over the next one's (null: no other).")


class HookRunInfo(Out):
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
    earlier_runs: list[HookRunInfo] = Field(
        default_factory=list, description="user-prompt-submit: its runs on the prompts before, newest first."
    )


class HookStatusOut(Out):
    """Each hook's last run (``causantic.runs`` keeps them): ``hook status --json`` and the MCP tool."""

    hooks: dict[str, HookRunInfo]


def ingest_running_out(run: IngestRun) -> IngestRunningOut:
    return IngestRunningOut(
        pid=run["pid"],
        started=run["started"],
        path=run["source"],
        phase=run["phase"],
        files_done=run["filesDone"],
        files_total=run["filesTotal"],
        chunk_count=run["chunks"],
        embedded=run["embedded"],
        embed_total=run["embedTotal"],
        summary=running_text(run),
    )


def status_out(runs: dict[str, HookRun]) -> HookStatusOut:
    return HookStatusOut(hooks={name: _run_info(r) for name, r in sorted(runs.items())})


def _run_info(r: HookRun) -> HookRunInfo:
    return HookRunInfo(
        last_run=r.get("lastRun", ""),
        success=bool(r.get("success")),
        duration_ms=r.get("durationMs"),
        outcome=r.get("outcome", ""),
        project=r.get("project"),
        session_id=r.get("sessionId"),
        error=r.get("error"),
        details=r.get("details", {}),
        injected=[
            InjectedMomentInfo(
                chunk_id=m["chunkId"],
                session_id=m["sessionId"],
                project=m["project"],
                date=m["date"],
                relevance=m["relevance"],
                coverage=m["coverage"],
                other_project=m.get("otherProject", False),
                margin=m.get("margin"),
            )
            for m in r.get("injected", [])
        ],
        earlier_runs=[_run_info(e) for e in r.get("earlier", [])],
    )
