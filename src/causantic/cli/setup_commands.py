"""`causantic init` and `causantic uninstall`: register with Claude Code, and take it out again."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from causantic.cli.ingest_commands import batch_ingest_command
from causantic.cli.output import agreed, domain_errors
from causantic.config import causantic_home
from causantic.integration.agents import agent_files, install_agents, uninstall_agents
from causantic.integration.claude_files import claude_paths
from causantic.integration.entries import HOOKS, PROMPT_MEMORY_HOOKS, SERVER_NAME, this_launcher
from causantic.integration.install import Report, install, uninstall

# What --purge deletes: the memory and the files hooks keep; never backups or config.json.
DATA = (
    "memory.db",
    "memory.db-wal",
    "memory.db-shm",
    "vectors",
    "hooks",
    "locks",
    "logs",
    "hook-status.json",
)


@click.command("init")
@click.option("--yes", "-y", is_flag=True, help="Answer yes to every question (register, then ingest).")
@click.option("--no-ingest", is_flag=True, help="Do not ingest the existing sessions.")
@click.option("--no-check", is_flag=True, help="Skip the health check at the end.")
@click.option(
    "--prompt-memory",
    is_flag=True,
    help="Also register the UserPromptSubmit hook that adds relevant past work to prompts (promptMemory.*).",
)
@click.pass_context
def init_command(ctx: click.Context, yes: bool, no_ingest: bool, no_check: bool, prompt_memory: bool) -> None:
    """Register Causantic with Claude Code: MCP server, hooks, first ingest, health check.

    \b
    Adds the user-scope MCP server "causantic" to ~/.claude.json and three hooks (SessionStart,
    PreCompact, SessionEnd) to ~/.claude/settings.json ($CLAUDE_CONFIG_DIR is honoured), merged
    with what is there; where Codex CLI or Gemini CLI is installed, the same server goes into
    [mcp_servers.causantic] of ~/.codex/config.toml ($CODEX_HOME honoured) and mcpServers of
    ~/.gemini/settings.json. Backups go to <home>/backups. Running it again is safe.
    --prompt-memory adds a fourth hook, UserPromptSubmit, that adds past work relevant to each prompt
    (only when it clears a strict bar). `causantic uninstall` removes exactly what it added.

    Example: causantic init --yes --prompt-memory
    """
    paths = claude_paths()
    launcher = this_launcher()
    click.echo(
        f"Causantic will register {launcher.python} -m causantic.mcp as MCP server {SERVER_NAME!r} "
        f"in {paths.claude_json},"
    )
    events = [*HOOKS, *(PROMPT_MEMORY_HOOKS if prompt_memory else ())]
    click.echo(f"and hooks {', '.join(events)} ({launcher.python} -m causantic.hooks <name>) in {paths.settings}.")
    agents = [f for f in agent_files() if f.installed]
    for agent in agents:
        click.echo(f"The same MCP server will be registered with {agent.agent} in {agent.path}.")
    if launcher.env:
        click.echo("With environment: " + ", ".join(f"{k}={v}" for k, v in sorted(launcher.env.items())))
    if not yes and not agreed("Go ahead?", default=True):
        raise click.Abort()
    with domain_errors():
        report = install(paths, launcher, prompt_memory=prompt_memory)
        report.changes += install_agents(agents, launcher)
    _render(report)

    if not no_ingest and paths.projects.is_dir():
        if yes or agreed(f"Ingest the sessions already in {paths.projects} now?", default=True):
            ctx.invoke(batch_ingest_command, folder=paths.projects)
    if not no_check:
        from causantic.integration.health import run_checks

        click.echo("Health check:")
        for check in run_checks(launcher, Path.cwd()):
            click.echo(f"  {'✓' if check.ok else '✗'} {check.name}: {check.detail}")
    click.echo(
        "Restart Claude Code so it loads the server and the hooks (/mcp and /hooks list them)"
        + ("; restart Codex / Gemini CLI too." if agents else ".")
    )


@click.command("uninstall")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--purge", is_flag=True, help="Also delete the stored memory (backups and config.json stay).")
def uninstall_command(yes: bool, purge: bool) -> None:
    """Remove what `causantic init` added to Claude Code's, Codex's and Gemini's files. Memory stays
    unless --purge.

    Example: causantic uninstall --yes
    """
    paths = claude_paths()
    what = f"the causantic MCP server from {paths.claude_json} and its hooks from {paths.settings}"
    what += "".join(f", the server from {a.path}" for a in agent_files() if a.path.exists())
    if purge:
        what += f", then delete the memory in {causantic_home()}"
    if not yes and not agreed(f"Remove {what}?", default=False):
        raise click.Abort()
    with domain_errors():
        report = uninstall(paths)
        report.changes += uninstall_agents(agent_files())
    _render(report)
    if all(change.action == "unchanged" for change in report.changes):  # a second run, or init never ran
        click.echo(f"Nothing to remove: Causantic is not registered in {paths.claude_json} or {paths.settings}.")
    if purge:
        home = causantic_home()
        for name in DATA:
            target = home / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        click.echo(f"Deleted the memory in {home}.")


def _render(report: Report) -> None:
    for change in report.changes:
        backup = f" (backup: {change.backup})" if change.backup else ""
        click.echo(f"{change.action:>9}  {change.path}: {change.detail}{backup}")


COMMANDS = [init_command, uninstall_command]
