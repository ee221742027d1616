"""`causantic team init`, `team join` and `team status`: a team's shared memory on PostgreSQL + pgvector."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from causantic.cli.output import domain_errors, emit_json, json_option, note, table
from causantic.facade import team_init, team_join, team_leave, team_status
from causantic.retrieval.format import byte_size, when
from causantic.wording import counted

if TYPE_CHECKING:
    from pathlib import Path

    from causantic.config import SettingChange
    from causantic.facade import ProjectShare, TeamJoin


@click.group("team", short_help="Team memory on PostgreSQL: set up, join, leave, status.")
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
        "memory). Each member then runs `causantic team join URL --share PROJECT` with their own role in the URL "
        "(nothing is shared by default; --share all shares every project), then `causantic batch-ingest`."
    )


@team_command.command("join", short_help="Check team memory and point your settings at it.")
@click.argument("url")
@click.option(
    "--share",
    "share",
    multiple=True,
    metavar="PROJECT",
    help='A project to share (name, last folders or path; repeat it), or "all". Default: as team.shareProjects is.',
)
@click.option("--user", metavar="NAME", help="The name on your rows in team memory (team.user; default your login).")
@json_option
def join_command(url: str, share: tuple[str, ...], user: str | None, as_json: bool) -> None:
    """Join a team's memory: check the server as you will connect to it, then write storage.backend,
    storage.postgresUrl, team.user and team.shareProjects to your config.json (other keys stay) and
    say what the next ingest shares. Nothing is written when the check fails.

    URL is a libpq URL naming your own role (the team's admin granted it causantic_member); prefer a
    ~/.pgpass file to a password in it. Only the projects you name are shared.

    Example: causantic team join "postgresql://alice@db.example.com/causantic?sslmode=require" --share shop
    """
    with domain_errors():
        joined = team_join(url, tuple(share) or None, user)
    if as_json:
        from causantic.retrieval.output import (  # pydantic: only for JSON
            ProjectShareOut,
            SettingOverrideOut,
            TeamJoinOut,
        )

        def shares(projects: tuple[ProjectShare, ...]) -> list[ProjectShareOut]:
            return [
                ProjectShareOut(name=p.name, path=p.path, session_count=p.sessions, local_only_count=p.local_only)
                for p in projects
            ]

        emit_json(
            TeamJoinOut(
                server=joined.check.server,
                role=joined.check.role,
                user=joined.user,
                schema_version=joined.check.schema_version,
                schema_note=joined.check.schema_note,
                members=list(joined.check.members),
                config_file=str(joined.config_file),
                changes=_changes_out(joined.changes),
                overridden=[SettingOverrideOut(key=k, set_in=where) for k, where in joined.overridden],
                share_all=joined.share_all,
                shared=shares(joined.shared),
                kept_local=shares(joined.kept_local),
                unmatched=list(joined.unmatched),
            )
        )
        return
    _say_joined(joined)


@team_command.command("leave", short_help="Use local memory alone again.")
@json_option
def leave_command(as_json: bool) -> None:
    """Leave team memory: set storage.backend back to sqlite in your config.json, so Causantic uses
    your local memory alone at once. The team's URL and team.shareProjects stay in the file (for
    `causantic team join` to use again), and what you shared stays in team memory.

    Example: causantic team leave
    """
    with domain_errors():
        left = team_leave()
    if as_json:
        from causantic.retrieval.output import SettingOverrideOut, TeamLeaveOut  # pydantic: only for JSON

        emit_json(
            TeamLeaveOut(
                config_file=str(left.file),
                changes=_changes_out(left.changes),
                overridden=[SettingOverrideOut(key=k, set_in=where) for k, where in left.overridden],
            )
        )
        return
    if not left.changes:
        click.echo(f"{left.file} already says storage.backend sqlite: Causantic uses your local memory alone.")
    else:
        _say_changes(left.file, left.changes)
        click.echo(
            "Causantic now answers from your local memory alone. What you shared stays in team memory: "
            "`causantic batch-ingest --force` reads those projects' transcripts into your local memory, and "
            "`causantic forget PROJECT`, run after joining again, takes your rows of a project out of team memory."
        )
    for key, where in left.overridden:
        note(f"note: {key} is also set in {where}, which wins over config.json: change or unset it there.")


def _changes_out(changes: tuple[SettingChange, ...]) -> list[Any]:
    from causantic.retrieval.output import SettingChangeOut  # pydantic: only for JSON

    return [SettingChangeOut(key=c.key, before=_spelled(c.before), after=_spelled(c.after) or "null") for c in changes]


def _say_changes(file: Path, changes: tuple[SettingChange, ...]) -> None:
    """Each key written to ``file`` whose value changed: before -> after, as config.json spells them."""
    click.echo(f"Wrote {file}:")
    width = max(len(c.key) for c in changes)
    for c in changes:
        click.echo(f"  {c.key:<{width}}  {_spelled(c.before) or '(not set)'} -> {_spelled(c.after)}")


def _spelled(value: Any) -> str | None:
    """A value as config.json spells it ("postgres", ["shop"]); a secret's asterisks as they are."""
    from causantic.config import MASK

    return None if value is None else value if value == MASK else json.dumps(value)


def _say_joined(joined: TeamJoin) -> None:
    check = joined.check
    others = [m for m in check.members if m != joined.user]
    who = f"members so far: {', '.join(others)}" if others else "no other member has ingested anything yet"
    named = "" if joined.user_set else " (your login name: --user NAME names your rows otherwise)"
    click.echo(f"Team memory at {check.server} answers you as {joined.user}{named}, role {check.role}; {who}.")
    if check.schema_note:
        note(f"note: {check.schema_note}")
    if joined.changes:
        _say_changes(joined.config_file, joined.changes)
    else:
        click.echo(f"{joined.config_file} already says so: nothing changed.")
    for key, where in joined.overridden:
        note(f"note: {key} is also set in {where}, which wins over config.json: change or unset it there.")
    if joined.share_all:
        everything = 'every project (team.shareProjects is "all")'
        click.echo(f"The next `causantic batch-ingest` shares {everything}{':' if joined.shared else '.'}")
    elif joined.shared or joined.unmatched:
        click.echo("The next `causantic batch-ingest` shares:")
    else:
        click.echo(
            "Nothing is shared: every project stays in your local memory. Name the projects to share with "
            "--share PROJECT (repeat it), or --share all."
        )
        return
    for p in joined.shared:
        upload = (
            f"; `causantic batch-ingest --force` uploads the {counted(p.local_only, 'session')} kept locally so far"
            if p.local_only
            else ""
        )
        click.echo(f"  {p.name} ({counted(p.sessions, 'session')} in your memory{upload})")
    for name in joined.unmatched:
        click.echo(f"  {name} (no project of that name in your memory yet: its sessions, once ingested)")
    if joined.kept_local:
        kept = ", ".join(f"{p.name} ({counted(p.sessions, 'session')})" for p in joined.kept_local)
        click.echo(f"Stays in your local memory only: {kept}.")


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
