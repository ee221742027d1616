"""canonical_project_path on real folder layouts built in tmp_path, and the folder-name fallback."""

from __future__ import annotations

from pathlib import Path

import pytest

from causantic.transcripts import canonical_project_path, folder_project
from causantic.transcripts.projects import repository_key


def _repo(path: Path) -> Path:
    (path / ".git" / "objects").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return path


def _linked_worktree(main: Path, worktree: Path, name: str, *, relative: bool = False) -> Path:
    git_dir = main / ".git" / "worktrees" / name
    git_dir.mkdir(parents=True)
    (git_dir / "commondir").write_text("../..\n")
    (git_dir / "gitdir").write_text(f"{worktree}/.git\n")
    worktree.mkdir(parents=True)
    target = Path("..") / main.name / ".git" / "worktrees" / name if relative else git_dir
    (worktree / ".git").write_text(f"gitdir: {target}\n")
    return worktree


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    canonical_project_path.cache_clear()


def test_a_folder_inside_a_repository_resolves_to_the_repository_root(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "proj")
    (repo / "src" / "pkg").mkdir(parents=True)
    assert canonical_project_path(str(repo / "src" / "pkg")) == str(repo)
    assert canonical_project_path(str(repo) + "/") == str(repo)


def test_a_linked_worktree_resolves_to_its_main_checkout(tmp_path: Path) -> None:
    main = _repo(tmp_path / "proj")
    worktree = _linked_worktree(main, tmp_path / "proj-feature", "proj-feature")
    (worktree / "lib").mkdir()
    assert canonical_project_path(str(worktree)) == str(main)
    assert canonical_project_path(str(worktree / "lib")) == str(main)


def test_a_worktree_with_a_relative_gitdir_resolves_too(tmp_path: Path) -> None:
    main = _repo(tmp_path / "proj")
    worktree = _linked_worktree(main, tmp_path / "wt", "wt", relative=True)
    assert canonical_project_path(str(worktree)) == str(main)


def test_a_claude_agent_worktree_inside_the_project_resolves_to_the_project(tmp_path: Path) -> None:
    main = _repo(tmp_path / "proj")
    worktree = _linked_worktree(main, main / ".claude" / "worktrees" / "agent-a4ca7529", "agent-a4ca7529")
    assert canonical_project_path(str(worktree)) == str(main)


def test_a_worktree_whose_commondir_file_is_missing_falls_back_to_the_gitdir_path(tmp_path: Path) -> None:
    main = _repo(tmp_path / "proj")
    worktree = _linked_worktree(main, tmp_path / "wt", "wt")
    (main / ".git" / "worktrees" / "wt" / "commondir").unlink()
    assert canonical_project_path(str(worktree)) == str(main)


def test_a_submodule_is_its_own_project(tmp_path: Path) -> None:
    outer = _repo(tmp_path / "outer")
    (outer / ".git" / "modules" / "lib").mkdir(parents=True)
    sub = outer / "lib"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    assert canonical_project_path(str(sub)) == str(sub)
    assert canonical_project_path(str(outer)) == str(outer)


def test_a_worktree_of_a_bare_repository_resolves_to_the_bare_repository(tmp_path: Path) -> None:
    bare = tmp_path / "proj.git"
    (bare / "worktrees" / "main").mkdir(parents=True)
    (bare / "worktrees" / "main" / "commondir").write_text("../..\n")
    worktree = tmp_path / "main"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {bare}/worktrees/main\n")
    assert canonical_project_path(str(worktree)) == str(bare)


def test_a_folder_outside_any_repository_is_its_own_project(tmp_path: Path) -> None:
    plain = tmp_path / "scratch"
    plain.mkdir()
    assert canonical_project_path(str(plain)) == str(plain)


def test_a_dotfiles_repository_in_home_does_not_swallow_other_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _repo(tmp_path / "home")
    (home / "notes").mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert canonical_project_path(str(home / "notes")) == str(home / "notes")
    assert canonical_project_path(str(home)) == str(home)


def test_a_path_from_another_machine_is_only_normalised(tmp_path: Path) -> None:
    assert canonical_project_path("/nonexistent-machine/u/proj/./src/../") == "/nonexistent-machine/u/proj"
    assert canonical_project_path("  /nonexistent-machine/u/proj  ") == "/nonexistent-machine/u/proj"
    assert canonical_project_path("C:\\Users\\u\\proj") == "C:\\Users\\u\\proj"
    assert canonical_project_path("") == ""


@pytest.mark.parametrize(
    "cwd", ["C:\\Users\\u\\proj", "C:\\Users\\u\\proj\\", "c:/Users/u/proj/", "C:\\Users\\u\\src\\..\\proj"]
)
def test_a_windows_path_is_one_project_however_a_tool_wrote_it(cwd: str) -> None:
    # Transcripts made on Windows: a trailing separator, forward slashes or a lower-case drive letter
    # (VS Code writes "c:") used to make another project of the same folder.
    assert canonical_project_path(cwd) == "C:\\Users\\u\\proj"


def test_a_windows_drive_or_share_root_keeps_its_separator_and_an_agent_worktree_maps_to_its_project() -> None:
    assert canonical_project_path("C:\\") == canonical_project_path("c:/") == "C:\\"
    assert canonical_project_path("\\\\server\\share\\repo\\") == "\\\\server\\share\\repo"
    assert canonical_project_path("D:\\w\\app\\.claude\\worktrees\\agent-1\\src") == "D:\\w\\app"


def test_a_claude_agent_worktree_from_another_machine_maps_to_its_project() -> None:
    cwd = "/nonexistent-machine/u/proj/.claude/worktrees/agent-a4ca7529/src"
    assert canonical_project_path(cwd) == "/nonexistent-machine/u/proj"


def test_resolution_is_cached_per_cwd(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "proj")
    canonical_project_path(str(repo))
    canonical_project_path(str(repo))
    assert canonical_project_path.cache_info().hits == 1


def test_a_session_without_cwd_is_keyed_by_its_agents_folder_name_wherever_that_folder_lives() -> None:
    for home in ("/home/u/.claude", "/Volumes/backup/claude"):
        for file in ("s1.jsonl", "s1/subagents/agent-a1.jsonl", "s1/subagents/workflows/wf/agent-a2.jsonl"):
            path = Path(home, "projects", "-Users-x-my-proj", file)
            assert folder_project(path, "claude-code") == "~/.claude/projects/-Users-x-my-proj"
    cursor = Path("/home/u/.cursor/projects/Users-x-my-proj/agent-transcripts/c1/c1.jsonl")
    assert folder_project(cursor, "cursor") == "~/.cursor/projects/Users-x-my-proj"
    # Elsewhere the folder's name says nothing of the workspace: its path stands for the project.
    assert folder_project(Path("/data/fixtures/session.jsonl"), "claude-code") == str(Path("/data/fixtures"))


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/api.git",
        "https://github.com/acme/api",
        "https://alice:ghp_secret@github.com/Acme/api.git/",
        "ssh://git@github.com:22/acme/api.git",
    ],
)
def test_every_form_of_a_clones_remote_names_one_repository_and_keeps_no_credentials(tmp_path: Path, url: str) -> None:
    (tmp_path / "api" / ".git").mkdir(parents=True)
    (tmp_path / "api" / ".git" / "config").write_text(
        f'[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://example.org/other/x\n'
        f'[remote "origin"]\n\turl = {url}\n',
        encoding="utf-8",
    )
    assert repository_key(str(tmp_path / "api")) == "git:github.com/acme/api"


def test_a_checkout_without_a_remote_or_with_a_local_one_names_no_repository(tmp_path: Path) -> None:
    (tmp_path / "solo" / ".git").mkdir(parents=True)
    (tmp_path / "solo" / ".git" / "config").write_text("[core]\n\tbare = false\n", encoding="utf-8")
    (tmp_path / "local" / ".git").mkdir(parents=True)
    (tmp_path / "local" / ".git" / "config").write_text('[remote "origin"]\n\turl = /srv/git/api.git\n', "utf-8")
    assert repository_key(str(tmp_path / "solo")) is None
    assert repository_key(str(tmp_path / "local")) is None
    assert repository_key(str(tmp_path / "nowhere")) is None
