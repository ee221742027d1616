"""``causantic ARGS`` run in this process through click's CliRunner, as the tests that drive the
CLI like a user see it: the test fails, showing what the command printed, unless it exits 0."""

from __future__ import annotations

from click.testing import CliRunner, Result

from causantic.cli.main import cli


def _ran(args: tuple[str, ...]) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def cli_output(*args: str) -> str:
    """What a terminal shows: standard output and standard error, interleaved."""
    return _ran(args).output


def cli_stdout(*args: str) -> str:
    """Standard output alone: what a pipe or ``--json`` consumer reads."""
    return _ran(args).stdout
