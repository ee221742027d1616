"""A chunk that only mentions the work (a git log listing the commit) ranks below the work itself."""

from __future__ import annotations

import json
from pathlib import Path

from causantic import Memory
from causantic.retrieval.mentions import listing_share, own_stem_words
from causantic.retrieval.relevance import QueryProfile, QueryTerm, stem
from causantic.store.features import split_tool_output, word_stems
from causantic.store.records import StoredChunk

SUBJECT = "retry failed uploads with exponential backoff"
LOG = "\n".join(
    [
        "9f1c2ab add a dark theme to the settings page",
        f"3e5d7c1 {SUBJECT}",
        "0b2a9e4 bump the linter to 0.6",
        "77c1d0e fix flaky clock test in the scheduler",
    ]
)


def mention_share(profile: QueryProfile, text: str) -> float:
    """What search demotes a chunk holding ``text`` by (a row without stored features)."""
    chunk = StoredChunk("c", "s", 1, "p", "main", 0, 0, "", "", text, "", 0, ())
    words = word_stems(text)
    return listing_share(profile, words, own_stem_words(chunk, words))


def _profile(*words: str) -> QueryProfile:
    return QueryProfile(tuple(QueryTerm((stem(w),), (), 1.0, False) for w in words), 1000)


def test_tool_output_is_told_apart_from_the_chunk_s_own_words() -> None:
    text = (
        "[User]\nwhat changed?\n\n[Tool:Bash] git log --oneline\n\n[Result:Bash] abc fix uploads\nmore"
        "\n\n[Assistant]\nok"
    )
    own, output = split_tool_output(text)
    assert "what changed" in own and "git log --oneline" in own and "[Assistant]\nok" in own
    assert output.startswith("[Result:Bash]") and "fix uploads\nmore" in output
    assert split_tool_output("plain chat, no sections") == ("plain chat, no sections", "")


def test_mention_share_is_the_share_of_the_match_found_only_in_tool_output() -> None:
    profile = _profile("retry", "uploads")
    listing = f"[Tool:Bash] git log --oneline\n\n[Result:Bash] {LOG}"
    assert mention_share(profile, listing) == 1.0
    work = f"[Assistant]\nI made uploads retry.\n\n[Result:Bash] {LOG}"
    assert mention_share(profile, work) == 0.0
    half = f"[User]\nthe uploads fail\n\n[Result:Bash] {LOG}"
    assert mention_share(profile, half) == 0.5
    assert mention_share(profile, "[User]\nno match at all") == 0.0
    assert mention_share(profile, f"Caroline: {SUBJECT}") == 0.0  # chat without tool sections


def _record(session: str, i: int, role: str, content: object, minute: int) -> dict[str, object]:
    message = {"role": role, "content": content}
    return {
        "parentUuid": f"{session}-{i - 1}" if i else None,
        "isSidechain": False,
        "type": role,
        "message": message,
        "uuid": f"{session}-{i}",
        "sessionId": session,
        "cwd": "/work/uploader",
        "timestamp": f"2026-03-0{2 if session == 'work' else 5}T10:{minute:02d}:00.000Z",
    }


def _sessions(folder: Path) -> Path:
    """Session "work" makes the change and commits it; a later session "review" only lists it in git log."""
    folder.mkdir(parents=True, exist_ok=True)
    work = [
        ("user", "uploads to the bucket fail on flaky networks; make the client try again, waiting longer each time"),
        (
            "assistant",
            [
                {"type": "text", "text": "I'll make the upload client try again, with a growing delay."},
                {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "uploader/client.py"}},
            ],
        ),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "The file was updated."}]),
        (
            "assistant",
            [
                {
                    "type": "text",
                    "text": "Done: a failed upload now tries again up to five times, "
                    "doubling the wait between attempts.",
                }
            ],
        ),
    ]
    review = [
        ("user", "what landed this week? then let's look at the settings page theme"),
        ("assistant", [{"type": "tool_use", "id": "r1", "name": "Bash", "input": {"command": "git log --oneline -4"}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "r1", "content": LOG}]),
        ("assistant", [{"type": "text", "text": "Four commits landed. The settings page theme is next."}]),
    ]
    for name, turns in (("work", work), ("review", review)):
        lines = [json.dumps(_record(name, i, role, content, i)) for i, (role, content) in enumerate(turns)]
        (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_the_session_that_did_the_work_outranks_one_that_lists_it(tmp_path: Path) -> None:
    folder = _sessions(tmp_path / "sessions")
    # The session-context boost also favours "work" here (its opening prompt names uploads), and so
    # does the vector list's say in the fusion once its cosines are spread, and query feedback (the
    # best candidates' topic), and the weight of its Edit call (workEvidence); all are off so that this
    # test sees the mention penalty alone (0.5, the default).
    without_context = {
        "retrieval.sessionContext": "0",
        "retrieval.vectorSpread": "false",
        "retrieval.feedbackWeight": "0",
        "retrieval.workEvidence": "0",
    }
    with Memory(tmp_path / "home", overrides={**without_context, "retrieval.mentionPenalty": "0.5"}) as memory:
        memory.ingest([folder])
        result = memory.search(SUBJECT, limit=10)
        sessions = list(dict.fromkeys(h.chunk.session_id for h in result.hits))
        assert sessions[0] == "work", sessions
        assert "review" in sessions  # the listing is still found, just not first
    with Memory(tmp_path / "home", overrides={**without_context, "retrieval.mentionPenalty": "0"}) as memory:
        unpenalised = memory.search(SUBJECT, limit=10)
        assert unpenalised.hits[0].chunk.session_id == "review"  # what the penalty corrects


def test_every_listing_is_demoted_however_many_sessions_list_the_work(tmp_path: Path) -> None:
    """Many later sessions list the commit in git log: each is a mention, so the penalty must reach
    all of them, not only the first 20 fused candidates (those further down, left at full score,
    rose above both the demoted listings and the session that did the work)."""
    folder = _sessions(tmp_path / "sessions")
    (folder / "review.jsonl").unlink()
    for n in range(30):
        log = f"{n:02d}a1b2c review note {n} for the weekly sync\n{LOG}"
        turns = [
            ("user", f"what landed in week {n}?"),
            ("assistant", [{"type": "tool_use", "id": "r1", "name": "Bash", "input": {"command": "git log"}}]),
            ("user", [{"type": "tool_result", "tool_use_id": "r1", "content": log}]),
        ]
        lines = [json.dumps(_record(f"review{n}", i, role, content, i)) for i, (role, content) in enumerate(turns)]
        (folder / f"review{n}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    overrides = {"retrieval.sessionContext": "0", "retrieval.mentionPenalty": "0.5"}
    with Memory(tmp_path / "home", overrides=overrides) as memory:
        memory.ingest([folder])
        result = memory.search(SUBJECT, limit=10)
        sessions = list(dict.fromkeys(h.chunk.session_id for h in result.hits))
        assert sessions[0] == "work", sessions
