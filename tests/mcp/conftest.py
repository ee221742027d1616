"""Fixtures for the MCP tests: a store ingested from real transcripts, in-process or for a server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_server import BACKENDS, new_database
from process_support import McpProcess, causantic, corpus_paths, subprocess_env


@pytest.fixture
def memory(causantic_home: Path, corpus_dir: Path) -> Path:
    """This test's home, holding the example sessions and three real projects (no vectors)."""
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:
        report = ingest_paths(services, corpus_paths(corpus_dir), embed=False, workers=1)
    assert not report.errors and report.chunks_added > 100
    return causantic_home


@pytest.fixture(scope="module", params=BACKENDS)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path
) -> Iterator[McpProcess]:
    """One `causantic serve` process over stdio, on a store ingested by `causantic ingest --no-embed`;
    once with the SQLite store, once with the store in PostgreSQL."""
    home = tmp_path_factory.mktemp("served") / "causantic-home"
    env = subprocess_env(CAUSANTIC_HOME=str(home))
    if request.param == "postgres":
        url = new_database(request.getfixturevalue("postgres_server"))
        env |= {
            "CAUSANTIC_STORAGE_BACKEND": "postgres",
            "CAUSANTIC_STORAGE_POSTGRES_URL": url,
            "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
        }
    done = causantic("ingest", "--no-embed", *map(str, corpus_paths(corpus_dir)), env=env)
    assert done.returncode == 0, done.stderr
    with McpProcess(env=env) as server:
        server.home = home  # type: ignore[attr-defined]
        yield server
