"""The ``causantic`` command: a group whose commands live in topic modules."""

from __future__ import annotations

import click

from causantic import __version__
from causantic.cli import (
    dashboard_commands,
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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="causantic")
def cli() -> None:
    """Long-term, local, episodic memory for Claude Code.

    \b
    Quick start:
      causantic batch-ingest            # read ~/.claude/projects
      causantic search "flaky test fix"  # find past context
    """


for module in (ingest_commands, memory_commands, search_commands, episodic_commands, index_commands,
               serve_commands, hook_commands, setup_commands, topic_commands, dashboard_commands):
    for command in module.COMMANDS:
        cli.add_command(command)


def main() -> None:
    cli()
