"""A short session that did the one thing asked about is the whole story: told whole, the answer stops
there and says how many weaker matches it left out, rather than filling its budget with other
sessions' (episodes.wholeSessionAlone). On the coding dev set "add CODEOWNERS file" told its
one-chunk session, 92 tokens, then 1,708 tokens of a session matching at 3%."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_session

from causantic import Memory
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.format import render_episodes

QUERY = "add a CODEOWNERS file with the platform team as default owners"
SHORT = "codeowners"
# Sessions of the same project that share a word with the question, each about something else: side
# matches, far weaker than the short session's (episodes.sideShare).
SIDES = {
    "docs": "the team wiki page lists who owns the release notes",
    "ci": "the default branch protection needs a platform check",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("whole-session")
    folder = root / "sessions"
    write_session(
        folder,
        "/work/infra",
        SHORT,
        [
            (
                "create a .github/CODEOWNERS file and add the platform team as the default owners of everything",
                "Created .github/CODEOWNERS with `* @acme/platform`: the platform team owns every file by default.",
            )
        ],
    )
    for session, said in SIDES.items():
        write_session(
            folder,
            "/work/infra",
            session,
            [(said, "Looked into it. " + "Read the settings and the history of the repository. " * 20)] * 3,
            day=3,
        )
    with Memory(root / "home") as memory:
        memory.ingest([folder])
    return root / "home"


@pytest.mark.parametrize("kind", ["recall", "predict"])
def test_a_short_session_told_whole_is_the_whole_answer(home: Path, kind: str) -> None:
    with Memory(home) as memory:
        answer = getattr(memory, kind)(QUERY)
        searched = {h.chunk.session_id for h in memory.search(QUERY).hits}
    assert searched >= {SHORT, *SIDES}  # search still lists the weaker matches
    assert {c.session_id for c in answer.chunks} == {SHORT}
    note = "weaker matches in 2 other sessions left out (the story's session told whole)"
    assert note in answer.notes
    text = render_episodes(answer)
    assert note in text.splitlines()[0]
    assert "@acme/platform" in text
    assert approx_tokens(text) < 500  # of a 2,500-token budget: what it tells is all there is


def test_side_matches_fill_the_room_when_asked_to(home: Path) -> None:
    # episodes.wholeSessionAlone off: what the story leaves goes to the side matches, as before.
    with Memory(home, overrides={"episodes.wholeSessionAlone": "false"}) as memory:
        answer = memory.recall(QUERY)
    assert {c.session_id for c in answer.chunks} == {SHORT, *SIDES}
    assert not any("told whole" in note for note in answer.notes)
