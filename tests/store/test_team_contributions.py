"""What team memory's listings say about who contributed what (each project's sessions by member), and
what they cost a member who has ingested nothing yet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from postgres_server import backend_settings
from process_support import McpProcess, cli_imports, subprocess_env
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

pytestmark = pytest.mark.slow


@pytest.fixture
def team_config(request: pytest.FixtureRequest) -> Config:
    return backend_settings(request, "postgres")


def _two_members(team_config: Config, tmp_path: Path) -> dict[str, str]:
    """Alice's one shop session, and bob's two shop sessions and one blog session, in team memory; the
    environment of carol, a third member who reads them."""
    alice = write_session(tmp_path / "a", "/work/shop", "00000001-0000-4000-8000-000000000001", [("retry", "ok")])
    bob = [
        write_session(tmp_path / "b", "/work/shop", f"0000000{n}-0000-4000-8000-00000000000{n}", [("retry", "ok")])
        for n in (2, 3)
    ]
    blog = write_session(tmp_path / "b", "/work/blog", "00000004-0000-4000-8000-000000000004", [("post", "ok")])
    for member, files in (("alice", [alice]), ("bob", [*bob, blog])):
        with open_services(team_config.with_overrides({"team.user": member})) as services:
            assert ingest_paths(services, files, embed=False, workers=1).errors == []
    url = team_config.storage.postgres_url
    assert url is not None
    return {
        "CAUSANTIC_HOME": str(tmp_path / "carol"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url.get_secret_value(),
        "CAUSANTIC_TEAM_USER": "carol",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
        "COLUMNS": "120",
    }


def test_list_projects_says_which_members_ingested_each_projects_sessions(team_config: Config, tmp_path: Path) -> None:
    env = _two_members(team_config, tmp_path)
    runner = CliRunner()
    shown = runner.invoke(cli, ["list-projects"], env=env)
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert "by member" in lines[0]
    [shop] = [line for line in lines if line.startswith(" shop ")]
    [blog_line] = [line for line in lines if line.startswith(" blog ")]
    assert "alice 1, bob 2" in shop and "bob 1" in blog_line and "alice" not in blog_line
    listed = json.loads(runner.invoke(cli, ["list-projects", "--json"], env=env).output)["projects"]
    assert {p["name"]: p["members"] for p in listed} == {"shop": {"alice": 1, "bob": 2}, "blog": {"bob": 1}}


def test_list_sessions_says_whose_each_session_is_in_team_memory_and_not_in_local_memory(
    team_config: Config, tmp_path: Path
) -> None:
    """The table gets a member column, the JSON each session's members and the MCP tool's lines
    'by bob'; a single user's table keeps its columns (every session is theirs)."""
    env = _two_members(team_config, tmp_path)
    runner = CliRunner()
    shown = runner.invoke(cli, ["list-sessions", "shop"], env=env)
    assert shown.exit_code == 0, shown.output
    lines = [_cells(line) for line in shown.output.splitlines()]
    assert lines[1] == ["session", "source", "start (UTC)", "chunks", "member", "agents", "title"]
    members = {row[0]: row[4] for row in lines[3:]}
    assert members == {"00000001": "alice", "00000002": "bob", "00000003": "bob"}
    listed = json.loads(runner.invoke(cli, ["list-sessions", "shop", "--json"], env=env).output)["sessions"]
    assert {s["session_id"][:8]: s["members"] for s in listed} == {
        "00000001": ["alice"],
        "00000002": ["bob"],
        "00000003": ["bob"],
    }
    with McpProcess(env=subprocess_env(**env)) as server:
        said = server.call("list-sessions", {"project": "shop"}).content[0].text
    [alices] = [line for line in said.splitlines() if line.startswith("- 00000001")]
    assert "chunk, " in alices and ", by alice): " in alices

    local = {"CAUSANTIC_HOME": str(tmp_path / "single"), "COLUMNS": "120"}
    shop = write_session(tmp_path / "s", "/work/shop", "00000005-0000-4000-8000-000000000005", [("retry", "ok")])
    assert runner.invoke(cli, ["ingest", "--no-embed", str(shop)], env=local).exit_code == 0
    alone = runner.invoke(cli, ["list-sessions", "shop"], env=local).output.splitlines()
    assert _cells(alone[1]) == ["session", "source", "start (UTC)", "chunks", "agents", "title"]
    [single] = json.loads(runner.invoke(cli, ["list-sessions", "shop", "--json"], env=local).output)["sessions"]
    assert single["members"] == []


def _cells(line: str) -> list[str]:
    """A table row's cells (the columns are ruled with '┃' under the header, '│' below it)."""
    return [cell.strip() for cell in line.replace("┃", "│").split("│")]


def test_stats_says_what_each_member_contributed(team_config: Config, tmp_path: Path) -> None:
    env = _two_members(team_config, tmp_path)
    runner = CliRunner()
    shown = runner.invoke(cli, ["stats"], env=env)
    assert shown.exit_code == 0, shown.output
    rows = [" ".join(line.split()) for line in shown.output.splitlines()]
    at = rows.index("members │ 2")
    assert rows[at + 1 : at + 3] == ["alice │ 1 session, 1 chunk", "bob │ 3 sessions, 3 chunks"]
    members = json.loads(runner.invoke(cli, ["stats", "--json"], env=env).output)["members"]
    assert members == {"alice": {"session_count": 1, "chunk_count": 1}, "bob": {"session_count": 3, "chunk_count": 3}}


def test_a_members_stats_walks_no_transcript_folder_while_the_team_holds_sessions_of_others(
    team_config: Config, tmp_path: Path
) -> None:
    """A store holding sessions and no file mark of this member's was taken for one an upgrade had
    cleared the marks of (SQLite's m008): every `stats` of a member who had not ingested yet (a reader,
    a newcomer) walked their agents' folders and loaded the ingest pipeline, for files of no session
    in memory. PostgreSQL's marks were never cleared: each is written with its session."""
    shop = write_session(tmp_path / "a", "/work/shop", "00000001-0000-4000-8000-000000000001", [("retry", "ok")])
    with open_services(team_config) as alice:
        assert ingest_paths(alice, [shop], embed=False, workers=1).errors == []
    # Carol's own transcripts, never ingested: what a walk of her agents' folders would read.
    claude = tmp_path / "carol-claude"
    write_session(claude / "projects", "/work/site", "00000009-0000-4000-8000-000000000009", [("css", "ok")])
    url = team_config.storage.postgres_url
    assert url is not None
    loaded = cli_imports(
        tmp_path / "carol",
        "stats",
        CAUSANTIC_STORAGE_BACKEND="postgres",
        CAUSANTIC_STORAGE_POSTGRES_URL=url.get_secret_value(),
        CAUSANTIC_TEAM_USER="carol",
        CAUSANTIC_TEAM_SHARE_PROJECTS="all",
        CLAUDE_CONFIG_DIR=str(claude),
    )
    assert not loaded & {"causantic.ingest.pipeline", "causantic.transcripts.discovery"}
