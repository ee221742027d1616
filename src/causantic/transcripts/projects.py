"""Project identity: which project a session (or a hook call) belongs to, from its ``cwd``.

A project is the canonical path of the working directory: the git root above it, and for a linked
worktree (``.git`` is a file ``gitdir: <main>/.git/worktrees/<name>``) the main checkout, so that
sessions run in worktrees share their project. Resolution reads files only (no ``git`` process),
and is cached per ``cwd``.

A ``cwd`` that does not exist on this machine (transcripts copied from elsewhere) cannot be
resolved through git; it is normalised and, as the one heuristic, a Claude Code agent worktree
(``<project>/.claude/worktrees/<name>``, where ``isolation: "worktree"`` agents run) maps to
``<project>``. Normalising is what makes one folder one project however a tool wrote it: a
trailing separator, ``.`` and ``..`` steps, and for a Windows path (``C:\\…``, ``c:/…``,
``\\\\server\\share\\…``, from a transcript made on Windows) forward slashes and the drive letter's
case. Display names and collisions between same-named projects are the store's concern.

A session none of whose records names a ``cwd`` (Cursor's agent transcripts; a Claude Code session
holding only summaries or snapshots) is filed under the folder its agent keeps it in
(:func:`folder_project`), by that folder's name where the name is what the agent made of the
workspace's path (``~/.claude/projects/-Users-dev-shop``, ``~/.cursor/projects/Users-dev-shop``):
where the agent's folder lives (a new machine, a restored backup, a team member's home) is no part
of the key.
"""

from __future__ import annotations

import ntpath
import os
import re
from functools import lru_cache
from pathlib import Path

from causantic.sources import Source

__all__ = [
    "CLAUDE_PROJECTS",
    "CURSOR_PROJECTS",
    "canonical_project_path",
    "folder_project",
    "is_folder_key",
    "repository_key",
    "session_folder",
]

# What stands for the project of a session without cwd (:func:`folder_project`), followed by the
# name of the folder its agent keeps it in: Claude Code's ``projects/<folder>``, Cursor's workspace.
CLAUDE_PROJECTS = "~/.claude/projects/"
CURSOR_PROJECTS = "~/.cursor/projects/"

_CLAUDE_WORKTREES = ("/.claude/worktrees/", "\\.claude\\worktrees\\")
_WINDOWS_PATH = re.compile(r"[A-Za-z]:[\\/]|\\\\")  # a drive's folder, or a UNC share


@lru_cache(maxsize=4096)
def canonical_project_path(cwd: str) -> str:
    """The project path for `cwd` (rules in the module docstring); ``""`` for an empty `cwd`.

    A ``.git`` in the home directory (a dotfiles repository) is ignored unless `cwd` is the home
    directory itself: otherwise every non-repository folder under home would become one project.
    """
    path = _normalise(cwd)
    if not path:
        return ""
    if not os.path.isdir(path):
        return _outside_claude_worktree(path)
    root = _git_root(path)
    if root is None:
        return path
    return _main_checkout(root)


@lru_cache(maxsize=1024)
def repository_key(project_path: str) -> str | None:
    """The repository a project path is a checkout of, as ``git:<host>/<owner>/<repo>``: its remote
    ``origin`` (else its first remote) read from ``.git/config``, the same for every clone whatever
    its URL's form (``git@github.com:acme/api.git``, ``https://github.com/acme/api``); None for a
    path that is no checkout on this machine, or one without a remote. What lets the clones of one
    repository that team members keep at different paths be one project."""
    dot_git = os.path.join(project_path, ".git")
    git_dir = _read_gitdir(dot_git, project_path) if os.path.isfile(dot_git) else dot_git
    if git_dir is None:
        return None
    config = os.path.join(_common_dir(git_dir) or git_dir, "config")
    try:
        with open(config, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    remotes: dict[str, str] = {}
    section = ""
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip()
            continue
        key, sep, value = stripped.partition("=")
        name = re.fullmatch(r'remote\s+"(.+)"', section)
        if name and sep and key.strip().lower() == "url" and value.strip():
            remotes.setdefault(name.group(1), value.strip())
    url = remotes.get("origin") or next(iter(remotes.values()), None)
    return _repository(url) if url else None


def _repository(url: str) -> str | None:
    """``host/owner/repo`` of a remote URL in any of git's forms; None for a local path."""
    found = re.fullmatch(r"(?:[a-z][a-z0-9+.-]*://)?(?:[^@/]+@)?([^/:]+)(?::\d+)?[:/](.+)", url.strip(), re.IGNORECASE)
    if found is None or url.startswith(("/", ".", "file:")) or _WINDOWS_PATH.match(url):
        return None
    path = found.group(2).strip("/").removesuffix(".git").strip("/")
    return f"git:{found.group(1)}/{path}".lower() if path else None  # hosts compare their paths in any case


def session_folder(path: Path, source: Source) -> Path:
    """The folder that stands for a session's project when none of its records names one: a Cursor
    transcript's project folder (``<folder>/agent-transcripts/[<id>/]<id>.jsonl``), a Claude Code
    sub-agent's session folder (``<folder>/<session>/subagents/…/agent-<id>.jsonl``, read without
    its session's file), else the file's folder."""
    mark = "agent-transcripts" if source == "cursor" else "subagents" if source == "claude-code" else ""
    above = next((p.parent for p in path.parents if mark and p.name == mark), None)
    if above is None:
        return path.parent
    return above if source == "cursor" else above.parent


def folder_project(path: Path, source: Source) -> str:
    """The project of a session none of whose records names a cwd (`path`: its file): its folder's
    path (:func:`session_folder`), but the folder's name where the agent named the folder after the
    workspace's path: ``~/.claude/projects/<name>`` for a Claude Code session in
    ``<anywhere>/projects/<name>/``, ``~/.cursor/projects/<name>`` for a Cursor transcript in its
    workspace's folder (``<name>/agent-transcripts/…``), wherever ``~/.claude`` or ``~/.cursor``
    is. The name encodes the workspace's path (``-Users-dev-shop``); where the agent's folder lives
    does not (a new machine, a restored backup, another user name), and keyed by its whole path
    a moved ``~/.claude`` or ``~/.cursor`` made a second project of every workspace. The key is no
    absolute path, so it joins no project named by a cwd (:func:`is_folder_key`)."""
    folder = session_folder(path, source)
    if source == "cursor" and any(p.name == "agent-transcripts" for p in path.parents):
        return CURSOR_PROJECTS + folder.name
    if source == "claude-code" and folder.parent.name == "projects":
        return CLAUDE_PROJECTS + folder.name
    return str(folder)


def is_folder_key(project_path: str) -> bool:
    """Whether a project path is a folder's key (:func:`folder_project`), not an absolute path."""
    return project_path.startswith((CLAUDE_PROJECTS, CURSOR_PROJECTS))


def _normalise(cwd: str) -> str:
    path = cwd.strip()
    if not path:
        return ""
    if path.startswith("/"):
        path = os.path.normpath(path)
        if path.startswith("//"):  # normpath keeps a POSIX-special leading "//"
            path = "/" + path.lstrip("/")
    elif _WINDOWS_PATH.match(path):
        path = ntpath.normpath(path)  # "C:/a/b/" reads as C:\a\b; a drive's root keeps its separator
        if path[1] == ":":  # VS Code and others write "c:", Windows itself "C:": one folder
            path = path[0].upper() + path[1:]
    return path


def _outside_claude_worktree(path: str) -> str:
    for marker in _CLAUDE_WORKTREES:
        cut = path.find(marker)
        if cut > 0:
            return path[:cut]
    return path


def _git_root(path: str) -> str | None:
    """The nearest folder at or above `path` holding a ``.git`` entry, skipping a home-dir repo."""
    home = os.path.expanduser("~")
    current = path
    while True:
        if (current != home or current == path) and os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _main_checkout(root: str) -> str:
    """`root` itself, or the main checkout when `root` is a linked worktree."""
    dot_git = os.path.join(root, ".git")
    if not os.path.isfile(dot_git):
        return root
    git_dir = _read_gitdir(dot_git, root)
    if git_dir is None:
        return root
    common = _common_dir(git_dir)
    if common is None:  # a submodule, or a plain separate git dir: its own project
        return root
    name = os.path.basename(common)
    if name.startswith("."):  # <main>/.git, or a "<project>/.bare" style container
        return os.path.dirname(common)
    worktree = _core_worktree(common)
    return worktree if worktree is not None else common  # a bare repository stands for itself


def _read_gitdir(dot_git: str, root: str) -> str | None:
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as f:
            first = f.readline().strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    target = first[len("gitdir:") :].strip()
    if not target:
        return None
    return os.path.normpath(os.path.join(root, target))


def _common_dir(git_dir: str) -> str | None:
    """The shared git directory of a linked worktree's `git_dir`, or None when it is not one."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as f:
            relative = f.readline().strip()
        if relative:
            return os.path.normpath(os.path.join(git_dir, relative))
    except OSError:
        pass
    parent = os.path.dirname(git_dir)
    if os.path.basename(parent) == "worktrees":  # the worktree's git dir was removed or moved
        return os.path.dirname(parent)
    return None


def _core_worktree(common: str) -> str | None:
    """``core.worktree`` from `common`'s config (how a submodule's git dir names its checkout)."""
    try:
        with open(os.path.join(common, "config"), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    section = ""
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip().lower()
            continue
        key, sep, value = stripped.partition("=")
        if section == "core" and sep and key.strip().lower() == "worktree" and value.strip():
            return os.path.normpath(os.path.join(common, value.strip()))
    return None
