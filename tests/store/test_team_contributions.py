"""What team memory's listings say about who contributed what (each project's sessions by member), and
what they cost a member who has ingested nothing yet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from postgres_server import backend_settings
from process_support import cli_imports
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


def test_stats_says_what_each_member_contributed(team_config: Config, tmp_path: Path) -> None:
    env = _two_members(team_config, tmp_path)
    runner = CliRunner()
    shown = runner.invoke(cli, ["stats"], env=env)
    assert shown.exit_code == 0, shown.output
    rows = [" ".join(line.split()) for line in shown.output.splitlines()]
    at = rows.index("members │ 2")
    assert rows[at + 1 : at + 3] == ["alice │ 1 session, 1 chunk", "bob │ 3 sessions, 3 chunks"]
    members = json.loads(runner.invoke(cli, ["stats", "--json"], env=env).output)["members"]
    assert members == {"alice": {"sessions": 1, "chunks": 1}, "bob": {"sessions": 3, "chunks": 3}}


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
