"""Recall and predict put what the asker needs first: the best match's episode leads the answer
(each episode still told in time order), and asked from a project, that project's episode leads when
its match is relevant. Told in time order, an older, weaker episode came first: an agent reads the
top of a 2,500-token answer first, and a client that cuts it short kept only that."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_session

from causantic import Memory
from causantic.retrieval.format import chunks_left_out, render_episodes
from causantic.retrieval.output import episodic_out

QUERY = "how did we fix the nightly billing deploy migration lock timeout"
FIX = "fix-lock"  # the best match, the newest session
OLD = "old-lock"  # the same project, days earlier: the problem seen, not fixed
TOOLS = "tool-lock"  # another project: the same timeout in its deploy tool, a weaker match
GARDEN = "garden"  # another project again: a weakly related match


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("answer-order")
    folder = root / "sessions"
    write_session(
        folder,
        "/work/billing",
        OLD,
        [
            ("the nightly billing deploy hit a migration lock timeout again", "I'll look at it tomorrow."),
            ("ok, note it in the todo list", "Noted."),
        ],
        day=1,
    )
    write_session(
        folder,
        "/work/deploy-tools",
        TOOLS,
        [
            ("our deploy tool reports a migration lock timeout on nightly runs", "The tool's lock wait is 5 s."),
            ("raise it", "Raised the tool's lock wait to 60 s."),
        ],
        day=2,
    )
    write_session(
        folder,
        "/work/billing",
        FIX,
        [
            ("the nightly deploy of the billing service fails with a migration lock timeout", "I'll read the runner."),
            ("what did you find", "The runner held the migration lock while old pods drained; now it waits."),
            ("so the nightly billing deploy migration lock timeout is fixed?", "Fixed: the lock is taken last."),
        ],
        day=3,
    )
    write_session(
        folder, "/work/garden", GARDEN, [("the garden hose timeout on the nightly sprinkler", "Set to 20 min.")], day=4
    )
    with Memory(root / "home") as memory:
        memory.ingest([folder])
    return root / "home"


def sessions(answer_episodes: tuple[object, ...]) -> list[str]:
    return [e.chunks[0].chunk.session_id for e in answer_episodes]  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["recall", "predict"])
def test_the_best_match_s_episode_leads_and_each_episode_keeps_its_time_order(home: Path, kind: str) -> None:
    with Memory(home) as memory:
        answer = getattr(memory, kind)(QUERY)
        best = memory.search(QUERY).hits[0].chunk.session_id
    told = sessions(answer.episodes)
    assert best == FIX and told[0] == FIX and OLD in told  # in time order OLD, two days older, came first
    for episode in answer.episodes:
        times = [m.chunk.start_time for m in episode.chunks]
        assert times == sorted(times)
    text = render_episodes(answer)
    assert text.startswith(f"{kind.capitalize()}: ")
    assert f"{len(told)} episodes, best first (" in text.splitlines()[0]
    assert "session fix-lock" in text.split("== Episode 2 of")[0]
    assert episodic_out(QUERY, answer).order == "best"


def test_time_order_stays_a_setting(home: Path) -> None:
    with Memory(home, overrides={"episodes.order": "time"}) as memory:
        answer = memory.recall(QUERY)
    starts = [e.start for e in answer.episodes]
    assert len(starts) > 1 and starts == sorted(starts)
    assert "episodes in time order (" in render_episodes(answer).splitlines()[0]


def test_asked_from_a_project_its_relevant_episode_leads(home: Path) -> None:
    # A boost too small to move search's order: the answer itself puts the asker's project first.
    with Memory(home, overrides={"retrieval.hereBoost": "0.01"}) as memory:
        ranked = [h.chunk.session_id for h in memory.search(QUERY, here="/work/deploy-tools").hits]
        answer = memory.recall(QUERY, here="/work/deploy-tools")
        from_garden = memory.recall(QUERY, here="/work/garden")
    assert ranked.index(FIX) < ranked.index(TOOLS)
    told = sessions(answer.episodes)
    assert told[0] == TOOLS and FIX in told  # the better match of another project is still told, after
    # A weakly related match of the asker's project does not push a relevant one from the top.
    assert sessions(from_garden.episodes)[0] == FIX


LATE_FIX_TURNS = [
    ("the nightly billing deploy was slow again", "I'll look at its log later."),
    ("rename the css class on the settings page", "Renamed it to settings-panel."),
    ("bump the eslint version", "Bumped eslint to 9."),
    ("tidy the readme badges", "The badges sit on one line now."),
    ("add a favicon", "Added favicon.ico."),
    ("update the copyright year", "It says 2026 now."),
    ("sort the imports", "Sorted them."),
    ("the nightly billing deploy fails with a migration lock timeout", "The runner holds the migration lock."),
    ("so how did we fix the migration lock timeout?", "Fixed: the runner releases the migration lock first."),
]


@pytest.fixture(scope="module")
def late_fix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("late-fix")
    write_session(root / "sessions", "/work/billing", "1a7e0000-0000-4000-8000-000000000000", LATE_FIX_TURNS)
    with Memory(root / "home") as memory:
        memory.ingest([root / "sessions"])
    return root / "home"


@pytest.mark.parametrize("kind", ["recall", "predict"])
def test_a_session_s_best_episode_comes_before_its_earlier_weaker_one(late_fix: Path, kind: str) -> None:
    with Memory(late_fix) as memory:
        answer = getattr(memory, kind)(QUERY)
    assert len(answer.episodes) == 2
    best, earlier = answer.episodes
    assert best.relevance > earlier.relevance and best.start > earlier.start
    assert "migration lock" in best.chunks[0].text
    lines = render_episodes(answer).splitlines()
    assert lines[0].startswith(f"{kind.capitalize()}: ") and "2 episodes, best first (" in lines[0]
    # the chunks between the two are still counted, the earlier episode told second
    second = next(i for i, line in enumerate(lines) if line.startswith("== Episode 2 of 2"))
    assert lines[second - 2].startswith("… ") and lines[second - 2].endswith(
        " of this session between these episodes left out …"
    )


MIDDLE_FIX_TURNS = [
    LATE_FIX_TURNS[0],
    *LATE_FIX_TURNS[1:7],
    LATE_FIX_TURNS[7],
    LATE_FIX_TURNS[8],
    *LATE_FIX_TURNS[1:7],
    ("the nightly billing deploy was fine today", "Good, nothing to do."),
]


@pytest.fixture(scope="module")
def middle_fix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("middle-fix")
    write_session(root / "sessions", "/work/billing", "3a7e0000-0000-4000-8000-000000000000", MIDDLE_FIX_TURNS)
    with Memory(root / "home") as memory:
        memory.ingest([root / "sessions"])
    return root / "home"


def test_no_count_of_left_out_chunks_spans_an_episode_told_above(middle_fix: Path) -> None:
    with Memory(middle_fix) as memory:
        answer = memory.recall(QUERY)
    assert len(answer.episodes) == 3
    best, later, earlier = answer.episodes
    assert earlier.start < best.start < later.start
    assert [chunks_left_out(answer, i) for i in range(3)] == [0, 6, 0]
