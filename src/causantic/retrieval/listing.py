"""What memory holds: projects, sessions and store statistics."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from causantic.errors import ProjectNotFound
from causantic.store.memory import MemoryStore
from causantic.store.records import Project, iso


@dataclass(frozen=True, slots=True)
class ProjectSummary:
    name: str
    path: str
    chunks: int
    sessions: int
    first_seen: str
    last_seen: str


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session_id: str
    started_at: str
    ended_at: str
    chunks: int
    tokens: int
    agents: tuple[str, ...]
    source: str = "claude-code"  # the coding agent of the session


def list_projects(store: MemoryStore) -> list[ProjectSummary]:
    return [
        ProjectSummary(r["name"], r["path"], r["chunks"], r["sessions"], r["first_seen"], r["last_seen"])
        for r in store.project_summaries()
    ]


def resolve_project(store: MemoryStore, name: str) -> Project:
    """One project by name, path or a cwd inside it; a clear error when none or several match."""
    matches = store.find_projects(name)
    if not matches:
        from causantic.transcripts.projects import canonical_project_path

        project = store.project_by_path(canonical_project_path(name))
        if project is not None:
            return project
        known = ", ".join(p.name for p in list_projects(store)[:10]) or "none yet"
        raise ProjectNotFound(f"No project named {name!r} in memory (known: {known}). "
                              "Run `causantic list-projects` to see all names.")
    if len(matches) > 1:
        names = ", ".join(f"{p.name} ({p.path})" for p in matches)
        raise ProjectNotFound(f"{name!r} matches several projects: {names}. Pass the full name or path.")
    return matches[0]


def list_sessions(store: MemoryStore, project: str, *, since: datetime | None = None,
                  until: datetime | None = None, days_back: float | None = None,
                  limit: int = 30) -> tuple[Project, list[SessionSummary], int]:
    """Sessions of a project, newest first; also returns how many matched before ``limit``."""
    proj = resolve_project(store, project)
    if days_back and since is None and until is None:
        since = datetime.now(UTC) - timedelta(days=days_back)
    rows = store.session_summaries(proj.id, since=iso(since) if since else None,
                                   until=iso(until) if until else None)
    sessions = [
        SessionSummary(r["session_id"], r["started"], r["ended"], r["chunks"], r["tokens"] or 0,
                       tuple(sorted((r["agents"] or "").split(","))), r["source"])
        for r in rows
    ]
    return proj, sessions[:limit], len(sessions)


@dataclass(frozen=True, slots=True)
class TopicSummary:
    id: int
    label: str
    size: int
    first_seen: str
    last_seen: str
    projects: str


def list_topics(store: MemoryStore, model: str, project: str | None = None) -> list[TopicSummary]:
    project_id = resolve_project(store, project).id if project else None
    return [TopicSummary(r["id"], r["label"], r["size"], r["first_seen"], r["last_seen"], r["projects"] or "")
            for r in store.cluster_summaries(model, project_id)]


def stats(store: MemoryStore) -> dict[str, object]:
    counts = store.counts()
    counts["sqlite_bytes"] = store.size_bytes()
    return counts
