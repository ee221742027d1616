"""`causantic stats`, `list-projects`, `list-sessions`: what memory holds."""

from __future__ import annotations

from datetime import datetime

import click

from causantic.cli.output import as_utc, domain_errors, emit_json, json_option, short_time, table
from causantic.retrieval.listing import list_projects, list_sessions, stats
from causantic.services import open_services

LIST_TITLE_CHARS = 80


@click.command("stats")
@json_option
def stats_command(as_json: bool) -> None:
    """Counts of chunks, edges by type, sessions, projects, agents and store sizes.

    Example: causantic stats --json
    """
    with domain_errors(), open_services() as services:
        result = stats(services.store)
        health = services.vectors.health(fresh=True)
        result["vectors"] = health.vectors
        result["chunks_without_vectors"] = health.missing
        result["vector_index"] = health.ann
        result["vector_bytes"] = services.vectors.size_bytes()
    if as_json:
        emit_json(result)
        return
    edges, sources = result["edges"], result["sources"]
    assert isinstance(edges, dict) and isinstance(sources, dict)
    rows = [
        ("chunks", result["chunks"]),
        ("vectors", result["vectors"]),
        ("edges", edges["total"]),
        *((f"  {kind}", count) for kind, count in sorted(edges["by_type"].items())),
        ("sessions", result["sessions"]),
        *((f"  {source}", f"{c['sessions']} sessions, {c['chunks']} chunks") for source, c in sources.items()),
        ("projects", result["projects"]),
        ("agents (besides main)", result["agents"]),
        ("clusters", result["clusters"]),
        ("skipped transcript lines", result["skipped_lines"]),
        ("keyword index", result["keyword_index"]),
        ("SQLite size", f"{int(result['sqlite_bytes']) / 1e6:.1f} MB"),  # type: ignore[call-overload]
        ("vector store size", f"{int(result['vector_bytes']) / 1e6:.1f} MB"),  # type: ignore[call-overload]
        ("ANN index", result["vector_index"]),
    ]
    table("Memory", [("", "left"), ("", "right")], rows)
    if health.missing:
        click.echo(
            f"Warning: {health.missing} chunks have no vector, so vector search cannot find them. "
            "Run `causantic embed`.",
            err=True,
        )
    if health.ann == "missing":
        click.echo(
            "Warning: the ANN index file is missing; search scans every vector until `causantic embed` rebuilds it.",
            err=True,
        )


@click.command("list-projects")
@json_option
def list_projects_command(as_json: bool) -> None:
    """Projects in memory with chunk counts and date ranges.

    Example: causantic list-projects
    """
    with domain_errors(), open_services() as services:
        projects = list_projects(services.store)
    if as_json:
        emit_json(projects)
        return
    if not projects:
        click.echo("No projects in memory yet. Run `causantic batch-ingest` first.")
        return
    table(
        None,
        [
            ("project", "left"),
            ("chunks", "right"),
            ("sessions", "right"),
            ("first", "left"),
            ("last", "left"),
            ("path", "left"),
        ],
        [(p.name, p.chunks, p.sessions, short_time(p.first_seen), short_time(p.last_seen), p.path) for p in projects],
    )


@click.command("list-sessions")
@click.argument("project")
@click.option("--from", "since", type=click.DateTime(), help="Only sessions starting at or after this time.")
@click.option("--to", "until", type=click.DateTime(), help="Only sessions starting before this time.")
@click.option("--days-back", type=float, help="Only sessions from the last N days.")
@click.option("--limit", default=30, show_default=True, help="Most sessions to show.")
@json_option
def list_sessions_command(
    project: str, since: datetime | None, until: datetime | None, days_back: float | None, limit: int, as_json: bool
) -> None:
    """Sessions of one project, newest first, each with its title (its first real prompt).

    Example: causantic list-sessions myapp --days-back 7
    """
    with domain_errors(), open_services() as services:
        proj, sessions, total = list_sessions(
            services.store, project, since=as_utc(since), until=as_utc(until), days_back=days_back, limit=limit
        )
    if as_json:
        emit_json({"project": proj.name, "total": total, "sessions": sessions})
        return
    if not sessions:
        click.echo(f"No sessions found for project {proj.name!r}.")
        return
    table(
        f"{proj.name}: {len(sessions)} of {total} sessions, newest first",
        [
            ("session", "left"),
            ("source", "left"),
            ("start", "left"),
            ("chunks", "right"),
            ("agents", "left"),
            ("title", "left"),
        ],
        [
            (
                s.session_id[:8],
                s.source,
                short_time(s.started_at),
                s.chunks,
                ", ".join(s.agents),
                s.short_title(LIST_TITLE_CHARS),
            )
            for s in sessions
        ],
    )
    if total > len(sessions):
        click.echo(f"(showing {len(sessions)} of {total}; use --from/--to or --limit to see more)")


COMMANDS = [stats_command, list_projects_command, list_sessions_command]
