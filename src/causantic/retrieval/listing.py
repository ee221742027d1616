"""What memory holds: projects, sessions and store statistics."""

from __future__ import annotations

import difflib
import ntpath
import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

from causantic.errors import NoMemoryYet, ProjectNotFound
from causantic.files import absolute
from causantic.retrieval.options import SESSIONS_LISTED
from causantic.store.protocol import MemoryStoreProtocol
from causantic.store.records import STAND_IN_PREFIX, Project, TopicTotals
from causantic.transcripts import without_injected
from causantic.wording import counted, shortened

KNOWN_SHOWN = 10  # project names an unknown-project error lists
_ROLE_MARKER = re.compile(r"\[(User|Assistant|Tool:[^\]\n]*|Result:[^\]\n]*)\]\n?")
_TITLE_MAX = 200


@dataclass(frozen=True, slots=True)
class ProjectSummary:
    name: str
    path: str
    chunks: int
    sessions: int
    first_seen: str
    last_seen: str
    members: tuple[tuple[str, int], ...] = ()  # team memory: (member, sessions they ingested into it), by name

    @property
    def folder(self) -> str | None:
        """Its folder (:func:`known_folder`)."""
        return known_folder(self.path)


def known_folder(path: str) -> str | None:
    """A project's folder from its stored ``path``; None for a project known only by the hash of its
    folder (Gemini CLI's ``projectHash``, until a session names the folder), whose stored path is its
    name ('gemini:f27a15ed61c0409f'): list-projects showed that name again as its path."""
    return None if path.startswith(STAND_IN_PREFIX) else path


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session_id: str
    started_at: str
    ended_at: str
    chunks: int
    tokens: int
    agents: tuple[str, ...]
    title: str  # the first real prompt, stored at ingest; else a fallback from the first chunk
    source: str = "claude-code"  # the coding agent of the session
    members: tuple[str, ...] = ()  # team memory: whose its chunks are, by name; none in local memory

    def short_title(self, limit: int) -> str:
        """The title cut to ``limit`` characters (an ellipsis marks the cut)."""
        return shortened(self.title, limit)


@dataclass(frozen=True, slots=True)
class SessionList:
    """One page of a project's sessions, newest first, and how many matched in all."""

    project: str  # its name
    project_path: str  # what names it uniquely (two projects may share a name)
    sessions: tuple[SessionSummary, ...]
    total: int
    newest: SessionSummary | None = None  # a range that held no session: the project's newest one


def newest_note(newest: SessionSummary | None) -> str:
    """'; its newest session started 2025-07-20 18:30 UTC', or nothing: what a time range that holds
    no session adds, so an agent's "last week" of a project idle for months knows where to look."""
    from causantic.retrieval.format import when_utc

    return f"; its newest session started {when_utc(newest.started_at)}" if newest else ""


def list_projects(store: MemoryStoreProtocol) -> list[ProjectSummary]:
    return [
        ProjectSummary(r.name, r.path, r.chunks, r.sessions, r.first_seen, r.last_seen, r.members)
        for r in store.project_summaries()
    ]


def resolve_project(store: MemoryStoreProtocol, name: str, *, emptied: bool = False) -> Project:
    """One project by name, path or a cwd inside it; a clear error when none or several match.

    A project whose chunks were all forgotten is unknown, as list-projects does not show it, unless
    ``emptied`` (forget, which says there is nothing left in it)."""
    if not name.strip():  # would match by suffix (e.g. the project at "/"): an empty name names nothing
        raise ProjectNotFound("The project name is empty; run `causantic list-projects` to see the names.")
    matches = [p for p in store.find_projects(name) if emptied or store.holds_chunks(p.id)]
    if not matches:
        from causantic.transcripts.projects import canonical_project_path

        name = _typed_folder(name)
        for path in _folder_and_parents(canonical_project_path(name)):
            project = store.project_by_path(path)
            if project is not None and (emptied or store.holds_chunks(project.id)):
                return project
        # Words for the command line and for an agent alike (it calls the list-projects tool, not the CLI).
        known = [p.name for p in list_projects(store)]
        more = f" and {len(known) - KNOWN_SHOWN} more" if len(known) > KNOWN_SHOWN else ""
        listed = ", ".join(known[:KNOWN_SHOWN]) + more
        if _is_folder(name):  # an agent's cwd in a project not ingested yet: nothing went wrong
            held = f"known projects: {listed}" if known else "memory is empty: run `causantic batch-ingest`"
            raise NoMemoryYet(
                f"Nothing in memory for {name} yet: its sessions are remembered once ingested ({held}).",
                asked=name,
                known=tuple(known[:KNOWN_SHOWN]),
            )
        if not known:
            raise ProjectNotFound(f"No project named {name!r}: memory is empty (run `causantic batch-ingest` first).")
        meant = difflib.get_close_matches(name, known, n=3)
        guess = f": did you mean {' or '.join(meant)}?" if meant else ""
        raise ProjectNotFound(
            f"No project named {name!r} in memory{guess} (known: {listed}; list-projects shows each with its path).",
            asked=name,
            meant=tuple(meant),
            known=tuple(known[:KNOWN_SHOWN]),
        )
    if len(matches) > 1:
        names = ", ".join(f"{p.name} ({p.path})" for p in matches)
        raise ProjectNotFound(f"{name!r} matches several projects: {names}. Pass the full name or path.")
    return matches[0]


def _typed_folder(name: str) -> str:
    """A folder named relative to where the command runs ('.', '..', './src', 'src', '~/app') as its
    absolute path, which projects are recorded by; any other name as it is. Called only once no
    project goes by ``name``, so a project named like a folder here is still found by its name."""
    if not name.startswith(("~", "./", "../")) and name not in (".", "..") and not os.path.isdir(name):
        return name
    return name if os.path.isabs(name) else str(absolute(name))


def _is_folder(name: str) -> bool:
    """Whether ``name`` is a path (an agent's cwd, say), not a project's name that could be misspelt."""
    return "/" in name or "\\" in name or name.startswith("~")


def _folder_and_parents(path: str) -> list[str]:
    """``path``, then each folder above it that could be a project: a cwd inside a project that is
    no git checkout (or not on this machine, or an agent's guess) still names it. The home folder
    and the root stop the walk, so a new project under home is not taken for home's own sessions."""
    paths = ntpath if ntpath.splitdrive(path)[0] else posixpath
    stops = {"", os.path.expanduser("~")}
    found = [path]
    while (parent := paths.dirname(found[-1])) not in stops and parent != found[-1] and paths.dirname(parent) != parent:
        found.append(parent)
    return found


def list_sessions(
    store: MemoryStoreProtocol,
    project: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    days_back: float | None = None,
    limit: int = SESSIONS_LISTED,
    offset: int = 0,
    agent: str | None = None,
) -> tuple[Project, list[SessionSummary], int]:
    """Sessions of a project, newest first, from ``offset``; also returns how many matched in all.
    With ``agent``, the sessions that agent took part in (their counts are its chunks)."""
    proj = resolve_project(store, project)
    if days_back and since is None and until is None:
        since = datetime.now(UTC) - timedelta(days=days_back)
    rows = store.session_summaries(proj.id, since=since, until=until, agent=agent)
    page = rows[offset : offset + limit]
    fallback = store.first_chunk_texts([r.session_id for r in page if not r.title])
    sessions = [
        SessionSummary(
            r.session_id,
            r.started,
            r.ended,
            r.chunks,
            r.tokens,
            r.agents,
            r.title or _fallback_title(fallback.get(r.session_id, "")),
            r.source,
            r.members,
        )
        for r in page
    ]
    return proj, sessions, len(rows)


def _fallback_title(first_chunk: str) -> str:
    """A title for a session stored without one (its transcript is gone): the first chunk's words."""
    match = _ROLE_MARKER.match(first_chunk)
    role = match.group(1) if match else ""
    words = " ".join(without_injected(first_chunk[match.end() :] if match else first_chunk).split())
    if not words:
        return "(no prompt recorded)"
    text = words if role == "User" else f"(no prompt recorded) {words}"
    return shortened(text, _TITLE_MAX)


# The store's totals are already what a listing shows: id, label, size, span and the project names
# (a tuple: each interface joins them its own way; a name may hold a comma).
TopicSummary = TopicTotals


def list_topics(store: MemoryStoreProtocol, model: str, project: str | None = None) -> list[TopicSummary]:
    project_id = resolve_project(store, project).id if project else None
    return store.cluster_summaries(model, project_id)


@dataclass(frozen=True, slots=True)
class TopicCoverage:
    """How much of memory (or of one project) a topic list covers: HDBSCAN leaves chunks that fit no
    dense group in no topic, and a list of topics alone would hide how many."""

    chunks: int
    in_topics: int
    clustered: bool  # a clustering has run (else no topics only means none were made yet)

    @property
    def in_no_topic(self) -> int:
        return self.chunks - self.in_topics


def topic_coverage(
    store: MemoryStoreProtocol, model: str, project: str | None = None, *, counted_elsewhere: Sequence[str] = ()
) -> TopicCoverage:
    """What ``store``'s topics cover, less the chunks of ``counted_elsewhere``: sessions another store
    holds too and counts (team memory's copy of a session kept locally, then uploaded)."""
    project_id = resolve_project(store, project).id if project else None
    chunks, in_topics = store.topic_coverage(model, project_id)
    if counted_elsewhere:
        copies, copies_in_topics = store.topic_coverage(model, project_id, sessions=counted_elsewhere)
        chunks, in_topics = chunks - copies, in_topics - copies_in_topics
    return TopicCoverage(chunks, in_topics, store.meta_value("clustered_at") is not None)


def in_no_topic_line(coverage: TopicCoverage) -> str:
    """The chunks the list leaves out, said plainly (HDBSCAN puts what fits no dense group in none)."""
    share = f" ({coverage.in_no_topic / coverage.chunks:.0%})" if coverage.chunks else ""
    return f"{coverage.in_no_topic:,} of {counted(coverage.chunks, 'chunk')}{share} belong to no topic."


def topics_off() -> str | None:
    """Why topics are off and what to install (scikit-learn, which clusters, is an optional extra), or
    None when they are on: `stats`, `clusters` and `cluster` say it, not every ingest's summary."""
    from causantic import cluster  # light: what clusters loads numpy and scikit-learn on first use

    return None if cluster.topics_available() else cluster.TOPICS_HINT


def topics_off_note(topics_off: str | None, clusters: int) -> str | None:
    """What `stats` (CLI and MCP) says when topics are off (``topics_off``: :func:`topics_off`) and
    memory has none: a memory clustered where scikit-learn was installed keeps its topics."""
    return f"Note: {topics_off}" if topics_off and not clusters else None


def no_topics_line(coverage: TopicCoverage, smallest: int, *, ingesting: bool = False) -> str:
    """Why a topic list is empty: an ingest is still writing memory, never clustered (or scikit-learn,
    which clusters, is not installed), nothing to cluster, or no group dense enough."""
    if ingesting:  # its chunks are not in any topic until it ends: "run cluster" now would miss them
        return (
            "No topics yet: an ingest is running. Topics appear when it ends (it clusters once enough "
            "new chunks are embedded), or run `causantic cluster` after it."
        )
    if not coverage.clustered:
        if hint := topics_off():  # neither cluster nor an ingest makes any without it
            return f"No topics: {hint} Then run `causantic cluster`."
        return "No topics yet. They appear after `causantic cluster` (or a batch ingest with enough chunks)."
    if not coverage.chunks:
        return "No topics: memory holds no chunks yet. Run `causantic batch-ingest`, then `causantic cluster`."
    return (
        f"No topics: a topic needs at least {smallest} alike chunks (clustering.minClusterSize), and the "
        f"last clustering found no such group among {counted(coverage.chunks, 'chunk')}."
    )


def stats(store: MemoryStoreProtocol) -> dict[str, object]:
    counts = store.counts()
    space = store.space()
    counts["sqlite_bytes"] = space.total
    counts["journal_bytes"] = space.journal_bytes
    counts["free_bytes"] = space.free_bytes
    return counts


def combined_counts(first: dict[str, object], second: dict[str, object]) -> dict[str, object]:
    """Two stores' :func:`stats` as one (team memory and the local store beside it): numbers add up,
    nested counts (edge kinds, coding agents) add up key by key, lists of names join (sorted, each
    once), and a text that differs (the keyword index) keeps both, in the order given."""
    out: dict[str, object] = dict(first)
    for key, value in second.items():
        mine = out.get(key)
        if isinstance(mine, dict) and isinstance(value, dict):
            out[key] = combined_counts(mine, value)
        elif isinstance(mine, int) and isinstance(value, int):
            out[key] = mine + value
        elif isinstance(mine, list) and isinstance(value, list):
            out[key] = sorted({*mine, *value})
        elif key not in out:
            out[key] = value
        elif mine != value:
            out[key] = f"{mine}; {value}"
    return out


@dataclass(frozen=True, slots=True)
class HeldTwice:
    """What the local store holds that team memory holds too: the sessions kept locally, then
    uploaded (their figures are team memory's, so their local copies are counted out), and the
    sub-agents both stores name (each store counts an agent once; so does the sum)."""

    sessions: Mapping[str, tuple[str, int]]  # each session's source and local chunk count
    edges: Mapping[str, int]  # the local edges between their chunks, by reference type
    vectors: int  # their local chunks holding a vector
    agents: int

    @property
    def chunks(self) -> int:
        return sum(n for _, n in self.sessions.values())


def without_sessions(counts: dict[str, object], twice: HeldTwice | None) -> dict[str, object]:
    """:func:`combined_counts` of team memory and the local store, less what both hold (``twice``):
    a session kept locally and later uploaded is one session, its chunks and edges counted once
    (team memory's copy), and an agent both name is one agent."""
    if twice is None:
        return counts
    out = dict(counts)
    out["sessions"] = int(counts["sessions"]) - len(twice.sessions)  # type: ignore[call-overload]
    out["chunks"] = int(counts["chunks"]) - twice.chunks  # type: ignore[call-overload]
    out["agents"] = int(counts["agents"]) - twice.agents  # type: ignore[call-overload]
    edges = counts["edges"]
    by_type = {kind: n - twice.edges.get(kind, 0) for kind, n in edges["by_type"].items()}  # type: ignore[index]
    out["edges"] = {"total": sum(by_type.values()), "by_type": {k: n for k, n in by_type.items() if n}}
    sources = {name: dict(c) for name, c in counts["sources"].items()}  # type: ignore[attr-defined]
    for source, chunks in twice.sessions.values():
        if source in sources:
            sources[source]["sessions"] -= 1 if chunks else 0  # sessions are counted by source when they hold chunks
            sources[source]["chunks"] -= chunks
    out["sources"] = sources
    return out


class _Located(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def last_seen(self) -> str | None: ...


Located = TypeVar("Located", bound=_Located)


def projects_beside(team: list[Located], local: list[Located]) -> list[Located]:
    """Team memory's projects and the local ones it does not hold, most recently active first (a
    project uploaded after it was kept locally is listed once, as team memory's)."""
    shared = {p.path for p in team}
    found = team + [p for p in local if p.path not in shared]
    found.sort(key=lambda p: p.last_seen or "", reverse=True)
    return found
