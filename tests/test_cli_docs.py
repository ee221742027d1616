"""Every command documents itself: help text with an example, and `--json` where output is data."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from process_support import causantic, subprocess_env

from causantic.cli.main import cli


def _commands() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    commands = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    assert all(commands.values()), "a command name maps to a module that does not define it"
    return {name: command for name, command in commands.items() if command is not None}


def test_the_readme_carries_no_count_of_tests_that_the_next_commit_makes_stale() -> None:
    """'the fast lane (922 of the 1,405 tests; …)' was wrong a few commits later; the README says
    how to count them instead."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert not re.findall(r"\b\d[\d,]* (?:of the [\d,]+ )?tests\b", readme)
    assert '`pytest -m "not slow" --collect-only -q | tail -1`' in readme


def test_every_command_has_help_with_an_example() -> None:
    missing = [name for name, command in _commands().items() if not command.help or "Example:" not in command.help]
    assert not missing, f"commands without help or an example: {missing}"


def test_the_quick_start_lines_up_its_comments() -> None:
    shown = CliRunner().invoke(cli, ["--help"]).output
    examples = [line for line in shown.splitlines() if line.lstrip().startswith("causantic ")]
    assert len(examples) >= 2 and len({line.index("#") for line in examples}) == 1, examples


def test_every_command_answers_help() -> None:
    runner = CliRunner()
    for name in _commands():
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert "Example:" in result.output


def test_data_commands_offer_json() -> None:
    needs_json = {
        "search",
        "recall",
        "predict",
        "reconstruct",
        "list-projects",
        "list-sessions",
        "stats",
        "forget",
        "ingest",
        "batch-ingest",
    }
    for name in needs_json & set(_commands()):
        options = {opt for p in _commands()[name].params for opt in getattr(p, "opts", [])}
        assert "--json" in options, name


def test_every_command_module_is_in_the_lazy_map() -> None:
    import importlib
    import pkgutil

    import causantic.cli
    from causantic.cli.main import COMMAND_MODULES

    for info in pkgutil.iter_modules(causantic.cli.__path__):
        if info.name.endswith("_commands"):
            module = importlib.import_module(f"causantic.cli.{info.name}")
            for command in module.COMMANDS:
                assert COMMAND_MODULES.get(command.name) == info.name, command.name


def _every_command(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The path of this command and of each visible sub-command, groups within groups."""
    if not isinstance(command, click.Group):
        return [path]
    ctx = click.Context(command)
    subs = [(name, command.get_command(ctx, name)) for name in command.list_commands(ctx)]
    return [path, *(p for name, sub in subs if sub and not sub.hidden for p in _every_command(sub, (*path, name)))]


def test_every_help_fits_a_50_column_terminal() -> None:
    """`init --help` kept ~100-column lines (a \\b block) that broke on a narrow terminal."""
    runner = CliRunner()
    too_wide = {}
    for path in _every_command(cli):
        shown = runner.invoke(cli, [*path, "--help"], terminal_width=50)  # the runner ignores COLUMNS
        assert shown.exit_code == 0, (path, shown.output)
        wide = [line for line in shown.output.splitlines() if len(line) > 50]
        if wide:
            too_wide[" ".join(path) or "causantic"] = wide
    assert not too_wide, too_wide


def test_help_follows_the_terminals_columns() -> None:
    """What the test above stands for: a real `causantic init --help` in a 50-column terminal."""
    shown = causantic("init", "--help", env=subprocess_env(COLUMNS="50"))
    assert shown.returncode == 0 and "Example:" in shown.stdout
    assert max(map(len, shown.stdout.splitlines())) <= 50


def test_help_gives_the_defaults_configured_now(causantic_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`recall --help` said 'default 10000; recall and predict 2500' whatever config.json said, and
    `search --help` had '--mode  Override retrieval.primary.' without the mode it would use."""
    causantic_home.mkdir(parents=True)
    (causantic_home / "config.json").write_text('{"episodes": {"maxTokens": 4000}}', encoding="utf-8")
    monkeypatch.setenv("CAUSANTIC_RETRIEVAL_PRIMARY", "keyword")
    runner = CliRunner()
    recall = " ".join(runner.invoke(cli, ["recall", "--help"], catch_exceptions=False).output.split())
    assert "Token budget of the answer. [default: 4000 (episodes.maxTokens); 100<=x<=100000]" in recall
    search = " ".join(runner.invoke(cli, ["search", "--help"], catch_exceptions=False).output.split())
    assert "[default: 10000 (tokens.mcpMaxResponse); 100<=x<=100000]" in search
    assert "[default: 10 (retrieval.defaultLimit); 1<=x<=100]" in search
    assert "[default: keyword (retrieval.primary)]" in search


def test_the_top_help_names_every_agent_read_and_the_main_commands() -> None:
    """It read 'Long-term, local, episodic memory for Claude Code.' above a quick start of two commands,
    though batch-ingest reads Codex CLI and Gemini CLI sessions too (and since, Copilot CLI, Cursor, Factory
    Droid and Pi sessions) and recall is the main answer."""
    shown = " ".join(CliRunner().invoke(cli, ["--help"]).output.split())
    assert (
        "memory for AI coding agents (Claude Code, Codex CLI, Gemini CLI, Copilot CLI, Cursor, Factory Droid, Pi)."
        in shown
    )
    assert 'causantic recall "fix" # the story behind it' in shown and "causantic init # connect Claude Code" in shown


def test_every_command_listed_in_help_is_described_whole() -> None:
    """`causantic --help` cut most descriptions mid-phrase: 'Ingest every session under a folder; by
    default every...', 'Register Causantic with Claude Code: MCP server, hooks,...'."""
    runner = CliRunner()
    for path in _every_command(cli):
        command = cli
        for name in path:
            command = command.get_command(click.Context(command), name)  # type: ignore[attr-defined]
        if not isinstance(command, click.Group):
            continue
        for width in (80, 60):
            shown = runner.invoke(cli, [*path, "--help"], terminal_width=width).output
            listed = shown[shown.index("Commands:") :].splitlines()[1:]
            assert listed and not [line for line in listed if line.endswith("...")], (path, width, listed)
