"""How answers name a session: by a prefix of its id that reconstruct takes back, one per session.

Codex CLI names its threads with time-ordered UUIDs (version 7), whose first 8 characters are the
top of a millisecond clock: two Codex sessions started within a minute both read '019a085e' in the
timeline, in search's hit headings and in recall's episodes, and reconstruct refused that prefix as
two sessions'."""

from __future__ import annotations

import re
from pathlib import Path

from transcript_files import write_codex_rollout, write_session

from causantic import Memory
from causantic.retrieval.format import render_episodes, render_search
from causantic.retrieval.reconstruct import render_reconstruction

SHOP = "/work/shop"
FIRST, SECOND = "019a085e-04c1-7f81-a09e-9555f6a1fb40", "019a085e-52e1-7c02-b1aa-0123456789ab"  # 20 s apart


def test_two_codex_sessions_started_within_a_minute_are_named_apart_and_each_name_is_taken_back(
    tmp_path: Path,
) -> None:
    codex = tmp_path / "codex"
    write_codex_rollout(codex, SHOP, FIRST, [("make the pomodoro timer 25 minutes", "Set WORK_MINUTES = 25.")])
    write_codex_rollout(codex, SHOP, SECOND, [("make the pomodoro break 5 minutes", "Set BREAK_MINUTES = 5.")])
    claude = tmp_path / "claude"
    write_session(claude, SHOP, "7a378dd6-f9b6-42f1-ad8d-dd8aa785f035", [("pomodoro sound", "Added a chime.")])
    with Memory(tmp_path / "home") as memory:
        memory.ingest([codex, claude], embed=False)
        timeline = render_reconstruction(memory.reconstruct(SHOP))
        found = render_search(memory.search("pomodoro break minutes", project=SHOP))
        told = render_episodes(memory.recall("pomodoro break minutes", project=SHOP))
        named = re.findall(r"^\S+ \S+  (\S+)  ", timeline, re.MULTILINE)
        assert sorted(named) == ["019a085e-04c1", "019a085e-52e1", "7a378dd6"]  # a Claude Code id keeps its 8
        assert "| Session: 019a085e-52e1 |" in found and "· session 019a085e-52e1 (Codex CLI) ·" in told
        again = render_reconstruction(memory.reconstruct(SHOP, session_id="019a085e-52e1"))
    assert "BREAK_MINUTES" in again and "WORK_MINUTES" not in again
