"""`causantic team init` and `team status`: a team's shared memory on PostgreSQL + pgvector."""

from __future__ import annotations

import click

from causantic.cli.output import domain_errors, emit_json, json_option, table
from causantic.facade import team_init, team_status
from causantic.retrieval.format import byte_size, when


@click.group("team", short_help="Team memory on PostgreSQL: set up, status.")
def team_command() -> None:
    """Team memory on PostgreSQL + pgvector: set up the database, see who shares what.

    Example: causantic team status
    """


@team_command.command("init", short_help="Check the server; create or upgrade the schema.")
@click.argument("url", required=False)
@json_option
def init_command(url: str | None, as_json: bool) -> None:
    """Check a PostgreSQL server (version, pgvector) and create or upgrade Causantic's schema there.

    URL is a libpq URL; without it, storage.postgresUrl is used. Prefer the configuration (or a
    ~/.pgpass file) to a password on the command line, where other users of the machine can see it.

    Example: causantic team init "postgresql://alice@db.example.com/causantic?sslmode=require"
    """
    with domain_errors():
        found = team_init(url)
    if as_json:
        from causantic.retrieval.output import TeamInitOut  # pydantic: only for JSON

        emit_json(
            TeamInitOut(
                server=found.server,
                server_version=found.version,
                pgvector_version=found.pgvector_installed,
                schema_version=found.schema_version,
                ann_indexes_made=list(found.ann_indexes_made),
            )
        )
        return
    click.echo(f"Team memory is ready at {found.server}.")
    click.echo(
        f"  PostgreSQL {found.version}, pgvector {found.pgvector_installed}, schema version {found.schema_version}"
    )
    if found.ann_indexes_made:
        click.echo(f"  Vector index (HNSW) made for {', '.join(found.ann_indexes_made)}")
    click.echo(
        "Grant causantic_member to each member's login role (causantic_admin to whoever may forget anyone's "
        "memory). Each member sets storage.backend to postgres, storage.postgresUrl to this database with their "
        'own role, and team.shareProjects to the projects they share (nothing is shared by default; "all" '
        "shares every one), then runs `causantic batch-ingest`."
    )


@team_command.command("status", short_help="Who shares what in team memory.")
@json_option
def status_command(as_json: bool) -> None:
    """Who shares the team memory: each member's sessions, chunks, text size and last ingest.

    Example: causantic team status --json
    """
    with domain_errors():
        found = team_status()
    if as_json:
        from causantic.retrieval.output import TeamMemberOut, TeamStatusOut  # pydantic: only for JSON

        members = [
            TeamMemberOut(
                user=m.user,
                session_count=m.sessions,
                chunk_count=m.chunks,
                text_bytes=m.text_bytes,
                last_ingest=m.last_ingest,
            )
            for m in found.members
        ]
        emit_json(
            TeamStatusOut(
                server=found.server,
                schema_version=found.schema_version,
                database_bytes=found.database_bytes,
                schema_missing=list(found.schema_missing),
                schema_note=found.schema_note,
                members=members,
            )
        )
        return
    # A line of its own: as a table's title it would wrap at the width of the table's few columns.
    click.echo(f"Team memory at {found.server} ({byte_size(found.database_bytes)})")
    if found.schema_note:
        click.echo(f"note: {found.schema_note}")
    if not found.members:  # a table of headings alone says nothing the sentence does not
        click.echo("No member has ingested anything yet.")
        return
    table(
        None,
        [("member", "left"), ("sessions", "right"), ("chunks", "right"), ("text", "right")]
        + [("last ingest (UTC)", "left")],  # stored times are UTC
        [(m.user, m.sessions, m.chunks, byte_size(m.text_bytes), when(m.last_ingest, "-")) for m in found.members],
    )


COMMANDS = [team_command]
