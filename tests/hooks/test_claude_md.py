"""The opt-in CLAUDE.md memory block: only with hooks.claudeMd, only in a CLAUDE.md that exists."""

from __future__ import annotations

from pathlib import Path

import pytest
from hook_payloads import ingest_payload, relocated_examples
from process_support import run_hook, subprocess_env, wait_for, worker_pids

from causantic.hooks.claude_md import END, START, update_claude_md

USER_TEXT = "# acme-shop\n\nRun `npm test` before committing.\n"


def session_end(project: Path, tmp_path: Path, *, opted_in: bool) -> None:
    sessions = relocated_examples(tmp_path / "user", project)
    transcript = sessions / "4005b823-fa0d-5890-9dc8-e686765e4267.jsonl"
    env = subprocess_env(
        CAUSANTIC_EMBEDDING_EAGER="false", **({"CAUSANTIC_HOOKS_CLAUDE_MD": "true"} if opted_in else {})
    )
    done, _ = run_hook("session-end", ingest_payload(transcript, "SessionEnd", cwd=str(project)), env=env)
    assert done.returncode == 0
    wait_for(lambda: not worker_pids(str(transcript)), timeout=120)


def test_an_opted_in_project_gets_the_block_between_markers_and_keeps_its_own_text(
    causantic_home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "acme-shop"
    project.mkdir()
    (project / "CLAUDE.md").write_text(USER_TEXT + "\nMore notes below.\n", encoding="utf-8")
    session_end(project, tmp_path, opted_in=True)
    text = (project / "CLAUDE.md").read_text(encoding="utf-8")
    assert text.startswith(USER_TEXT + "\nMore notes below.\n")
    assert text.count(START) == 1 and text.count(END) == 1
    block = text[text.index(START) : text.index(END)]
    assert "## Memory Context" in block and "Where work stopped" in block and "REDIS_URL" in block


def test_the_block_is_replaced_in_place_not_appended_again(causantic_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "acme-shop"
    project.mkdir()
    claude_md = project / "CLAUDE.md"
    claude_md.write_text(f"{USER_TEXT}\n{START}\nold memory\n{END}\n\n## Footer\nkept\n", encoding="utf-8")
    session_end(project, tmp_path, opted_in=True)
    text = claude_md.read_text(encoding="utf-8")
    assert text.count(START) == 1 and "old memory" not in text
    assert text.startswith(USER_TEXT) and text.endswith("\n\n## Footer\nkept\n")


def test_no_claude_md_is_created_where_there_was_none(causantic_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "acme-shop"
    project.mkdir()
    session_end(project, tmp_path, opted_in=True)
    assert not (project / "CLAUDE.md").exists() and not (project / ".claude" / "CLAUDE.md").exists()


def test_without_the_opt_in_claude_md_is_left_alone(causantic_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "acme-shop"
    project.mkdir()
    (project / "CLAUDE.md").write_text(USER_TEXT, encoding="utf-8")
    session_end(project, tmp_path, opted_in=False)
    assert (project / "CLAUDE.md").read_text(encoding="utf-8") == USER_TEXT


@pytest.mark.parametrize("existing", ["", USER_TEXT, USER_TEXT.rstrip("\n")])
def test_updating_twice_with_the_same_briefing_changes_nothing(tmp_path: Path, existing: str) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text(existing, encoding="utf-8")
    assert update_claude_md(path, "Where work stopped: here.") is True
    first = path.read_text(encoding="utf-8")
    assert update_claude_md(path, "Where work stopped: here.") is False
    assert path.read_text(encoding="utf-8") == first
    assert first.startswith(existing.rstrip("\n")) and first.endswith(f"{END}\n")


def test_a_symlinked_claude_md_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "AGENTS.md"
    target.write_text(USER_TEXT, encoding="utf-8")
    link = tmp_path / "CLAUDE.md"
    link.symlink_to(target)
    update_claude_md(link, "memory")
    assert link.is_symlink() and START in target.read_text(encoding="utf-8")
