"""Asked how a fix was made, recall tells the session that made it as a story: the request, what was
tried, the fix and how it ended, in that order and within the budget (episodes.storyTurn), and
weaker matches of other sessions never take that story's room (episodes.sideShare)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from transcript_files import write_session

from causantic import Memory
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.format import render_episodes

QUERY = "how did we fix the migration lock timeout of the nightly billing deploy"
REQUEST = "the nightly billing deploy fails with a migration lock timeout, find out why"
# One long answer to the request: a turn of several chunks, none but the request in the query's words,
# so the story after the request is no match and only the turn ties it to the question.
STORY = (
    "Tried first: raising the runner's wait to ten minutes. It still failed the same way.",
    "Reading the runner code and the release scripts step by step.",
    "Found it: the runner held it while the old pods drained.",
    "Changed the runner to take it only after the drain.",
    "Ran it twice more: green both times. Merged.",
)
FILLER = ("pods", "logs", "dashboards", "graphs", "alerts", "shifts")


def _paragraph(n: int, text: str) -> str:
    """``text`` and words of no question, a chunk's worth: each paragraph is a chunk of the turn."""
    words = FILLER[n:] + FILLER[:n]
    return f"{text} {' '.join(words * 40)}"[:1000]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fix-story")
    folder = root / "sessions"
    answer = "\n\n".join(_paragraph(n, text) for n, text in enumerate(STORY))
    write_session(
        folder,
        "/work/billing",
        "fix-session",
        [("what is on the board today", "The billing tickets."), (REQUEST, answer), ("thanks", "Glad to help.")],
    )
    for n in range(4):  # other sessions of the project that name the deploy in passing
        write_session(folder, "/work/billing", f"side{n}", [(f"rename the deploy badge {n}", "Renamed.")], day=3 + n)
    with Memory(root / "home") as memory:
        memory.ingest([folder])
    return root / "home"


def _told(home: Path, **overrides: str) -> tuple[str, int]:
    with Memory(home, overrides=overrides) as memory:
        answer = memory.recall(QUERY)
    assert not answer.nothing_relevant
    return "\n".join(c.content for c in answer.chunks), approx_tokens(render_episodes(answer))


def test_recall_of_a_fix_tells_its_turn_from_the_request_to_the_outcome_in_order(home: Path) -> None:
    # Before episodes.storyTurn, recall told only what led to a match: the turn's chunks after its last
    # (weak) match, the fix and that it was merged, were left out.
    text, printed = _told(home)
    places = [text.index(part) for part in (REQUEST, *STORY)]
    assert places == sorted(places)
    assert printed <= 2_500


BUDGET = "1600"


def test_weaker_matches_of_other_sessions_leave_the_fix_its_room(home: Path) -> None:
    # At this budget the whole story fits, but not with the four side sessions' matches (2-3% against
    # the request's 66%) each told first with its episode's heading, as before episodes.sideShare:
    # then the answer stopped before the fix.
    text, printed = _told(home, **{"episodes.maxTokens": BUDGET})
    assert all(part in text for part in STORY)  # what room is left may still go to a side match
    assert printed <= int(BUDGET)


def test_a_chunk_heading_says_its_time_and_leaves_the_day_to_its_episode_heading(home: Path) -> None:
    # "[2/6 | Date: 2026-11-02 09:01 | match]" said the date and a label on every chunk, under an
    # episode heading that gives the day: with the other headings, 17% of recall's text on the coding
    # dev set (benchmarks/answer_content.py).
    with Memory(home) as memory:
        text = render_episodes(memory.recall(QUERY))
    chunk_headings = [line for line in text.splitlines() if re.match(r"\[\d+/\d+ \|", line)]
    assert chunk_headings and all(re.fullmatch(r"\[\d+/\d+ \| \d\d:\d\d( \| match)?\]", h) for h in chunk_headings)
    assert "· session fix-sess (Claude Code) · 2026-11-02 09:01 ·" in text  # the day, in the episode's heading
