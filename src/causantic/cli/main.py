"""The ``causantic`` command: a group whose commands live in topic modules."""

from __future__ import annotations

import sqlite3

import click

from causantic import __version__
from causantic.cli import (
    episodic_commands,
    hook_commands,
    index_commands,
    ingest_commands,
    memory_commands,
    search_commands,
    serve_commands,
    setup_commands,
    topic_commands,
)


class _Cli(click.Group):
    """The group; an SQLite error any command lets through becomes one sentence, never a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except sqlite3.Error as exc:
            from causantic.errors import store_failure

            raise click.ClickException(str(store_failure(exc, f"at {_db_location()}"))) from exc


def _db_location() -> str:
    from causantic.config import db_path, load_config

    try:
        return str(db_path(load_config()))
    except Exception:  # the configuration itself is broken: name the default place
        from causantic.config import causantic_home

        return str(causantic_home() / "memory.db")


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="causantic")
def cli() -> None:
    """Long-term, local, episodic memory for Claude Code.

    \b
    Quick start:
      causantic batch-ingest            # read ~/.claude/projects
      causantic search "flaky test fix"  # find past context
    """


for module in (ingest_commands, memory_commands, search_commands, episodic_commands, index_commands,
               serve_commands, hook_commands, setup_commands, topic_commands):
    for command in module.COMMANDS:
        cli.add_command(command)


def main() -> None:
    cli()
