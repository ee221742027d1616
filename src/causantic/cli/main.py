"""The ``causantic`` command: a group whose commands live in topic modules, imported on demand.

A command's module (and whatever it imports) loads only when that command runs, so ``causantic
stats`` never pays for the embedding runtime or ``causantic search`` for the ingest pipeline;
``--help`` imports them all to list them. ``tests/test_cli_imports.py`` checks each family's imports.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable

import click

from causantic import __version__, write_waits
from causantic.cli.output import interrupted_says, say_write_waits
from causantic.errors import StoreError

# Command name -> module under causantic.cli that defines it (in its COMMANDS list).
COMMAND_MODULES: dict[str, str] = {
    "ingest": "ingest_commands",
    "batch-ingest": "ingest_commands",
    "stats": "memory_commands",
    "list-projects": "memory_commands",
    "list-sessions": "memory_commands",
    "vacuum": "memory_commands",
    "search": "search_commands",
    "recall": "episodic_commands",
    "predict": "episodic_commands",
    "reconstruct": "episodic_commands",
    "forget": "episodic_commands",
    "prune": "episodic_commands",
    "merge-projects": "episodic_commands",
    "split-project": "episodic_commands",
    "embed": "index_commands",
    "reindex": "index_commands",
    "config": "index_commands",
    "models": "index_commands",
    "serve": "serve_commands",
    "hook": "hook_commands",
    "init": "setup_commands",
    "uninstall": "setup_commands",
    "cluster": "topic_commands",
    "clusters": "topic_commands",
    "dashboard": "dashboard_commands",
    "team": "team_commands",
}


# Commands that never tell their user that a write waits: the hooks (what they print reaches the
# agent's context) and the servers (no one reads their stderr as it happens).
UNTOLD_WAITS = {"hook", "serve", "dashboard"}

# Stands in for "-" while click wraps help: textwrap breaks only after an ASCII hyphen.
_UNBROKEN = "\u2011"


class HelpFormatter(click.HelpFormatter):
    """Help wrapped at spaces only. click's wrapping also breaks a word after a hyphen, which put
    '--days-' and 'back', or 'claude-' and 'code', on two lines, where an option or an example can
    no longer be read or copied as one."""

    def write_text(self, text: str) -> None:
        start = len(self.buffer)
        super().write_text(text.replace("-", _UNBROKEN))
        self._restore(start)

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        start = len(self.buffer)
        super().write_dl([(term, text.replace("-", _UNBROKEN)) for term, text in rows], col_max, col_spacing)
        self._restore(start)

    def _restore(self, start: int) -> None:
        self.buffer[start:] = [part.replace(_UNBROKEN, "-") for part in self.buffer[start:]]


class HelpContext(click.Context):
    formatter_class = HelpFormatter


def _with_help_layout(command: click.Command) -> click.Command:
    """Every command's help, sub-commands' too, through :class:`HelpFormatter` (a context's formatter
    is its own command's ``context_class``'s, not inherited from the group's)."""
    command.context_class = HelpContext
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_help_layout(sub)
    return command


class LazyGroup(click.Group):
    """The group: imports a command's module only when the command is looked up, and turns a store
    failure any command lets through (already one sentence: damaged, full, busy) into a clean exit."""

    context_class = HelpContext

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module_name = COMMAND_MODULES.get(cmd_name)
        if module_name is None:
            return None
        module = importlib.import_module(f"causantic.cli.{module_name}")
        return _with_help_layout(next(c for c in module.COMMANDS if c.name == cmd_name))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command names the ones meant: 'serch' → search, 'list' → list-projects, list-sessions.
        A known one, unless it is in :data:`UNTOLD_WAITS`, will say when a write waits for another
        process, and is named to a process that waits for its writes ("the `causantic forget` started
        at 10:02"). A hook names itself (Claude Code's session-end hook); a server names each of its
        writes while it runs (``write_waits.serving``)."""
        try:
            name, command, rest = super().resolve_command(ctx, args)
        except click.UsageError as exc:
            typed, known = args[0] if args else "", self.list_commands(ctx)
            meant = [known_name for known_name in known if typed and known_name.startswith(typed)]
            meant = meant or difflib.get_close_matches(typed, known, n=2)
            if not meant:
                raise
            raise click.UsageError(f"{exc.message} Did you mean {' or '.join(meant)}?", ctx) from exc
        if name not in UNTOLD_WAITS:
            say_write_waits()
            write_waits.named(f"`causantic {name}`")
        return name, command, rest

    def invoke(self, ctx: click.Context) -> object:
        try:
            with interrupted_says(""):  # Ctrl-C: 'Interrupted.' and exit 130, not 'Aborted!' and 1
                return super().invoke(ctx)
        except StoreError as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="causantic")
def cli() -> None:
    """Long-term, local, episodic memory for AI coding agents (Claude Code, Codex CLI, Gemini CLI,
    Copilot CLI, Cursor, Factory Droid, Pi).

    \b
    Quick start:
      causantic batch-ingest  # read past sessions
      causantic search "fix"  # find past context
      causantic recall "fix"  # the story behind it
      causantic init          # connect Claude Code

    batch-ingest reads each agent's own session folder that exists (~/.claude/projects and the
    other agents': the README lists them).
    `causantic COMMAND --help` says what a command does, with an example.
    """


def main() -> None:
    _show_warnings_plainly()
    cli()


def _show_warnings_plainly() -> None:
    """A configuration warning reads as one line on stderr, not as Python's file:line report."""
    import warnings

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: object = None,
        line: str | None = None,
    ) -> None:
        click.echo(f"causantic: warning: {message}", err=True)

    warnings.showwarning = show
