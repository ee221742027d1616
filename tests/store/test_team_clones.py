"""Team members' clones of one repository, at different paths, are one project of team memory.

Each member keeps the repository where they like (``/home/alice/src/api``, ``/Users/bob/code/api-service``):
the project was the clone's path, so team memory held one project per member, list-projects listed each,
and ``--project api`` matched several. The repository (the clone's remote, read from ``.git/config``) is
now recorded with the project, and a clone first seen at another path joins it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from postgres_server import backend_settings, interleaved
from transcript_files import git_checkout, write_session

from causantic.cli.main import cli
from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.retrieval.regroup import apply_move, merge_preview
from causantic.services import Services, open_services

pytestmark = pytest.mark.slow


@pytest.fixture
def team_config(request: pytest.FixtureRequest) -> Config:
    return backend_settings(request, "postgres")


def _session(tmp_path: Path, clone: Path, n: int, prompt: str) -> Path:
    return write_session(tmp_path / f"t{n}", str(clone), f"0000000{n}-0000-4000-8000-00000000000{n}", [(prompt, "ok")])


def _ingest(services: Services, path: Path) -> None:
    assert ingest_paths(services, [path], embed=False, workers=1).errors == []


def _member(config: Config, name: str) -> Config:
    return config.with_overrides({"team.user": name})


def test_two_members_clones_at_different_paths_are_one_project(team_config: Config, tmp_path: Path) -> None:
    alices = git_checkout(tmp_path / "home" / "alice" / "src" / "api", "git@github.com:acme/api.git")
    bobs = git_checkout(tmp_path / "Users" / "bob" / "code" / "api-service", "https://github.com/Acme/api")
    with open_services(_member(team_config, "alice")) as alice:
        _ingest(alice, _session(tmp_path, alices, 1, "fix the upload retry backoff"))
    with open_services(_member(team_config, "bob")) as bob:
        _ingest(bob, _session(tmp_path, bobs, 2, "the upload retry is still flaky"))
        # The hooks find bob's project by his folder.
        project = bob.store.project_by_path(str(bobs))
        assert project is not None and project.path == str(alices)
    url = team_config.storage.postgres_url
    assert url is not None
    env = {
        "CAUSANTIC_HOME": str(tmp_path / "bob-home"),
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url.get_secret_value(),
        "CAUSANTIC_TEAM_USER": "bob",
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    runner = CliRunner()
    listed = json.loads(runner.invoke(cli, ["list-projects", "--json"], env=env).output)["projects"]
    assert [(p["name"], p["members"]) for p in listed] == [("api", {"alice": 1, "bob": 1})]
    # Bob names it by his own folder's name; both members' sessions answer.
    found = runner.invoke(cli, ["search", "upload retry", "--project", "api-service", "--mode", "keyword"], env=env)
    assert found.exit_code == 0, found.output
    assert "User: alice" in found.output and "User: bob" in found.output


def test_two_members_making_their_clones_project_at_the_same_moment_make_one(
    team_config: Config, tmp_path: Path
) -> None:
    """Of different folder names, the two ingests took no lock in common: each found no project of the
    repository, and made its own."""
    alices = git_checkout(tmp_path / "alice" / "api", "git@github.com:acme/api.git")
    bobs = git_checkout(tmp_path / "bob" / "api-service", "https://github.com/acme/api.git")
    with open_services(_member(team_config, "alice")) as alice, open_services(_member(team_config, "bob")) as bob:
        first, second = _session(tmp_path, alices, 1, "retry"), _session(tmp_path, bobs, 2, "retry")
        waited, failures = interleaved(alice, [lambda: _ingest(alice, first)], bob, lambda: _ingest(bob, second))
        assert failures == [], [f"{type(e).__name__}: {e}" for e in failures]
        assert waited
        assert [(p.name, p.path) for p in alice.store.projects_by_id(alice.store.projects_with_chunks())] == [
            ("api", str(alices))
        ]


def test_a_project_made_before_repositories_were_recorded_is_joined_once_its_member_ingests_again(
    team_config: Config, tmp_path: Path
) -> None:
    alices = git_checkout(tmp_path / "alice" / "api", "git@github.com:acme/api.git")
    bobs = git_checkout(tmp_path / "bob" / "api-service", "https://github.com/acme/api.git")
    with open_services(_member(team_config, "alice")) as alice, open_services(_member(team_config, "bob")) as bob:
        older = alice.store.resolve_project(str(alices), str(alices))  # as a release before this one made it
        _ingest(alice, _session(tmp_path, alices, 1, "retry"))
        _ingest(bob, _session(tmp_path, bobs, 2, "retry"))
        assert alice.store.projects_with_chunks() == [older.id]


def test_a_merge_beside_a_members_ingest_into_the_project_it_merges_loses_nothing(
    team_config: Config, tmp_path: Path
) -> None:
    """Bob ingests a session of his clone while alice merges his clone's project (recorded apart by an
    older release) into hers: his ingest waits for the merge, then lands in the merged project."""
    alices = git_checkout(tmp_path / "alice" / "api", "git@github.com:acme/api.git")
    bobs = git_checkout(tmp_path / "bob" / "api-service", "https://github.com/acme/api.git")
    with open_services(_member(team_config, "alice")) as alice, open_services(_member(team_config, "bob")) as bob:
        alice.store.resolve_project(str(alices), str(alices))  # as a release before this one made them
        bob.store.resolve_project(str(bobs), str(bobs))
        _ingest(alice, _session(tmp_path, alices, 1, "retry"))
        _ingest(bob, _session(tmp_path, bobs, 2, "retry"))
        preview = merge_preview(alice.store, "api-service", "api", "alice")
        later = _session(tmp_path, bobs, 3, "retry again")
        waited, failures = interleaved(
            alice, [lambda: apply_move(alice.store, preview, "alice")], bob, lambda: _ingest(bob, later)
        )
        assert failures == [], [f"{type(e).__name__}: {e}" for e in failures]
        assert waited
        projects = alice.store.projects_by_id(alice.store.projects_with_chunks())
        assert [(p.name, len(alice.store.session_folders(p.id))) for p in projects] == [("api", 3)]
