"""Two episodes of one session with turns between them left out say so: told one after the other,
their two headings read as one story told twice, or as if nothing happened between them. The text
(CLI and MCP), the JSON and the dashboard's story all carry it. Two that touch (nothing of the
session between them) are one story, told as one episode."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from transcript_files import GAP_LINE, GAP_QUERY, GAP_TURNS, write_session

from causantic import Memory
from causantic.cli.main import cli
from causantic.dashboard.story import story_of
from causantic.retrieval.format import render_episodes
from causantic.retrieval.output import episodic_out


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("episode-gaps")
    write_session(root / "sessions", "/work/billing", "9a9e0000-0000-4000-8000-000000000000", GAP_TURNS)
    with Memory(root / "home") as memory:
        memory.ingest([root / "sessions"])
    return root / "home"


def test_two_episodes_of_one_session_say_what_is_left_out_between_them(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory(home) as memory:
        answer = memory.recall(GAP_QUERY)
    assert len(answer.episodes) == 2 and len({e.chunks[0].chunk.session_id for e in answer.episodes}) == 1
    lines = render_episodes(answer).splitlines()
    second = next(i for i, line in enumerate(lines) if line.startswith("== Episode 2 of 2"))
    assert lines[second - 2] == GAP_LINE and sum(line == GAP_LINE for line in lines) == 1
    assert [e.left_out_before for e in episodic_out(GAP_QUERY, answer).episodes] == [0, 4]
    assert [s.left_out for s in story_of(answer).steps if s.left_out] == [GAP_LINE]
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    said = CliRunner().invoke(cli, ["recall", GAP_QUERY], catch_exceptions=False)
    assert said.exit_code == 0 and f"\n\n{GAP_LINE}\n\n== Episode 2 of 2" in said.stdout


# The fix's last turn is the best match; its story is cut before it (the turn before is about pods, not
# the lock), so the first turn's episode ends right where it starts.
TOUCHING = [
    ("the nightly billing deploy fails with a migration lock timeout", "The runner holds the migration lock."),
    ("look at the billing deploy logs from last night", "The deploy waited twenty minutes."),
    ("which pods were still draining during the deploy", "Three old billing pods."),
    ("can the runner wait for the drain before the migration", "Yes, with a readiness gate."),
    ("add the readiness gate to the billing deploy", "Added it to the deploy script."),
    ("so the nightly billing deploy migration lock timeout is fixed?", "Fixed: the runner releases the lock first."),
]


def test_episodes_of_one_session_that_touch_are_told_as_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_session(tmp_path / "sessions", "/work/billing", "7b7e0000-0000-4000-8000-000000000000", TOUCHING)
    with Memory(tmp_path / "home") as memory:
        memory.ingest([tmp_path / "sessions"])
        answer = memory.recall(GAP_QUERY)
    assert len(answer.episodes) == 1
    assert [c.chunk.turn_index for c in answer.episodes[0].chunks] == list(range(len(TOUCHING)))
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    said = CliRunner().invoke(cli, ["recall", GAP_QUERY], catch_exceptions=False).stdout
    assert said.startswith("Recall: the story behind it, 1 episode (6 chunks,")
    assert "== Episode 1 of 1 · billing · session 7b7e0000 (Claude Code) · 2026-11-02 09:00 – 09:05 ·" in said
