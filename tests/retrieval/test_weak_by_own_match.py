"""A weakly related match is judged by its own figure, not by its project's best hit: beside a
relevant story, another project's weak match is left out even when another session of that project
matches relevantly (that one is still told). Recall told a 5% Codex episode under a heading saying
other projects' weak matches were left out, because the same project held a 10% hit elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_session

from causantic import Memory
from causantic.retrieval.format import is_weak, render_episodes

QUERY = "how did we fix the nightly billing deploy migration lock timeout"
FIX = "fix-lock"
OPS_ALERT = "ops-alert"  # another project's relevant match
OPS_WEAK = "ops-backup"  # the same other project's weak match


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("weak-own-match")
    folder = root / "sessions"
    write_session(
        folder,
        "/work/billing",
        FIX,
        [
            ("good morning", "Morning."),
            ("the nightly deploy of the billing service fails with a migration lock timeout", "I'll read the runner."),
            ("what did you find", "The runner held the migration lock while old pods drained; now it waits."),
            ("ship it", "Merged; the nightly deploy passed."),
        ],
    )
    write_session(
        folder,
        "/work/ops",
        OPS_ALERT,
        [
            ("good morning", "Morning."),
            ("the billing migration paged us twice last night", "Silenced the alert until the billing team fixes it."),
            ("thanks", "Sure."),
        ],
        day=3,
    )
    write_session(
        folder,
        "/work/ops",
        OPS_WEAK,
        [("good morning", "Morning."), ("the garden hose timeout on the nightly sprinkler", "Noted.")],
        day=4,
    )
    with Memory(root / "home") as memory:
        memory.ingest([folder])
    return root / "home"


@pytest.mark.parametrize("kind", ["recall", "predict"])
def test_another_projects_weak_match_is_left_out_though_the_project_matches_elsewhere(home: Path, kind: str) -> None:
    with Memory(home) as memory:
        result = memory.search(QUERY)
        shown = {h.chunk.session_id: r for h, r in zip(result.hits, result.shown_relevance, strict=True)}
        answer = getattr(memory, kind)(QUERY)
    # the setting: the story relevant, the other project's two sessions one relevant and one weak
    assert not is_weak(shown[FIX]) and not is_weak(shown[OPS_ALERT]) and is_weak(shown[OPS_WEAK])
    assert answer.episodes[0].chunks[0].chunk.session_id == FIX
    told = {c.session_id for c in answer.chunks}
    assert OPS_ALERT in told and OPS_WEAK not in told
    assert "weakly related matches in 1 session of other projects left out" in render_episodes(answer).splitlines()[0]
