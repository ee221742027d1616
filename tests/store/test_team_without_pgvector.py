"""A PostgreSQL server without pgvector: what `causantic team init` and a member's first commands
say. The server the other tests share has pgvector; this module starts one whose installation
lacks it (``start_server_without_pgvector``), a few seconds."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from postgres_server import require_postgres, start_server_without_pgvector

from causantic.cli.main import cli
from causantic.examples import SESSIONS_DIR


@pytest.fixture(scope="module")
def server_without_pgvector() -> Iterator[Any]:
    require_postgres()
    folder = Path(tempfile.mkdtemp(prefix="causantic-pgserver-"))  # not pytest's: see postgres_server.py
    server = start_server_without_pgvector(folder)
    try:
        yield server
    finally:
        server.cleanup()
        subprocess.run(["sh", "-c", 'rm -rf "$1" >/dev/null 2>&1 &', "sh", str(folder)], check=True)


@pytest.mark.slow
def test_init_and_a_member_s_first_commands_say_to_install_pgvector_not_a_traceback(
    server_without_pgvector: Any,
) -> None:
    url = server_without_pgvector.get_uri()
    install = "its admin installs it (Debian/Ubuntu: postgresql-16-pgvector"
    init = CliRunner().invoke(cli, ["team", "init", url], catch_exceptions=False)
    assert init.exit_code == 1 and install in init.output, init.output

    env = {
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_USER": "alice",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    # A member who set the backend before anyone ran init: search and ingest carry on with local
    # memory (hooks must not fail) and say why team memory is out of reach.
    search = CliRunner().invoke(cli, ["search", "redirect loop"], env=env, catch_exceptions=False)
    assert search.exit_code == 0 and install in search.output, search.output
    ingest = CliRunner().invoke(cli, ["ingest", "--no-embed", str(SESSIONS_DIR)], env=env, catch_exceptions=False)
    assert ingest.exit_code == 0 and install in ingest.output, ingest.output
    assert "4 files of shared projects wait for it" in ingest.output
    for result in (init, search, ingest):
        assert "Traceback" not in result.output and "HINT" not in result.output


@pytest.mark.slow
def test_team_join_on_a_server_without_pgvector_says_to_install_it_and_writes_nothing(
    server_without_pgvector: Any, tmp_path: Path
) -> None:
    home = tmp_path / "alice"
    joined = CliRunner().invoke(
        cli, ["team", "join", server_without_pgvector.get_uri(), "--share", "shop"], env={"CAUSANTIC_HOME": str(home)}
    )
    assert joined.exit_code == 1, joined.output
    assert "has no pgvector (the vector extension): its admin installs it" in " ".join(joined.output.split())
    assert not (home / "config.json").exists()
