"""`causantic hook …`: the Claude Code hooks by hand, and their last runs.

Claude Code itself runs ``python -m causantic.hooks <name>`` (what ``causantic init`` registers),
which skips this CLI's imports; both run the same code.
"""

from __future__ import annotations

import sys

import click

from causantic.cli.output import console, domain_errors, emit_json, json_option, table
from causantic.entrypoints import HOOKS, WORKER, run_hook, run_hook_worker
from causantic.retrieval.format import counted, when_utc
from causantic.retrieval.prompt_report import PROMPTS_HEADING, added_text, explain_prompt, recent_prompts
from causantic.runs import PROMPT_HOOK, read_status


@click.group("hook", short_help="Claude Code's hooks, and how they went.")
def hook_group() -> None:
    """Run a Claude Code hook with its JSON on stdin (always exits 0; see `causantic hook status`).

    Example: echo '{"session_id": "s1", "cwd": "'$PWD'"}' | causantic hook session-start
    """


def _hook_command(name: str) -> click.Command:
    def run() -> None:
        sys.exit(run_hook(name))

    run.__doc__ = f"The {name} hook: reads Claude Code's hook JSON on stdin."
    return click.Command(name, callback=run, help=run.__doc__, short_help=f"What Claude Code runs at {name}.")


for _name in HOOKS:
    hook_group.add_command(_hook_command(_name))


@hook_group.command(WORKER, hidden=True)
@click.argument("hook")
@click.argument("event_json")
def worker_command(hook: str, event_json: str) -> None:
    """The detached ingest started by pre-compact and session-end."""
    sys.exit(run_hook_worker(hook, event_json))


@hook_group.command("status", short_help="When each hook last ran and how it went.")
@json_option
def status_command(as_json: bool) -> None:
    """When each hook last ran and how it went (also the `hook-status` MCP tool)."""
    runs = read_status()
    if as_json:
        from causantic.retrieval.output import status_out  # pydantic: only for --json, not the hooks

        emit_json(status_out(runs))
        return
    if not runs:
        click.echo("No hook has run yet.")
        return
    table(
        None,
        [("hook", "left"), ("last run", "left"), ("result", "left"), ("ms", "right"), ("outcome", "left")],
        [
            (
                name,
                when_utc(r.get("lastRun")),
                "ok" if r.get("success") else "FAILED",
                r.get("durationMs", ""),
                r.get("error") or (added_text(r) if name == PROMPT_HOOK else r.get("outcome", "")),
            )
            for name, r in sorted(runs.items())
        ],
    )
    prompts = recent_prompts(runs)
    if prompts:
        click.echo("\n" + PROMPTS_HEADING)
    for run in prompts:
        for shown in explain_prompt(run):
            _say(shown.text, *_INDENTS[shown.level])
    _warn_about_vectors()


# (first line, continuation) per PromptLine level: a moment's continuation sits under its text, past "1. ".
_INDENTS = {0: ("", "  "), 1: ("  ", "    "), 2: ("  ", "     ")}


def _say(text: str, first: str, rest: str) -> None:
    """A line wrapped to the terminal (80 columns when piped), its continuation indented under it."""
    click.echo(click.wrap_text(text, max(console.width, 40), initial_indent=first, subsequent_indent=rest))


def _warn_about_vectors() -> None:
    """Hooks ingest in the background: say when their chunks did not all get vectors."""
    from causantic.config import load_config, memory_missing
    from causantic.facade import Memory

    config = load_config()
    if memory_missing(config):  # nothing ingested yet: nothing to warn about, and nothing to create
        return
    with domain_errors(), Memory(config=config) as memory:
        stats = memory.stats()
    if n := stats.chunks_without_vectors:
        click.echo(
            f"Warning: {n:,} of {counted(stats.chunk_count, 'chunk')} {'has' if n == 1 else 'have'} no vector; vector "
            f"search cannot find {'it' if n == 1 else 'them'}. Run `causantic embed`.",
            err=True,
        )


COMMANDS = [hook_group]
