"""What memory keeps of a tool result: how a long command ended, a plan whole, nothing of a result
that says nothing (the review of what an agent reads back: every stored pytest run stopped at its
banner, plans were JSON cut at 200 characters, "[Result:update_plan] Plan updated" was content)."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_tool_session

from causantic import Memory
from causantic.config import Config, load_config
from causantic.ingest.service import ingest_paths
from causantic.retrieval.format import render_episodes
from causantic.services import open_services

BANNER = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.12.7, pytest-8.4.0, pluggy-1.6.0\n"
    "rootdir: /work/app\nconfigfile: pyproject.toml\nplugins: xdist-3.7.0, cov-6.2.1, asyncio-1.0.0\n"
    "collected 120 items\n\n"
)
PROGRESS = "".join(
    f"tests/test_module_{n:03d}.py ......                                      [{n:3d}%]\n" for n in range(100)
)
ENDING = (
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_billing.py::test_refund_rounds_half_up - AssertionError: 10.04 != 10.05\n"
    "======================== 1 failed, 119 passed in 12.31s ========================"
)
RUN = BANNER + PROGRESS + ENDING
PLAN = (
    "# Plan: refunds round half up\n\n## Context\n\nRefunds are computed with banker's rounding, so a refund of "
    "10.045 comes out as 10.04.\n\n## Steps\n\n"
    + "".join(f"{n}. Step {n}: change `billing/refunds.py` part {n} and its test.\n" for n in range(1, 40))
    + "\n## Verification\n\nRun `pytest tests/test_billing.py`; the refund of 10.045 must be 10.05."
)


def _contents(
    tmp_path: Path, calls: list[tuple[str, dict[str, object], str, bool]], config: Config | None = None
) -> str:
    path = write_tool_session(tmp_path / "projects", "/work/app", "5e55a0a1-0000-4000-8000-000000000001", "go", calls)
    with open_services(config or Config()) as services:
        report = ingest_paths(services, [path], embed=False, workers=1)
        assert report.errors == []
        rows = services.store.conn.execute("SELECT content FROM chunks ORDER BY turn_index, part")
        return "\n".join(row[0] for row in rows)


def test_a_long_test_run_keeps_its_banner_and_how_it_ended(tmp_path: Path) -> None:
    contents = _contents(tmp_path, [("Bash", {"command": "pytest -q"}, RUN, True)])
    assert "[Error:Bash] ============================= test session starts" in contents
    # The head ends in progress line 004 (cut in it), the tail is the summary: lines 005-099 left out.
    assert f"tests/test_module_004.py ......\n[… 95 lines left out]\n{ENDING}" in contents
    assert "tests/test_module_050.py" not in contents


def test_a_file_read_keeps_its_head_only(tmp_path: Path) -> None:
    contents = _contents(tmp_path, [("Read", {"file_path": "/work/app/log.txt"}, RUN, False)])
    assert "…[truncated]" in contents and "1 failed, 119 passed" not in contents and "left out]" not in contents


def test_the_tail_of_a_command_is_a_setting_and_0_keeps_the_head_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUSANTIC_CHUNKING_TOOL_RESULT_TAIL_CHARS", "0")
    contents = _contents(tmp_path, [("Bash", {"command": "pytest -q"}, RUN, True)], load_config())
    assert "…[truncated]" in contents and "1 failed, 119 passed" not in contents


def test_a_secret_at_the_end_of_a_command_output_is_redacted(tmp_path: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    output = BANNER + PROGRESS + f"export GITHUB_TOKEN={token}\nExit code 1"
    contents = _contents(tmp_path, [("Bash", {"command": "./deploy.sh"}, output, True)])
    assert token[:8] not in contents and "[REDACTED:github-token]\nExit code 1" in contents


def test_a_plan_is_kept_whole_as_its_markdown_and_once(tmp_path: Path) -> None:
    approval = (
        "User has approved your plan. You can now start coding. Start with updating your todo list if applicable\n\n"
        "Your plan has been saved to: /home/me/.claude/plans/humble-doodling-wolf.md\n"
        f"You can refer back to it if needed during implementation.\n\n## Approved Plan:\n{PLAN}"
    )
    contents = _contents(tmp_path, [("ExitPlanMode", {"plan": PLAN}, approval, False)])
    assert "[Tool:ExitPlanMode] # Plan: refunds round half up\n\n## Context" in contents
    assert "Step 39: change `billing/refunds.py` part 39" in contents and "the refund of 10.045 must be" in contents
    assert '{"plan"' not in contents and contents.count("Step 39:") == 1
    assert "[Result:ExitPlanMode] User has approved your plan.\n" in contents


def test_results_that_say_nothing_are_not_kept_and_failures_are(tmp_path: Path) -> None:
    todo = [{"content": "Fix the refund rounding", "status": "in_progress", "activeForm": "Fixing"}]
    acknowledgement = (
        "Todos have been modified successfully. Ensure that you continue to use the todo list to track your "
        "progress. Please proceed with the current tasks if applicable"
    )
    calls: list[tuple[str, dict[str, object], str, bool]] = [
        ("Bash", {"command": "git add billing"}, "", False),
        ("TodoWrite", {"todos": todo}, acknowledgement, False),
        (
            "Edit",
            {"file_path": "/work/app/billing/refunds.py"},
            "The file /work/app/billing/refunds.py has been updated successfully.",
            False,
        ),
        ("Bash", {"command": "git push"}, "", True),
    ]
    contents = _contents(tmp_path, calls)
    assert (
        "[Tool:Bash] git add billing\n\n[Tool:TodoWrite] Fix the refund rounding (in progress)\n\n"
        "[Tool:Edit] /work/app/billing/refunds.py\n\n[Tool:Bash] git push\n\n[Error:Bash]\n\n[Assistant]\nDone."
    ) in contents


REAL = "daaain__claude-code-log/test/test_data/real_projects"


def _stored(path: Path) -> str:
    with open_services(Config()) as services:
        assert ingest_paths(services, [path], embed=False, workers=1).errors == []
        return "\n".join(row[0] for row in services.store.conn.execute("SELECT content FROM chunks"))


def test_the_reviewed_test_run_tells_which_test_failed_and_the_counts(corpus_dir: Path) -> None:
    # The review's memory held this run as its banner and "test/test_time …[truncated]".
    contents = _stored(
        corpus_dir / REAL / "-Users-dain-workspace-claude-code-log-sample/12a546d1-83a7-49a6-abba-5400db340b43.jsonl"
    )
    assert (
        "FAILED test/test_timeline_browser.py::TestTimelineBrowser::test_timeline_system_messages[chromium]\n"
        "================ 1 failed, 19 passed, 208 deselected in 39.22s ================="
    ) in contents
    assert "test/test_time …[truncated]" not in contents


def test_a_real_plan_is_stored_whole_and_its_approval_without_the_copy(corpus_dir: Path) -> None:
    contents = _stored(
        corpus_dir / REAL / "-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"
    )
    assert "[Tool:ExitPlanMode] ## Plan: Make Project Installable as UV Tool\n\n### Issues Found" in contents
    assert "- Want Hatchling (recommended) or keep setuptools?" in contents  # the first plan's last line
    assert "- All dependencies and metadata ✓" in contents  # the approved one's
    assert "[Result:ExitPlanMode] User has approved your plan.\n" in contents and '{"plan"' not in contents


def test_a_recall_answer_tells_how_a_long_passing_run_ended(tmp_path: Path) -> None:
    # An episode cuts a result to its head and the lines naming the query; the stored end of a
    # command's output is told too: it is how the run ended.
    passing = BANNER + PROGRESS + "======================== 120 passed in 12.31s ========================"
    path = write_tool_session(
        tmp_path / "projects",
        "/work/app",
        "5e55a0a1-0000-4000-8000-000000000002",
        "make refunds round half up and run the billing tests",
        [("Bash", {"command": "pytest tests/test_billing.py"}, passing, False)],
    )
    with Memory(tmp_path / "home") as memory:
        memory.ingest([path])
        told = render_episodes(memory.recall("make refunds round half up in billing"))
    assert "collected 120 items" in told  # the head, cut as before
    assert "\n[… 92 lines left out]\ntests/test_module_097.py" in told  # the stored end, whole:
    assert "[ 99%]\n======================== 120 passed in 12.31s" in told
