"""What the session-start hook says, in-process: the note a compacted session's briefing ends with
(where its own turns from before are), and how the hook's status words a briefing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hook_payloads import ACME
from transcript_files import write_session

from causantic.facade import Memory
from causantic.hooks.briefing import compacted_note

SHOP = "/home/dev/shop"
SESSION = "5e55104e-0000-4000-8000-000000000001"


def test_the_compaction_note_of_a_one_chunk_session_is_grammatical(causantic_home: Path, tmp_path: Path) -> None:
    write_session(tmp_path / "projects", SHOP, SESSION, [("fix the cart total", "Fixed: deleted products skipped.")])
    with Memory(causantic_home) as memory:
        memory.ingest([tmp_path / "projects"], embed=False)
        assert memory.sessions(SHOP).sessions[0].chunks == 1
        note = compacted_note(memory, SHOP, SESSION)
    assert note == (
        "This session before the compaction is in memory: 1 chunk, up to 2026-11-02 09:00 UTC. The causantic "
        "reconstruct tool (project 'shop', session '5e55104e') gives it back in full; recall finds the part "
        "you need."
    )


def test_hook_status_counts_a_briefings_characters_with_separators(
    acme_memory: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'briefing of 1281 characters' beside '2,307 tokens' everywhere else."""
    from causantic.hooks.event import HookEvent
    from causantic.hooks.runner import session_start

    event = HookEvent("SessionStart", "0b9b4a6e-1111-4aaa-8bbb-000000000009", "/nowhere/x.jsonl", ACME, "startup")
    outcome, project = session_start("session-start", event, 0.0)
    given = json.loads(capsys.readouterr().out)["hookSpecificOutput"]["additionalContext"]
    assert project == "acme-shop" and len(given) >= 1_000  # else the test shows nothing
    assert outcome == f"briefing of {len(given):,} characters"


def test_a_request_typed_over_several_lines_is_briefed_without_its_line_break_backslashes(
    causantic_home: Path, tmp_path: Path
) -> None:
    """A prompt typed in the terminal breaks its lines with a backslash, which Claude Code keeps; on
    the briefing's one line they read "equal depths.\\ \\ diff --git …"."""
    from causantic.hooks.briefing import build_briefing

    prompt = "combine the logic: take the latest if there are equal depths.\\\n\\\ndiff --git a/renderer.py"
    write_session(tmp_path / "projects", SHOP, SESSION, [(prompt, "Combined: least nested first, then latest.")])
    with Memory(causantic_home) as memory:
        memory.ingest([tmp_path / "projects"], embed=False)
        briefing = build_briefing(memory, SHOP, exclude_session=None, budget=2_000)
    assert briefing is not None
    request = next(line for line in briefing.text.splitlines() if line.startswith("- Last request: "))
    assert (
        request
        == "- Last request: combine the logic: take the latest if there are equal depths. diff --git a/renderer.py"
    )
