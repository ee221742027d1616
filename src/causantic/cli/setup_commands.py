"""`causantic init` and `causantic uninstall`: register with Claude Code, and take it out again."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from causantic.cli.ingest_commands import WORKERS, ingest_paths
from causantic.cli.output import agreed, domain_errors, said_no
from causantic.config import agent_folders, causantic_home, load_config
from causantic.integration.agents import MANIFEST as AGENTS_MANIFEST
from causantic.integration.agents import agent_files, install_agents, registered_agents, uninstall_agents
from causantic.integration.claude_files import claude_paths
from causantic.integration.entries import HOOKS, PROMPT_MEMORY_HOOKS, SERVER_NAME, this_launcher
from causantic.integration.install import MANIFEST, Report, install, registered, uninstall
from causantic.retrieval.format import byte_size, counted
from causantic.sources import SOURCE_NAMES
from causantic.wording import listed

if TYPE_CHECKING:
    from causantic.config import Config

# What --purge deletes besides the memory itself (storage.dbPath and storage.vectorPath, wherever they
# are configured): what was derived from it or kept by the hooks, all rebuilt on demand. Never the
# settings (config.json), the backups of the agents' files, or the MCP HTTP server's key (http-token).
DERIVED = (
    ("cache", "caches rebuilt on demand: the topic map, the converted embedding model"),
    ("hooks", "the hooks' records: briefings given, moments added to prompts"),
    ("hook-status.json", "each hook's last run"),
    ("logs", "logs"),
    ("locks", "lock files"),
    ("run", "the prompt-memory process's socket"),
)
KEPT = (
    ("config.json", "your settings"),
    ("backups", "backups of Claude Code's and the agents' files"),
    ("http-token", "the key of `causantic serve --http`"),
)


@click.command("init", short_help="Connect Claude Code (and the other agents' MCP).")
@click.option("--yes", "-y", is_flag=True, help="Answer yes to every question (register, then ingest).")
@click.option("--no-ingest", is_flag=True, help="Do not ingest the existing sessions.")
@click.option("--no-check", is_flag=True, help="Skip the health check at the end.")
@click.option(
    "--prompt-memory",
    is_flag=True,
    help="Also register the UserPromptSubmit hook that adds relevant past work to prompts (promptMemory.*).",
)
def init_command(yes: bool, no_ingest: bool, no_check: bool, prompt_memory: bool) -> None:
    """Register Causantic with Claude Code: MCP server, hooks, first ingest, health check.

    Adds the user-scope MCP server "causantic" to ~/.claude.json and three hooks (SessionStart,
    PreCompact, SessionEnd) to ~/.claude/settings.json ($CLAUDE_CONFIG_DIR is honoured), merged
    with what is there. Where another agent with MCP is installed, the same server goes into its
    file: [mcp_servers.causantic] of ~/.codex/config.toml ($CODEX_HOME honoured), mcpServers of
    ~/.gemini/settings.json, ~/.copilot/mcp-config.json ($COPILOT_HOME honoured),
    ~/.cursor/mcp.json and ~/.factory/mcp.json (Pi has no MCP). Backups go to <home>/backups. Then
    it ingests the sessions already there, every agent's as `causantic batch-ingest` does. Running
    it again is safe.
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
        click.echo(f"The same MCP server will be registered with {SOURCE_NAMES[agent.agent]} in {agent.path}.")
    if launcher.env:
        click.echo("With environment: " + ", ".join(f"{k}={v}" for k, v in sorted(launcher.env.items())))
    if not yes and not agreed("Go ahead?", default=True):
        said_no("Nothing was changed.")
    with domain_errors(), _file_errors("init"):
        report = install(paths, launcher, prompt_memory=prompt_memory)
        report.changes += install_agents(agents, launcher)
    _render(report)

    if not no_ingest:
        with domain_errors():
            folders = agent_folders(load_config())
        if folders and (
            yes or agreed(f"Ingest the sessions already in {', '.join(map(str, folders))} now?", default=True)
        ):
            ingest_paths(folders, force=False, no_embed=False, as_json=False, workers=WORKERS)
    if not no_check:
        from causantic.integration.health import run_checks

        click.echo("Health check:")
        for check in run_checks(launcher, Path.cwd()):
            click.echo(f"  {'✓' if check.ok else '✗'} {check.name}: {check.detail}")
    names = [SOURCE_NAMES[a.agent] for a in agents]
    others = listed(names)
    click.echo(
        "Restart Claude Code so it loads the server and the hooks (/mcp and /hooks list them)"
        + (f"; restart {others} too." if others else ".")
    )


@click.command("uninstall", short_help="Remove what init added (--purge: memory too).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--purge",
    is_flag=True,
    help="Also delete the memory and what derives from it (listed first); config.json, backups and http-token stay.",
)
def uninstall_command(yes: bool, purge: bool) -> None:
    """Remove what `causantic init` added to Claude Code's files and the other agents' (Codex CLI,
    Gemini CLI, Copilot CLI, Cursor, Factory Droid). Memory stays unless --purge.

    Example: causantic uninstall --yes
    """
    paths = claude_paths()
    nothing = f"Nothing to remove: Causantic is not registered in {paths.claude_json} or {paths.settings}."
    with domain_errors():
        claude = registered(paths)
        others = registered_agents(agent_files())
    files = listed([str(a.path) for a in others])
    if claude:
        entries = [f"the causantic MCP server from {paths.claude_json} and its hooks from {paths.settings}"]
        entries += [f"the same server from {files}"] if others else []
    else:
        entries = [f"the causantic MCP server from {files}"] if others else []
    doomed = _purge_plan() if purge else []
    if not entries and not doomed:  # a second run, or init never ran: nothing to ask about
        click.echo(nothing)
        return
    freed = byte_size(sum(size for _, size, _ in doomed))
    memory = f"the memory listed above ({freed})"
    if not entries:
        question = f"Delete {memory}?"
    else:
        question = f"Remove {', and '.join(entries)}{f', then delete {memory}' if doomed else ''}?"
    if not yes and not agreed(question, default=False):
        said_no("Nothing was changed." if entries else "Nothing was deleted.")
    if entries:
        with domain_errors(), _file_errors("uninstall"):
            report = uninstall(paths)
            report.changes += uninstall_agents(agent_files())
        _render(report)
    else:
        click.echo(nothing)
    if purge:
        for target, _, _ in doomed:  # exactly what the preview listed
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)
        left = [str(target) for target, _, _ in doomed if target.exists() or target.is_symlink()]
        if left:
            raise click.ClickException("could not delete: " + ", ".join(left))
        click.echo(f"Deleted the memory: {counted(len(doomed), 'item')}, {freed}.")


@contextmanager
def _file_errors(command: str) -> Iterator[None]:
    """A file init or uninstall cannot write (a read-only ~/.claude, a home owned by another user)
    is named with the cause, not shown as a traceback; what was written before it stays, and running
    the command again finishes the job."""
    try:
        yield
    except OSError as exc:
        where = exc.filename or "a file"
        raise click.ClickException(
            f"Cannot write {where}: {exc.strerror or exc}. Make it writable for you (or run as its owner), "
            f"then run `causantic {command}` again; running it again is safe."
        ) from exc


def _purge_plan() -> list[tuple[Path, int, str]]:
    """What --purge will delete (path, bytes, what it is), printed before the question: the memory
    (the SQLite file, its journal files, the vector index) and what was derived from it; then what
    stays in the data directory."""
    from causantic.config import load_config
    from causantic.home import db_path, is_team_memory, vector_path

    with domain_errors():
        config = load_config()
    home = causantic_home()
    db = db_path(config)
    memory = [
        (db, _memory_counts(config) if db.exists() else ""),
        *((db.with_name(db.name + end), "its journal") for end in ("-wal", "-shm")),
        (vector_path(config), "the vector index"),
    ]
    doomed = [(path, _bytes(path), about) for path, about in (*memory, *((home / n, a) for n, a in DERIVED))]
    doomed = [entry for entry in doomed if entry[0].exists() or entry[0].is_symlink()]
    if not doomed:
        click.echo(f"--purge: no memory to delete in {home}.")
        return []
    click.echo(f"--purge will delete ({byte_size(sum(size for _, size, _ in doomed))} in all):")
    shown = [
        (path.name if path.parent == home else str(path)) + ("/" if path.is_dir() else "") for path, _, _ in doomed
    ]
    for name, (_, size, about) in zip(shown, doomed, strict=True):
        click.echo(f"  {name:<{max(map(len, shown))}}  {byte_size(size):>9}  {about}".rstrip())
    if is_team_memory(config.storage):
        click.echo("  Team memory on the PostgreSQL server is not touched.")
    kept = [f"{n}{'/' if (home / n).is_dir() else ''} ({a})" for n, a in KEPT if (home / n).exists()]
    records = {MANIFEST, AGENTS_MANIFEST}  # what init added: uninstall removes them
    named = {n for n, _ in (*DERIVED, *KEPT)} | records | {path.name for path, _, _ in doomed if path.parent == home}
    others = sorted(p.name for p in home.iterdir() if p.name not in named) if home.is_dir() else []
    if kept or others:
        click.echo(f"It keeps in {home}: " + ", ".join([*kept, *others]) + ".")
    return doomed


def _memory_counts(config: Config) -> str:
    """What the local memory holds, in people's words; a store that cannot be read is deleted all the same."""
    from causantic.errors import CausanticError
    from causantic.facade import Memory

    storage = config.storage.model_copy(update={"backend": "sqlite"})  # the local file, not team memory
    try:
        with Memory(config=config.model_copy(update={"storage": storage})) as memory:
            stats = memory.stats()
    except (CausanticError, OSError) as exc:
        return f"memory (cannot count it: {exc})"
    projects = counted(stats.project_count, "project")
    return f"memory: {counted(stats.chunk_count, 'chunk')} of {counted(stats.session_count, 'session')} in {projects}"


def _bytes(path: Path) -> int:
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _render(report: Report) -> None:
    for change in report.changes:
        backup = f" (backup: {change.backup})" if change.backup else ""
        click.echo(f"{change.action:>9}  {change.path}: {change.detail}{backup}")


COMMANDS = [init_command, uninstall_command]
