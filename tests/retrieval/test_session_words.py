"""A session that names a request's parts across its chunks, most of them not found by the search,
outranks a session that mentions the request once (retrieval.sessionWords), and the store reads a
session's words from every chunk of it, on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chunk_records import chunk_record
from transcript_files import write_session

from causantic import Memory
from causantic.config import Config
from causantic.retrieval.ranking import session_term_shares
from causantic.services import Services, open_services
from causantic.store.features import word_stems
from causantic.store.fts import identifier_terms

QUERY = "retry budget for uploads over slow links"
# Long turns: BM25 ranks a chunk that says a word once among many others below a short one.
FILLER = (
    "We went through the logs line by line with the team, compared the phone models, the app "
    "versions and the times of day, and wrote down what each of them showed before changing anything."
)


def _sessions(folder: Path) -> Path:
    sessions = {
        # the work: each chunk names a part of the request among much else, the parts again and again
        "work": [
            (f"photo uploads fail on some phones. {FILLER}", f"I'll look at the uploader first. {FILLER}"),
            (f"it happens on slow links. {FILLER}", f"There the app gives up after the first timeout. {FILLER}"),
            (f"the uploads stop after a minute. {FILLER}", f"So the phone's links are slow there. {FILLER}"),
            ("make it try again", "Added a retry budget: three tries with a growing pause."),
            (f"does it work now? {FILLER}", f"Yes, on all phones. {FILLER}"),
        ],
        # elsewhere: a session about something else that names the request once, in passing
        "passing": [
            ("the retry budget for uploads in CI is too small", "Raised it to three."),
            ("the page font looks blurry", "Switched to the system font."),
            ("the header overlaps the menu", "Gave the header a fixed height."),
            ("dark mode colours are off", "Took them from the design tokens."),
            ("the logo is cut off on narrow screens", "It scales with the width now."),
        ],
        # short chunks on uploads and slow links that fill the keyword list ahead of the work's long ones
        "network": [
            ("the VPN drops on slow links", "Raised the VPN keepalive for slow links."),
            ("uploads of logs to the bucket stall", "Split the uploads into parts."),
            ("video calls stutter on slow links", "Lowered the call bitrate on slow links."),
            ("backups are uploads too", "The backup uploads now resume."),
        ],
    }
    for name, turns in sessions.items():
        write_session(folder, "/work/photos", name, turns, day=2 if name == "work" else 3)
    return folder


def test_a_session_whose_words_lie_in_chunks_search_did_not_find_outranks_a_passing_mention(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _sessions(tmp_path / "sessions")
    # Candidate lists of four (a search for one hit): the work's long chunks on uploads and slow
    # links are not candidates, only its short "retry budget" turn is. The other session weighings
    # (the candidates' coverage among them) are off so that this test sees what the whole session
    # says alone, at a weight that decides a three-session toy store.
    alone = {
        "retrieval.keywordSearchLimit": "4",
        "retrieval.vectorSearchLimit": "4",
        "retrieval.sessionEvidence": "0",
        "retrieval.sessionContext": "0",
        "retrieval.feedbackWeight": "0",
        "retrieval.sessionCoverage": "0",
    }

    def first_session(memory: Memory) -> str:
        return memory.search(QUERY, limit=1, mode="keyword").hits[0].chunk.session_id

    with Memory(tmp_path / "home", overrides={**alone, "retrieval.sessionWords": "1"}) as memory:
        memory.ingest([folder])
        first = first_session(memory)
    with Memory(tmp_path / "home", overrides={**alone, "retrieval.sessionWords": "0"}) as memory:
        without = first_session(memory)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    with open_services(Config()) as services:  # the premise: one of the work's chunks is a candidate
        candidates = services.store.get_chunks([i for i, _ in services.store.keyword_search(QUERY, limit=4)])
        assert [c.session_id for c in candidates.values()].count("work") == 1
    assert first == "work"
    assert without == "passing"  # its one chunk holds more of the request than the work's candidate


@pytest.fixture
def services(backend_config: Config) -> Iterator[Services]:
    with open_services(backend_config) as opened:
        yield opened


def test_a_session_s_words_are_read_from_every_chunk_but_not_from_listings(services: Services) -> None:
    texts = {
        "s1": [
            "[User]\nphoto uploads fail on slow links",
            "[Assistant]\nAdded a retry budget",
            "[Tool:Bash] git log --oneline\n\n[Result:Bash] 1a2b3c4 raise the timeout for CI",
        ],
        "s2": ["[Tool:Bash] git log --oneline\n\n[Result:Bash] 1a2b3c4 add a retry budget for uploads"],
    }
    store = services.store
    with store.atomic():
        project = store.resolve_project("/work/photos", "/work/photos")
        n = 0
        for session, chunks in texts.items():
            records = []
            for text in chunks:
                records.append(
                    chunk_record(
                        n, session_id=session, content=text, search_terms=identifier_terms(text), content_hash=f"h{n}"
                    )
                )
                n += 1
            store.save_session(project, session, records)
    asked = sorted(word_stems("retry budget uploads slow links timeout"))
    held = store.session_stem_counts(["s1", "s2", "s3"], asked)
    # the listed "timeout" is not its own; "uploads" and "slow links" are said in one chunk, "retry budget" in another
    assert held["s1"] == (3, dict.fromkeys(word_stems("retry budget uploads slow links"), 1))
    assert held["s2"] == (1, {})  # it only lists a commit that names them
    assert "s3" not in held  # no such session
    assert store.session_stem_counts(["s1"], []) == {}


def test_a_word_said_in_more_chunks_counts_more_and_a_long_session_must_say_it_more() -> None:
    terms = [(2.0, [("retri",)]), (1.0, [("upload",), ("up", "load")])]
    shares = session_term_shares(
        {
            "once": (10, {"retri": 1, "upload": 1}),
            "often": (10, {"retri": 4, "upload": 1}),
            "long": (40, {"retri": 4, "upload": 1}),
            "spelt": (10, {"retri": 1, "up": 2, "load": 1}),
        },
        terms,
    )
    assert shares["often"] > shares["once"] > 0
    assert shares["often"] > shares["long"]
    assert shares["spelt"] == pytest.approx(shares["once"])  # "up load": the fewer of its stems' chunks
    assert all(0 < share < 1 for share in shares.values())
    assert session_term_shares({}, terms) == {}
