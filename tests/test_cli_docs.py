"""Every command documents itself: help text with an example, and `--json` where output is data."""

from __future__ import annotations

import click
from click.testing import CliRunner

from causantic.cli.main import cli


def _commands() -> dict[str, click.Command]:
    return dict(cli.commands)


def test_every_command_has_help_with_an_example() -> None:
    missing = [name for name, command in _commands().items()
               if not command.help or "Example:" not in command.help]
    assert not missing, f"commands without help or an example: {missing}"


def test_every_command_answers_help() -> None:
    runner = CliRunner()
    for name in _commands():
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, (name, result.output)
        assert "Example:" in result.output


def test_data_commands_offer_json() -> None:
    needs_json = {"search", "recall", "predict", "reconstruct", "list-projects", "list-sessions", "stats",
                  "forget", "ingest", "batch-ingest"}
    for name in needs_json & set(_commands()):
        options = {opt for p in _commands()[name].params for opt in getattr(p, "opts", [])}
        assert "--json" in options, name
