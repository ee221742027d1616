"""A sub-agent's result reads as what it found. Claude Code appends to a Task or Agent result the id
to resume the agent by ("agentId: a5e0c41b7d2f9e3a1 (for resuming …)") and its usage figures
("<usage>total_tokens: …</usage>"): they showed in recall's answers (the README's example among them)
and were indexed. The sub-agent is still linked by that id when only the result's text names it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from causantic import Memory
from causantic.cli.main import cli
from causantic.examples import SESSIONS_DIR

QUERY = "which code depends on the current date in billing"
SESSION = "-home-dev-acme-shop/7a378dd6-f9b6-52f1-ad8d-dd8aa785f035.jsonl"
FOUND = (
    "[Result:Task] `Invoice.due_date` uses `date.today()` (runner local time) while the test freezes time "
    "at 23:30 UTC; runners in UTC+1 cross midnight.\n\n[Assistant]"
)
TRAILER = (
    "agentId: a5e0c41b7d2f9e3a1 (for resuming to continue this agent's work if needed)\n"
    "<usage>total_tokens: 19831\ntool_uses: 12\nduration_ms: 32548</usage>"
)


def _recall(home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    said = CliRunner().invoke(cli, ["recall", QUERY], catch_exceptions=False)
    assert said.exit_code == 0
    return said.stdout


def test_recall_tells_a_task_result_without_the_agent_id_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Memory(tmp_path / "home") as memory:
        report = memory.ingest([SESSIONS_DIR])
    assert report.linked_subagents == report.subagent_streams == 1
    said = _recall(tmp_path / "home", monkeypatch)
    assert FOUND in said and "agentId" not in said


def test_a_sub_agent_named_only_in_its_result_text_is_linked_and_the_text_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(SESSIONS_DIR, tmp_path / "sessions")
    path = tmp_path / "sessions" / SESSION
    records = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    for record in records:  # as Claude Code writes it: the id and usage in a text block of their own
        if record.get("toolUseResult", {}).get("agentId") == "a5e0c41b7d2f9e3a1":
            record["toolUseResult"] = {"status": "completed"}
            result = record["message"]["content"][0]
            found = result["content"].split("\nagentId:")[0]
            result["content"] = [{"type": "text", "text": found}, {"type": "text", "text": TRAILER}]
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    with Memory(tmp_path / "home") as memory:
        report = memory.ingest([tmp_path / "sessions"])
    assert report.linked_subagents == report.subagent_streams == 1
    assert report.edges_added.by_type.get("debrief") == 1
    said = _recall(tmp_path / "home", monkeypatch)
    assert FOUND in said
    assert not any(word in said for word in ("agentId", "a5e0c41b7d2f9e3a1", "<usage>", "total_tokens"))
