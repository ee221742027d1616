"""What team memory's listings say about who contributed what: each project's sessions by member."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from postgres_server import backend_settings
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

pytestmark = pytest.mark.slow


@pytest.fixture
def team_config(request: pytest.FixtureRequest) -> Config:
    return backend_settings(request, "postgres")


def test_list_projects_says_which_members_ingested_each_projects_sessions(team_config: Config, tmp_path: Path) -> None:
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
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "carol"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url.get_secret_value(),
        "CAUSANTIC_TEAM_USER": "carol",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
        "COLUMNS": "120",
    }
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
