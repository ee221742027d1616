"""`causantic stats`, `list-projects`, `list-sessions`: what memory holds."""

from __future__ import annotations

from contextlib import nullcontext
from datetime import datetime

import click

from causantic.cli.options import days_back_option, defaulted_int_option, time_range_options
from causantic.cli.output import STORE_LABELS, domain_errors, emit_json, json_option, note, table, working
from causantic.config_cache import read_config
from causantic.facade import Memory
from causantic.retrieval import options
from causantic.retrieval.format import Reread, byte_size, counted, reread_note, short_session, when
from causantic.retrieval.listing import topics_off_note
from causantic.wording import sentence, with_names

LIST_TITLE_CHARS = 80


@click.command("stats", short_help="What memory holds: counts and sizes.")
@json_option
def stats_command(as_json: bool) -> None:
    """Counts of chunks, edges by type, sessions, projects, agents and store sizes.

    Example: causantic stats --json
    """
    with domain_errors(), Memory(config=read_config()) as memory:
        result = memory.stats()
    if as_json:
        emit_json(result)
        return
    rows = [
        ("chunks", result.chunk_count),
        *(
            (
                f"  {STORE_LABELS[name]}",
                _counts(("chunk", s.chunk_count), ("session", s.session_count), ("project", s.project_count)),
            )
            for name, s in result.stores.items()
        ),
        ("vectors", result.vector_count if result.vector_count is not None else "unavailable"),
        ("edges", result.edges.total),
        *((f"  {kind}", count) for kind, count in sorted(result.edges.by_type.items())),
        ("sessions", result.session_count),
        *(
            (f"  {source}", _counts(("session", c.session_count), ("chunk", c.chunk_count)))
            for source, c in result.sources.items()
            if c.session_count  # an agent never ingested is no news; --json keeps every source
        ),
        ("projects", result.project_count),
        # Team memory: who contributed what (`causantic team status` adds text sizes and last ingests).
        *([("members", len(result.members))] if result.members else []),
        *(
            (f"  {who}", _counts(("session", c.session_count), ("chunk", c.chunk_count)))
            for who, c in result.members.items()
        ),
        ("agents (besides main)", with_names(result.agents)),
        ("clusters", result.topic_count),
        ("skipped transcript lines", result.skipped_line_count),
        ("keyword index", result.keyword_index),
        # The SQLite file's size, or with team memory the PostgreSQL database's (plus the local file's).
        ("database size", byte_size(result.sqlite_bytes)),
        *([("  write-ahead log", byte_size(result.journal_bytes))] if result.journal_bytes else []),
        *([("  free space", byte_size(result.free_bytes))] if result.free_bytes else []),
        # The vectors are part of the database's size; only the ANN index files lie beside it.
        ("  vectors in it", _in_database(result.vector_bytes, result.vector_file_bytes)),
        *([("ANN index files", byte_size(result.vector_file_bytes))] if result.vector_file_bytes else []),
        ("ANN index", result.vector_index),
    ]
    table("Memory", [("", "left"), ("", "left")], rows)
    for run in result.ingests_running:  # the figures above may change under it
        click.echo(run.summary)
    if result.team_unavailable:
        note(f"Warning: these are local memory's figures only. {result.team_unavailable.message}")
    if result.team_schema_note:
        note(f"Note: {sentence(result.team_schema_note)}")
    if result.vector_error:
        note(f"Warning: the vector index cannot be read ({result.vector_error}).")
    if n := result.chunks_without_vectors:
        note(
            f"Warning: {counted(n, 'chunk')} {'has' if n == 1 else 'have'} no vector, so vector search cannot find "
            f"{'it' if n == 1 else 'them'}. Run `causantic embed`."
        )
    if off := topics_off_note(result.topics_off, result.topic_count):
        note(off)
    if result.free_bytes:
        note(
            f"Note: {byte_size(result.free_bytes)} of the database is free space left by forgotten memory, reused by "
            "later ingests; `causantic vacuum` gives it back to the disk."
        )
    if reread := Reread(result.files_under_older_rules, tuple(result.older_rules_elsewhere.items())):
        note(f"Note: {reread_note(reread)}")
    if result.vector_index_note:
        note(f"Warning: {sentence(result.vector_index_note)}")


def _counts(*counts: tuple[str, int]) -> str:
    """'8 sessions, 1 chunk': each count with its noun in the right number."""
    return ", ".join(counted(n, noun) for noun, n in counts)


def _in_database(vector_bytes: int | None, file_bytes: int | None) -> str:
    """The vectors' part of the database size: their bytes less the index files kept beside it."""
    return "-" if vector_bytes is None else byte_size(vector_bytes - (file_bytes or 0))


@click.command("list-projects", short_help="Projects with chunk counts and dates.")
@json_option
def list_projects_command(as_json: bool) -> None:
    """Projects in memory with chunk counts and date ranges.

    Example: causantic list-projects
    """
    with domain_errors(), Memory(config=read_config()) as memory:
        projects = memory.projects()
        unavailable = memory.team_unavailable
    if unavailable:  # else shared projects vanish from the list unexplained ("No projects in memory yet")
        note(f"Warning: local memory's projects only. {unavailable.message}")
    if as_json:
        from causantic.retrieval.output import projects_out  # pydantic: only for JSON

        emit_json(projects_out(projects))
        return
    if not projects:
        click.echo("No projects in memory yet. Run `causantic batch-ingest` first.")
        return
    # Team memory: the sessions' count is followed by whose they are ("alice 3, bob 1"; your local ones: "local").
    team = any(p.members for p in projects)
    by_member = [("by member", "left")] if team else []
    first = 4 if team else 3
    table(
        None,
        [("project", "left"), ("chunks", "right"), ("sessions", "right"), *by_member]
        + [("first (UTC)", "left"), ("last (UTC)", "left"), ("path", "left")],  # stored times are UTC
        [
            (
                p.name,
                p.chunks,
                p.sessions,
                *([", ".join(f"{member} {n}" for member, n in p.members) or "local"] if team else []),
                when(p.first_seen),
                when(p.last_seen),
                p.folder or "—",  # a Gemini project known by its folder's hash alone: no folder to show
            )
            for p in projects
        ],
        # A long path is cut at its start, its end naming the project's folder; in a narrower terminal
        # the first-seen column goes first, then whose sessions they are.
        keep_end={first + 2},
        optional=[first, *([3] if team else [])],
    )


@click.command("list-sessions", short_help="A project's sessions, newest first.")
@click.argument("project")
@time_range_options
@days_back_option
@defaulted_int_option("--limit", options.SESSIONS_LIMIT)
@json_option
def list_sessions_command(
    project: str, since: datetime | None, until: datetime | None, days_back: float | None, limit: int, as_json: bool
) -> None:
    """Sessions of one project, newest first, each with its title (its first real prompt).

    Example: causantic list-sessions myapp --days-back 7
    """
    with domain_errors(), Memory(config=read_config()) as memory:
        listing = memory.sessions(project, since=since, until=until, days_back=days_back, limit=limit)
    if as_json:
        from causantic.retrieval.output import sessions_out  # pydantic: only for JSON

        emit_json(sessions_out(listing))
        return
    sessions = listing.sessions
    if not sessions:
        from causantic.retrieval.listing import newest_note

        within = f" in that time range{newest_note(listing.newest)} (drop --from/--to/--days-back to list them all)"
        click.echo(f"No sessions found for project {listing.project!r}{within if since or until or days_back else ''}.")
        return
    team = any(s.members for s in sessions)  # team memory: whose each session is; local memory is all yours
    table(
        f"{listing.project}: {len(sessions):,} of {counted(listing.total, 'session')}, newest first",
        [
            ("session", "left"),
            ("source", "left"),
            ("start (UTC)", "left"),  # stored times are UTC: a reader elsewhere must not take them for local
            ("chunks", "right"),
            *([("member", "left")] if team else []),
            ("agents", "left"),
            ("title", "left"),
        ],
        [
            (
                short_session(s.session_id),
                s.source,
                when(s.started_at),
                s.chunks,
                *([", ".join(s.members)] if team else []),
                ", ".join(s.agents),
                s.short_title(LIST_TITLE_CHARS),
            )
            for s in sessions
        ],
    )
    if listing.total > len(sessions):
        click.echo(f"(showing {len(sessions)} of {listing.total}; use --from/--to or --limit to see more)")


@click.command("vacuum", short_help="Give forgotten memory's space to the disk.")
@json_option
def vacuum_command(as_json: bool) -> None:
    """Give the space forgotten memory left inside memory.db back to the disk, and let later forgets
    give theirs back by themselves (stores made before this release keep it until you run this once).
    Rebuilds the file: needs free disk about twice its used size (checked first), and writers wait
    until it ends; stopped midway, the file stays as it was.

    Example: causantic vacuum
    """
    with (
        domain_errors(),
        Memory(config=read_config()) as memory,
        working("Rebuilding memory.db") if not as_json else nullcontext(),
    ):
        result = memory.vacuum()
    if as_json:
        emit_json(result)
        return
    saved = result.bytes_before - result.bytes_after
    click.echo(
        f"memory.db: {byte_size(result.bytes_before)} → {byte_size(result.bytes_after)}"
        + (f" ({byte_size(saved)} given back to the disk)." if saved > 0 else " (nothing to give back).")
    )
    if result.reclaims and not result.reclaimed_before:  # said only when this vacuum turned it on
        click.echo("From now on forget gives the space it frees back by itself.")


COMMANDS = [stats_command, list_projects_command, list_sessions_command, vacuum_command]
