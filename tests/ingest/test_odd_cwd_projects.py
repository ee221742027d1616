"""The project a session lands in, and the name `list-projects` gives it, for working directories
people do run agents in: the filesystem root, a path with a trailing separator or spaces, the home
directory itself, and paths written on Windows. One synthetic session each, ingested without vectors."""

from __future__ import annotations

import os

import pytest
from transcript_files import write_session

from causantic.facade import Memory

HOME = "/home/dana"  # the home folder while the sessions are read, whoever runs the tests (some have HOME=/)
CWDS = [
    "/",
    "/srv/app/",
    "/srv/app",  # the same folder as the one before: one project
    "/home/dev/my project",
    HOME,
    "C:\\Users\\me\\proj",
    "c:/Users/me/proj/",  # the same folder, as VS Code writes it
    "C:\\Users\\me\\proj\\",
    "C:\\",
    "\\\\server\\share\\repo\\",
]


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each project's path and the name it is listed under."""
    root = tmp_path_factory.mktemp("odd-cwds")
    for i, cwd in enumerate(CWDS):
        write_session(root / "projects" / f"p{i}", cwd, f"0dd0{i:04d}-0000-4000-8000-000000000000", [("hi", "ok")])
    with pytest.MonkeyPatch.context() as env, Memory(root / "home") as memory:
        env.setenv("HOME", HOME)
        report = memory.ingest([root / "projects"], embed=False)
        assert report.errors == []
        return {p.path: p.name for p in memory.projects()}


def test_one_folder_is_one_project_however_its_path_was_written(projects: dict[str, str]) -> None:
    assert sorted(projects) == sorted(
        ["/", "/srv/app", "/home/dev/my project", HOME, "C:\\Users\\me\\proj", "C:\\", "\\\\server\\share\\repo"]
    )


def test_each_project_is_named_by_its_folder(projects: dict[str, str]) -> None:
    assert projects["/srv/app"] == "app"
    assert projects["/home/dev/my project"] == "my project"  # spaces kept: the folder's name
    assert projects[HOME] == os.path.basename(HOME)  # the home directory: its folder's name, as any other
    assert projects["C:\\Users\\me\\proj"] == "proj"  # was the whole path: three spellings made three projects
    assert projects["\\\\server\\share\\repo"] == "repo"
    assert projects["C:\\"] == "C:" and projects["/"] == "/"  # a root has no folder name: the root itself
