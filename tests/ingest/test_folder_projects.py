"""Sessions whose records name no cwd are filed under their agent's folder by its name, wherever the
agent's folder lives: ``~/.claude/projects/<folder>`` read from a moved or copied ``~/.claude`` (a new
machine, a restored backup, a team member's home) is the same project, and a store an older release
keyed by the folder's whole path takes the name's key on its next plain ingest, each session once.
Real transcript files in folders at two places under a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from transcript_files import write_session

from causantic.config import Config
from causantic.ingest import plan, rules
from causantic.ingest.service import ingest_paths
from causantic.services import open_services
from causantic.store.protocol import MemoryStoreProtocol
from causantic.transcripts.projects import session_folder

SHOP = "-Users-dev-shop"
FIRST, SECOND = "0f7a2b8e-9a41-4d5c-8e2f-3c1d5b6a7e80", "1e8b3c9f-ab52-4e6d-9f30-4d2e6c7b8f91"


def _without_cwd(projects: Path, session: str, prompt: str) -> Path:
    """A Claude Code session in ``projects/-Users-dev-shop`` none of whose records names a cwd."""
    return write_session(projects / SHOP, "", session, [(prompt, f"Done: {prompt}.")])


def _projects(store: MemoryStoreProtocol) -> dict[str, list[str]]:
    """Each project's path with its sessions' ids; the projects holding chunks are the same."""
    found = {p.path: sorted(store.session_folders(p.id)) for p in store.project_activity()}
    assert sorted(p.path for p in store.project_summaries()) == sorted(found)
    return found


def test_a_claude_code_session_without_cwd_is_one_project_wherever_claude_lives(tmp_path: Path) -> None:
    """Keyed by the folder's whole path, the same ~/.claude read from a second place made a second
    project of every folder (named apart by a longer path), and a session's copy joined the first."""
    before, after = tmp_path / "alice" / ".claude" / "projects", tmp_path / "backup" / "claude" / "projects"
    _without_cwd(before, FIRST, "fix the cart total")
    _without_cwd(after, FIRST, "fix the cart total")
    _without_cwd(after, SECOND, "add a coupon field")
    with open_services(Config()) as services:
        ingest_paths(services, [before], embed=False, workers=1)
        ingest_paths(services, [after], embed=False, workers=1)
        assert _projects(services.store) == {f"~/.claude/projects/{SHOP}": [FIRST, SECOND]}
        assert [p.name for p in services.store.find_projects(SHOP)] == [SHOP]


def test_a_sub_agent_file_read_without_its_session_joins_its_folders_project(tmp_path: Path) -> None:
    """A sub-agent's file (``<folder>/<session>/subagents/agent-<id>.jsonl``) whose session's file is
    absent was filed under ``<session>/subagents``: a project per such session."""
    projects = tmp_path / ".claude" / "projects"
    _without_cwd(projects, FIRST, "fix the cart total")
    agent = projects / SHOP / SECOND / "subagents" / "agent-a1b2c3d.jsonl"
    agent.parent.mkdir(parents=True)
    written = _without_cwd(tmp_path / "elsewhere", SECOND, "find where the coupon is applied")
    lines = [{**json.loads(line), "isSidechain": True} for line in written.read_text().splitlines()]
    agent.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with open_services(Config()) as services:
        ingest_paths(services, [projects], embed=False, workers=1)
        assert _projects(services.store) == {f"~/.claude/projects/{SHOP}": [FIRST, SECOND]}


@pytest.mark.parametrize("moved", [False, True], ids=["same-place", "moved"])
def test_a_store_keyed_by_the_folders_path_takes_its_name_on_a_plain_ingest(
    backend_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved: bool
) -> None:
    """An older release (rules one version behind) filed the sessions under the folder's whole path,
    a project per place ~/.claude was read from. The next plain ingest (no --force), of the same
    place or of a moved copy holding a new session, leaves one project at the folder's key holding
    each session once, with the chunks it had."""
    before, after = tmp_path / "alice" / ".claude" / "projects", tmp_path / "bob" / ".claude" / "projects"
    _without_cwd(before, FIRST, "fix the cart total")
    _without_cwd(after, FIRST, "fix the cart total")
    _without_cwd(after, SECOND, "add a coupon field")
    with monkeypatch.context() as older:
        older.setattr(rules, "VERSION", rules.VERSION - 1)
        older.setattr(plan, "folder_project", lambda path, source: str(session_folder(path, source)))
        with open_services(backend_config) as services:
            ingest_paths(services, [before], embed=False, workers=1)
            ingest_paths(services, [after], embed=False, workers=1)
            assert len(_projects(services.store)) == 2  # SECOND's project at bob's folder
            chunks = services.store.counts()["chunks"]
    with open_services(backend_config) as services:
        report = ingest_paths(services, [after] if moved else [before, after], embed=False, workers=1)
        assert report.files_rules_changed == report.files
        assert _projects(services.store) == {f"~/.claude/projects/{SHOP}": [FIRST, SECOND]}
        assert services.store.counts()["chunks"] == chunks
        assert [p.name for p in services.store.find_projects(SHOP)] == [SHOP]
