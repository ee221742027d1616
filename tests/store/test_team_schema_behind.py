"""A member whose team database is behind their release (its owner has not run `team init` since):
vector search still answers from team memory, and what they go without is told where they look."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from postgres_server import new_database
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.services import team_init

FIX = "the lock timeout came from the nightly billing deploy runner holding the migration lock"


@pytest.fixture
def behind(postgres_server: Any, tmp_path: Path) -> dict[str, str]:
    """Member erin's environment on a team database set up by the release before m009 (the project
    listing index), which her release works without; erin's own session of project shop is in it."""
    url = new_database(postgres_server)
    team_init(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "DROP INDEX chunks_project_time; CREATE INDEX chunks_project_time ON chunks(project_id, start_time);"
            " DELETE FROM schema_migrations WHERE version = 9"
        )
        conn.execute("DO $$ BEGIN CREATE ROLE erin LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute("GRANT causantic_member TO erin")
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "erin"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": psycopg.conninfo.make_conninfo(url, user="erin"),
        "CAUSANTIC_TEAM_USER": "erin",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    path = write_session(
        tmp_path / "t", "/work/shop", "00000001-0000-4000-8000-000000000001", [("why did the deploy hang", FIX)]
    )
    done = CliRunner().invoke(cli, ["ingest", str(path)], env=env)
    assert done.exit_code == 0, done.output
    return env


def test_a_member_on_a_database_lacking_a_change_they_do_without_searches_team_memory_by_vectors(
    behind: dict[str, str],
) -> None:
    """The vector index's own connection tried the migration the store's had been let off: "must be
    owner of table sessions", and search, recall and stats fell back to local memory alone."""
    runner = CliRunner()
    found = runner.invoke(cli, ["search", "why did the deploy hang", "--json"], env=behind)
    assert found.exit_code == 0, found.output
    answer = json.loads(found.output)
    assert [hit["store"] for hit in answer["hits"]] == ["team"]
    assert "must be owner" not in found.output
    stats = json.loads(runner.invoke(cli, ["stats", "--json"], env=behind).output)
    assert stats["vectors"] == 1 and stats["vector_error"] is None
