"""A fix found deep in a long turn, beyond the walk back from the match, is still told from the
request that opened the turn: the request and how the work began, then how many chunks were left
out, then the match's neighbourhood and how it ended (episodes.storyOpening); predict's answer too,
after what followed the match (episodes.predictRequest)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from transcript_files import write_session

from causantic import Memory
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.format import render_episodes
from causantic.retrieval.output import episodic_out

QUERY = "how did we fix the migration lock timeout of the nightly billing deploy"
REQUEST = "the deploy pipeline is red again, can you look into it"  # none of the query's words
FIX = "Found it: the nightly billing deploy hit a migration lock timeout; the runner now locks after the drain."
OUTCOME = "Ran it twice more: green both times. Merged."
FILLER = ("pods", "logs", "dashboards", "graphs", "alerts", "shifts")


def _paragraph(n: int, text: str) -> str:
    """``text`` and words of no question, a chunk's worth: each paragraph is a chunk of the turn."""
    words = FILLER[n % 6 :] + FILLER[: n % 6]
    return f"{text} {' '.join(words * 40)}"[:1000]


# Twelve steps of looking around before the fix: the match lies far beyond the walk back (4 chunks).
STEPS = [f"Step {n}: checked the runner's settings once more." for n in range(12)]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("long-turn")
    folder = root / "sessions"
    answer = "\n\n".join(_paragraph(n, text) for n, text in enumerate([*STEPS, FIX, OUTCOME]))
    write_session(folder, "/work/billing", "long-turn", [("what is on the board today", "Tickets."), (REQUEST, answer)])
    with Memory(root / "home") as memory:
        memory.ingest([folder])
    return root / "home"


def test_a_fix_deep_in_a_long_turn_is_told_from_its_request_with_the_steps_between_counted(home: Path) -> None:
    # Before episodes.storyOpening the answer began four chunks before the fix: no request, and
    # nothing said that the turn had begun long before.
    with Memory(home) as memory:
        answer = memory.recall(QUERY)
    text = render_episodes(answer)
    gap = re.search(r"… (\d+) chunks left out …", text)
    assert gap is not None, text
    places = [text.index(part) for part in (REQUEST, STEPS[0], gap.group(0), FIX, OUTCOME)]
    assert places == sorted(places)
    assert STEPS[5] not in text  # the middle of the turn is the part left out
    told = [c.content for c in answer.chunks]
    assert int(gap.group(1)) + len(told) == len(STEPS) + 2  # the turn (the request holds step 0): told or counted
    assert approx_tokens(text) <= 2_500
    # Scripts read the same count beside the chunk it comes before.
    (episode,) = episodic_out(QUERY, answer).episodes
    assert sorted(episode.left_out_within) == [0] * (len(told) - 1) + [int(gap.group(1))]


def test_with_story_opening_0_the_long_turn_is_told_from_the_walk_back_alone(home: Path) -> None:
    with Memory(home, overrides={"episodes.storyOpening": "0"}) as memory:
        text = render_episodes(memory.recall(QUERY))
    assert FIX in text and not re.search(r"… \d+ chunks left out …", text)


def test_predict_tells_what_followed_the_match_after_what_the_work_was_for(home: Path) -> None:
    # Before episodes.predictRequest predict told from the fix on: what came next, but not the
    # request the work answered.
    with Memory(home) as memory:
        answer = memory.predict(QUERY)
    text = render_episodes(answer)
    gap = re.search(r"… (\d+) chunks left out …", text)
    assert gap is not None, text
    places = [text.index(part) for part in (REQUEST, gap.group(0), FIX, OUTCOME)]
    assert places == sorted(places)
    assert STEPS[8] not in text  # the steps between the turn's opening and the fix are counted, not told
    assert approx_tokens(text) <= 2_500
    (episode,) = episodic_out(QUERY, answer).episodes  # scripts read the count beside the chunk it comes before
    assert int(gap.group(1)) in episode.left_out_within


def test_with_predict_request_off_predict_tells_from_the_match_on(home: Path) -> None:
    with Memory(home, overrides={"episodes.predictRequest": "false"}) as memory:
        text = render_episodes(memory.predict(QUERY))
    assert FIX in text and OUTCOME in text and not re.search(r"… \d+ chunks left out …", text)
