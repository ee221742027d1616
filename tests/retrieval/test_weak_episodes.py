"""A recall that found the story spends its budget on it, not on other projects' weak matches, and
each episode says how well it matches: when episodes were told in time order, without a figure a
weak match from another project read first, as if it began the story (on the whole Claude Code corpus,
"how did we restore the StepCount guard" opened with a TODO app's types at 4%). A weak match of the
story's own project is still told, marked: it may hold more of the story (LoCoMo's conversations),
unless the story's session is told whole (tests/retrieval/test_whole_session.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_session

from causantic import Memory
from causantic.dashboard.story import story_of
from causantic.retrieval.format import render_episodes

QUERY = "how did we fix the nightly billing deploy migration lock timeout"
FIX = "fix-lock"
SAME_PROJECT = "standup"  # a weak match in the fix's own project
# Other projects' sessions that share a word or two with the question, each turn about something else.
OTHERS = {
    "plants": ("/work/garden", "the garden hose timeout on the nightly sprinkler"),
    "bread": ("/work/recipes", "the bread deploy to the farmers market ran late"),
    "guitar": ("/work/music", "the billing for the friday gig is late"),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("weak-episodes")
    folder = root / "sessions"
    write_session(
        folder,
        "/work/billing",
        FIX,
        [
            ("good morning", "Morning."),  # not of the story: the session is not told whole (wholeSessionAlone)
            ("the nightly deploy of the billing service fails with a migration lock timeout", "I'll read the runner."),
            ("what did you find", "The runner held the migration lock while old pods drained; now it waits."),
            ("ship it", "Merged; the nightly deploy passed."),
        ],
    )
    for session, (cwd, said) in {
        **OTHERS,
        SAME_PROJECT: ("/work/billing", "the nightly standup notes for the billing team"),
    }.items():
        write_session(
            folder, cwd, session, [("good morning", "Morning."), (said, "Noted."), ("thanks", "Sure.")], day=3
        )
    with Memory(root / "home") as memory:
        memory.ingest([folder])
    return root / "home"


def test_a_found_story_is_not_padded_with_other_projects_weak_matches(home: Path) -> None:
    with Memory(home) as memory:
        answer = memory.recall(QUERY)
        weak_hits = {h.chunk.session_id for h in memory.search(QUERY).hits} - {FIX}
    assert weak_hits == {*OTHERS, SAME_PROJECT}  # search still lists them, as weakly related
    assert {c.session_id for c in answer.chunks} == {FIX, SAME_PROJECT}
    assert "weakly related matches in 3 sessions of other projects left out (search lists them)" in answer.notes
    text = render_episodes(answer)
    assert text.startswith("Recall: the story behind it, 2 episodes in time order")
    assert "3 sessions of other projects left out" in text.splitlines()[0]
    # The dashboard's story says the text's heading, then the note as a sentence of its own (not
    # 'in time order. weakly related …'); its times say UTC beside them, not in the heading.
    heading = text.splitlines()[0].split(" — ")[0].replace("; times in UTC", "")
    assert story_of(answer).how == (
        f"{heading}. Weakly related matches in 3 sessions of other projects left out (search lists them)."
    )


def test_each_episode_says_how_well_it_matches_and_weak_ones_say_so(home: Path) -> None:
    with Memory(home, overrides={"episodes.weakAnchors": "true"}) as memory:  # the weak episodes told too
        answer = memory.recall(QUERY)
    assert {c.session_id for c in answer.chunks} == {FIX, SAME_PROJECT, *OTHERS}
    headings = [line for line in render_episodes(answer).splitlines() if line.startswith("== Episode")]
    assert len(headings) == 5
    fix, *others = headings  # the fix happened first: day 2, the others on day 3
    assert " · billing · " in fix and fix.endswith("% ==") and "best match" in fix and "weakly" not in fix
    assert int(fix.rsplit("best match ", 1)[1].split("%")[0]) >= 10
    assert all(h.endswith("%, weakly related ==") for h in others)
