"""When the matches alone would fill an answer's budget, the best episode still tells its story:
predict shows what followed the best match (episodes.storyChunks), instead of the same list of
matches recall gives."""

from __future__ import annotations

from pathlib import Path

from transcript_files import write_session

from causantic import Memory

QUERY = "nightly deploy of the billing service fails with a migration lock timeout"
FOLLOWED = "takes the lock only after the drain"  # said in the turn after the best match, in none of its words


def _sessions(folder: Path) -> Path:
    write_session(
        folder,
        "/work/billing",
        "deploy",
        [
            ("the pager woke the on-call engineer at three again", "I'll read the alert history first."),
            (
                "the nightly deploy of the billing service fails with a migration lock timeout",
                "I'll look at the migration runner and the nightly deploy logs.",
            ),
            (
                "what did you find",
                "The runner held it while old pods drained; it now takes the lock only after the drain.",
            ),
            ("ship it", "Merged; the next nightly run passed."),
        ],
    )
    # Other sessions that match in passing, turn after turn, each turn about something else: more
    # matches than an answer's search takes (maxEpisodes x 4), so the turn after the best match is
    # no match, only the story.
    topics = ("invoice keys", "tax rounding", "chart colours", "refund queue", "postcode index", "currency table")
    moods = ("during the redesign", "before the audit", "after the holidays", "in the spring release")
    for n, mood in enumerate(moods):
        turns = [
            (f"the billing service deploy hit a migration lock timeout {mood} while we changed the {topic}", "Noted.")
            for topic in topics
        ]
        write_session(folder, "/work/billing", f"other{n}", turns, day=3)
    return folder


def _answer_text(memory: Memory, kind: str) -> str:
    answer = memory.recall(QUERY) if kind == "recall" else memory.predict(QUERY)
    assert not answer.nothing_relevant
    return "\n".join(c.content for c in answer.chunks)


def test_the_best_episode_tells_its_story_when_matches_fill_the_budget(tmp_path: Path) -> None:
    folder = _sessions(tmp_path / "sessions")
    budget = {
        # room for the five sessions' best matches (each with its episode's heading) and a few more chunks
        "episodes.maxTokens": "470",
        # The turn after the best match is itself a weak match ("lock"); anchoring an episode of its own,
        # as weak matches did before episodes.weakAnchors, it is what makes the matches fill the budget.
        "episodes.weakAnchors": "true",
        # Every match of every session told before any context, as before episodes.sideShare: the other
        # sessions' weaker matches would otherwise wait for the best session's context.
        "episodes.sideShare": "0",
    }
    with Memory(tmp_path / "home", overrides={**budget, "episodes.storyChunks": "0"}) as memory:
        memory.ingest([folder])
        matches_only = {kind: _answer_text(memory, kind) for kind in ("recall", "predict")}
    with Memory(tmp_path / "home", overrides=budget) as memory:
        told = {kind: _answer_text(memory, kind) for kind in ("recall", "predict")}
    assert matches_only["predict"] == matches_only["recall"] and FOLLOWED not in matches_only["predict"]
    assert FOLLOWED in told["predict"] and FOLLOWED not in told["recall"]


MERGED = "Merged; the pipeline passed."  # four turns after the best match, in none of its words


def test_predict_tells_the_best_match_through_to_the_merge(tmp_path: Path) -> None:
    # Four turns of story after the best match, ahead of further matches (episodes.storyChunks 4): with
    # two, the answer stopped at the fix and never said it was merged.
    folder = _sessions(tmp_path / "sessions")
    write_session(
        folder,
        "/work/billing",
        "deploy-fix",
        [
            ("the nightly deploy of the billing service fails with a migration lock timeout", "Reading the runner."),
            ("what did you find", "The runner held it while old pods drained."),
            ("fix it", "It now waits for the drain first."),
            ("run the suite", "All green."),
            ("ship it", MERGED),
        ],
        day=4,
    )
    with Memory(tmp_path / "home", overrides={"episodes.maxTokens": "600", "episodes.weakAnchors": "true"}) as memory:
        memory.ingest([folder])
        told = _answer_text(memory, "predict")
    assert "It now waits for the drain first." in told and MERGED in told
