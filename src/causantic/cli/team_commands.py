"""`causantic team init` and `team status`: a team's shared memory on PostgreSQL + pgvector."""

from __future__ import annotations

import click

from causantic.cli.output import domain_errors, emit_json, json_option, table
from causantic.facade import team_init, team_status
from causantic.retrieval.format import when


@click.group("team")
def team_command() -> None:
    """Team memory on PostgreSQL + pgvector: set up the database, see who shares what.

    Example: causantic team status
    """


@team_command.command("init")
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
        emit_json(
            {
                "server": found.server,
                "version": found.version,
                "pgvector": found.pgvector_installed,
                "schema_version": found.schema_version,
            }
        )
        return
    click.echo(f"Team memory is ready at {found.server}.")
    click.echo(
        f"  PostgreSQL {found.version}, pgvector {found.pgvector_installed}, schema version {found.schema_version}"
    )
    click.echo(
        "Each member sets storage.backend to postgres and storage.postgresUrl to this database "
        "(CAUSANTIC_STORAGE_BACKEND / CAUSANTIC_STORAGE_POSTGRES_URL), then runs `causantic batch-ingest`."
    )


@team_command.command("status")
@json_option
def status_command(as_json: bool) -> None:
    """Who shares the team memory: each member's sessions, chunks, text size and last ingest.

    Example: causantic team status --json
    """
    with domain_errors():
        found = team_status()
    if as_json:
        emit_json(
            {
                "server": found.server,
                "schema_version": found.schema_version,
                "database_bytes": found.database_bytes,
                "members": [
                    {
                        "user": m.user,
                        "sessions": m.sessions,
                        "chunks": m.chunks,
                        "text_bytes": m.text_bytes,
                        "last_ingest": m.last_ingest,
                    }
                    for m in found.members
                ],
            }
        )
        return
    table(
        f"Team memory at {found.server} ({found.database_bytes / 1e6:.1f} MB)",
        [("member", "left"), ("sessions", "right"), ("chunks", "right"), ("text MB", "right"), ("last ingest", "left")],
        [(m.user, m.sessions, m.chunks, f"{m.text_bytes / 1e6:.1f}", when(m.last_ingest, "-")) for m in found.members],
    )
    if not found.members:
        click.echo("No member has ingested anything yet.")


COMMANDS = [team_command]
