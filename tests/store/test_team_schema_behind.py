"""A member whose team database is behind their release (its owner has not run `team init` since):
vector search still answers from team memory, and what they go without is told where they look."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from click.testing import CliRunner
from mcp import Client
from postgres_server import drop_ann_indexes, new_database
from starlette.testclient import TestClient
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.config import Config
from causantic.dashboard.app import create_app
from causantic.dashboard.security import Secrets
from causantic.embedding.models import get_spec
from causantic.facade import Memory
from causantic.mcp.server import build_server
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
    assert stats["vector_count"] == 1 and stats["vector_error"] is None


def test_what_a_member_goes_without_is_told_once_by_stats_mcp_stats_and_the_dashboard(
    behind: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only ingest and `team status` said it, and a member whose hooks ingest never reads either:
    stats (CLI, --json, MCP) and the dashboard's overview now say it once, whom to ask included."""
    gap = "lacks schema change 9 of this causantic (members may not change its tables), so listing projects reads"
    runner = CliRunner()
    shown = runner.invoke(cli, ["stats"], env=behind)
    assert shown.exit_code == 0, shown.output
    said = " ".join(shown.output.split())
    assert said.count(gap) == 1 and "Note: Team memory at PostgreSQL" in said
    assert "runs `causantic team init`." in said
    figures = json.loads(runner.invoke(cli, ["stats", "--json"], env=behind).output)
    assert gap in figures["team_schema_note"] and figures["team_unavailable"] is None

    for name, value in behind.items():
        monkeypatch.setenv(name, value)

    async def mcp_stats() -> Any:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return await client.call_tool("stats", {})

    assert " ".join(anyio.run(mcp_stats).content[0].text.split()).count(gap) == 1

    secrets = Secrets(port=8766)
    with TestClient(create_app(secrets, opener=Memory), base_url="http://127.0.0.1:8766") as client:
        overview = html.unescape(client.get("/", params={"token": secrets.token}).text)
    assert overview.count(gap) == 1 and "All healthy" not in overview


def test_stats_json_says_why_team_memory_is_unavailable_as_a_reason_and_a_message(
    postgres_server: Any, tmp_path: Path
) -> None:
    """`team_unreachable` also held "lacks schema changes … only the owner may make": a script could
    not tell a server down from one waiting for `team init`. Now a reason, then the sentence."""
    url = new_database(postgres_server)
    team_init(url)
    with psycopg.connect(url, autocommit=True) as conn:  # as a database from before the text features (m003)
        conn.execute("DROP TABLE session_stems; DROP FUNCTION causantic_session_stems() CASCADE")
        for column in ("stems", "own_stems", "bulk"):
            conn.execute(f"ALTER TABLE chunks DROP COLUMN {column}")
        conn.execute("DELETE FROM schema_migrations WHERE version IN (3, 6)")
        conn.execute("DO $$ BEGIN CREATE ROLE frank LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        conn.execute("GRANT causantic_member TO frank")
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "frank"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": psycopg.conninfo.make_conninfo(url, user="frank"),
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    down = json.loads(CliRunner().invoke(cli, ["stats", "--json"], env=env).output)["team_unavailable"]
    assert down["reason"] == "schema"
    assert "lacks schema changes 3 and 6 this causantic needs" in down["message"]
    missing = dict(env, CAUSANTIC_STORAGE_POSTGRES_URL=psycopg.conninfo.make_conninfo(url, dbname="no_such_db"))
    down = json.loads(CliRunner().invoke(cli, ["stats", "--json"], env=missing).output)["team_unavailable"]
    assert down["reason"] == "refused" and "refused the connection" in down["message"]
    assert "Cannot reach" not in down["message"]  # it answered: "does not exist"


def test_team_init_makes_the_vector_index_a_members_role_may_not_and_stats_says_while_it_is_missing(
    behind: dict[str, str], postgres_server: Any, tmp_path: Path
) -> None:
    """Only the tables' owner may index them, and only the owner's own embedding made the HNSW index:
    a team whose owner administers the database and never ingests searched every vector exactly,
    while stats said "ANN index: ready". `team init` makes it now, and stats tells when it is missing."""
    url = psycopg.conninfo.make_conninfo(behind["CAUSANTIC_STORAGE_POSTGRES_URL"], user=None)
    owner = psycopg.conninfo.make_conninfo(
        url, user=psycopg.conninfo.conninfo_to_dict(postgres_server.get_uri())["user"]
    )
    with psycopg.connect(owner, autocommit=True) as conn:
        drop_ann_indexes(conn)  # as a database set up by the release before, whose owner never embedded
    runner = CliRunner()
    figures = json.loads(runner.invoke(cli, ["stats", "--json"], env=behind).output)
    assert figures["vector_index"] == "missing"
    assert "vector search scans every vector until the role that owns its tables" in figures["vector_index_note"]
    assert "runs `causantic team init`" in figures["vector_index_note"]

    model = get_spec(Config().embedding.model).id
    done = runner.invoke(cli, ["team", "init", owner, "--json"], env={"CAUSANTIC_HOME": str(tmp_path / "owner")})
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["ann_indexes_made"] == [model]
    figures = json.loads(runner.invoke(cli, ["stats", "--json"], env=behind).output)
    assert figures["vector_index"] == "ready" and figures["vector_index_note"] is None
    again = runner.invoke(cli, ["team", "init", owner, "--json"], env={"CAUSANTIC_HOME": str(tmp_path / "owner")})
    assert json.loads(again.output)["ann_indexes_made"] == []
