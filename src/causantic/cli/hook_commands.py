"""`causantic hook …`: the Claude Code hooks by hand, and their last runs.

Claude Code itself runs ``python -m causantic.hooks <name>`` (what ``causantic init`` registers),
which skips this CLI's imports; both run the same code.
"""

from __future__ import annotations

import sys

import click

from causantic.cli.output import console, domain_errors, emit_json, json_option, table
from causantic.entrypoints import HOOKS, WORKER, run_hook, run_hook_worker
from causantic.retrieval.format import counted
from causantic.runs import PROMPT_HOOK, HookRun, read_status


@click.group("hook")
def hook_group() -> None:
    """Run a Claude Code hook with its JSON on stdin (always exits 0; see `causantic hook status`).

    Example: echo '{"session_id": "s1", "cwd": "'$PWD'"}' | causantic hook session-start
    """


def _hook_command(name: str) -> click.Command:
    def run() -> None:
        sys.exit(run_hook(name))

    run.__doc__ = f"The {name} hook: reads Claude Code's hook JSON on stdin."
    return click.Command(name, callback=run, help=run.__doc__)


for _name in HOOKS:
    hook_group.add_command(_hook_command(_name))


@hook_group.command(WORKER, hidden=True)
@click.argument("hook")
@click.argument("event_json")
def worker_command(hook: str, event_json: str) -> None:
    """The detached ingest started by pre-compact and session-end."""
    sys.exit(run_hook_worker(hook, event_json))


@hook_group.command("status")
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
                r.get("lastRun", "?")[:19].replace("T", " "),
                "ok" if r.get("success") else "FAILED",
                r.get("durationMs", ""),
                r.get("error") or (_added(r) if name == PROMPT_HOOK else r.get("outcome", "")),
            )
            for name, r in sorted(runs.items())
        ],
    )
    if PROMPT_HOOK in runs:
        last = runs[PROMPT_HOOK]
        prompts = [r for r in (last, *last.get("earlier", [])) if not r.get("error")]
        if prompts:
            click.echo("\nRecent prompts (newest first): memory added or not, and why")
        for run in prompts:
            _explain_prompt(run)
    _warn_about_vectors()


def _added(run: HookRun) -> str:
    """The prompt hook's row in the table: whether it added memory (the why follows the table)."""
    injected = run.get("injected", [])
    return f"memory added: {counted(len(injected), 'past moment')}" if injected else "no memory added"


def _explain_prompt(run: HookRun) -> None:
    """One prompt's memory, plainly: added or not, why in each scope searched, and each moment added
    with its own figures (the coverage gate holds for each scope's best match, the relevance bar for
    every moment)."""
    injected = run.get("injected", [])
    where = f", project {run['project']}" if run.get("project") else ""
    _say(f"{run.get('lastRun', '?')[:19].replace('T', ' ')} UTC{where}: {_added(run)}.", "", "  ")
    outcome = run.get("outcome", "")
    if injected and ": " in outcome:  # "added N past moments, C characters: <why per scope>"
        outcome = outcome.split(": ", 1)[1]
    for part in outcome.split("; "):
        _say(part, "  ", "    ")
    for i, m in enumerate(injected, 1):
        scope = "other project " if m.get("otherProject") else ""
        _say(
            f"{i}. {scope}{m['project']}, session {m['sessionId'][:8]} ({m['date'][:10]}): relevance "
            f"{m['relevance']:.0%}, covers {m['coverage']:.0%} of the prompt's words",
            "  ",
            "     ",
        )


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
    if stats.chunks_without_vectors:
        click.echo(
            f"Warning: {stats.chunks_without_vectors} of {stats.chunks} chunks have no vector; vector search cannot "
            "find them. Run `causantic embed`.",
            err=True,
        )


COMMANDS = [hook_group]
