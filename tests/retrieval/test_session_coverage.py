"""A session whose chunks together name every part of a request outranks a chunk elsewhere that
names most of them in passing (retrieval.sessionCoverage)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from transcript_files import write_session

from causantic import Memory
from causantic.retrieval.mentions import own_stem_words
from causantic.retrieval.ranking import session_coverage_factors
from causantic.store.features import feature_values
from causantic.store.records import StoredChunk, TextFeatures

QUERY = "retry budget for uploads over slow links"


def _sessions(folder: Path) -> Path:
    sessions = {
        # the work: the request's parts said over two turns, none holding them all
        "work": [
            ("photo uploads fail on some phones", "I'll look at the uploader first."),
            ("it happens on slow links", "There the app gives up after the first timeout."),
            (
                "make it try again before it gives up",
                "Added a retry budget for uploads: three tries with a growing pause.",
            ),
        ],
        # elsewhere: one turn that names most of the request while doing something else
        "passing": [("the retry budget for uploads in CI is too small", "Raised it to three.")],
        # "slow links" is common talk here, so those words alone single out no session
        "network": [
            ("the VPN drops on slow links", "Raised the VPN keepalive for slow links."),
            ("video calls stutter on slow links too", "Lowered the call bitrate on slow links."),
            ("and the dashboard loads badly on slow links", "The dashboard now loads its charts lazily on slow links."),
        ],
    }
    for name, turns in sessions.items():
        write_session(folder, "/work/photos", name, turns, day=2 if name == "work" else 3)
    return folder


def _sessions_in_order(memory: Memory) -> list[str]:
    return list(dict.fromkeys(h.chunk.session_id for h in memory.search(QUERY, limit=10).hits))


def test_the_session_that_covers_the_whole_request_ranks_first(tmp_path: Path) -> None:
    folder = _sessions(tmp_path / "sessions")
    # The session's opening task, its support from other chunks and query feedback also move
    # "work"; they are off so that this test sees what the session covers together alone, at a
    # weight that decides a three-session toy store (the default, 0.25, is weighed on real history).
    alone = {"retrieval.sessionEvidence": "0", "retrieval.sessionContext": "0", "retrieval.feedbackWeight": "0"}
    with Memory(tmp_path / "home", overrides={**alone, "retrieval.sessionCoverage": "1"}) as memory:
        memory.ingest([folder])
        order = _sessions_in_order(memory)
    with Memory(tmp_path / "home", overrides={**alone, "retrieval.sessionCoverage": "0"}) as memory:
        without = _sessions_in_order(memory)
    assert order[0] == "work"
    assert without[0] == "passing"  # what the coverage corrects


def test_every_chunk_of_a_session_gets_its_session_s_factor() -> None:
    words = {"retry", "budget", "upload"}

    def coverage(stems: frozenset[str]) -> float:
        return len(stems & words) / len(words)

    factors = session_coverage_factors(
        ["work", "work", "passing"],
        [frozenset({"retry", "budget"}), frozenset({"upload", "slow"}), frozenset({"retry", "budget"})],
        coverage,
        0.5,
    )
    assert factors == [1.5, 1.5, 1.0 + 0.5 * 2 / 3]
    assert session_coverage_factors(["work"], [frozenset({"retry"})], coverage, 0.0) == [1.0]


def test_a_session_covers_only_what_its_own_words_say_not_what_a_listing_printed() -> None:
    text = (
        "[User]\nwhat changed lately?\n\n[Tool:Bash] git log --oneline\n\n"
        "[Result:Bash] 1a2b3c4 add a retry budget for uploads\n"
    )
    stored = TextFeatures(*feature_values(text))
    for features in (stored, None):  # kept by the store, or a row written before it kept them
        chunk = StoredChunk(
            "c1", "s1", 1, "photos", "main", 0, 0, "2026-03-02T10:00:00Z", "2026-03-02T10:00:00Z", text, "h", 30, ()
        )
        words = set(own_stem_words(replace(chunk, features=features), frozenset(feature_values(text)[0].split())))
        assert "git" in words  # the agent's own call counts
        assert not words & {"retri", "retry", "budget", "upload"}
