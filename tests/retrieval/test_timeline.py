"""`reconstruct` as a timeline a person can read, paged text, and session titles, on real sessions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runs import cli_output

from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.retrieval.listing import SessionSummary
from causantic.retrieval.reconstruct import Reconstruction, render_reconstruction, timeline_line
from causantic.services import open_services
from causantic.store.records import StoredChunk

REAL = "daaain__claude-code-log/test/test_data/real_projects"
SAMPLE = f"{REAL}/-Users-dain-workspace-claude-code-log-sample"  # 12 sessions with chunks
SOUND = f"{REAL}/-Users-dain-workspace-JSSoundRecorder"  # prompts behind IDE wrappers
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d  [0-9a-f]{8}  Claude Code +\[[^\]]+\] +\d+ chunks?  \S")


@pytest.fixture
def store_home(corpus_dir: Path) -> Path:
    with open_services(Config()) as services:
        ingest_paths(services, [corpus_dir / SAMPLE, corpus_dir / SOUND], embed=False, workers=1)
    return corpus_dir


def test_reconstruct_defaults_to_one_line_per_session_oldest_first_with_titles(store_home: Path) -> None:
    out = cli_output("reconstruct", "claude-code-log")
    lines = out.splitlines()
    assert lines[0] == "claude-code-log: 12 sessions, oldest first; times in UTC"
    sessions = [line for line in lines if LINE.match(line)]
    assert len(sessions) == 12
    assert sessions == sorted(sessions)  # oldest first, the newest last
    assert "Hey Claude, can you please add a Github Action to run tests and linting?" in sessions[0]
    assert not any(marker in out for marker in ("[Tool:", "[Result:", "[Assistant]"))  # no chunk text
    assert len(out.splitlines()) < 20


def test_a_timeline_page_says_how_many_sessions_lie_beyond_it_and_how_to_see_them(store_home: Path) -> None:
    first = cli_output("reconstruct", "claude-code-log", "--limit", "5").splitlines()
    assert first[0] == "claude-code-log: 5 sessions, oldest first (page 1 of 3); times in UTC"
    assert first[1] == "… 7 earlier sessions not shown; use --page 2"
    last = cli_output("reconstruct", "claude-code-log", "--limit", "5", "--page", "3")
    assert "… 10 later sessions not shown; use --page 2" in last
    ids = [
        line.split()[2]
        for page in ("1", "2", "3")
        for line in cli_output("reconstruct", "claude-code-log", "--limit", "5", "--page", page).splitlines()
        if LINE.match(line)
    ]
    assert len(ids) == len(set(ids)) == 12


def test_the_text_of_one_session_is_paged_from_the_end_and_never_cut_without_saying_so(store_home: Path) -> None:
    session = "326189cf"  # 8 chunks
    first = cli_output("reconstruct", "claude-code-log", "--session", session, "--max-tokens", "1500", "--json")
    page1 = json.loads(first)
    assert page1["view"] == "text" and page1["earlier_count"] > 0 and page1["later_count"] == 0
    assert page1["split_sessions"] == [page1["sessions"][0]["session_id"]]
    text = cli_output("reconstruct", "claude-code-log", "--session", session, "--max-tokens", "1500")
    assert f"… {page1['earlier_count']} earlier chunks not shown; use --page 2" in text
    assert "(only part of this session is on this page)" in text
    seen = [c["id"] for c in page1["chunks"]]
    page = 2
    while True:
        data = json.loads(
            cli_output(
                "reconstruct",
                "claude-code-log",
                "--session",
                session,
                "--max-tokens",
                "1500",
                "--page",
                str(page),
                "--json",
            )
        )
        seen = [c["id"] for c in data["chunks"]] + seen
        if not data["earlier_count"]:
            break
        page += 1
    full = json.loads(
        cli_output("reconstruct", "claude-code-log", "--session", session, "--max-tokens", "50000", "--json")
    )
    assert seen == [c["id"] for c in full["chunks"]] and not full["truncated"]


def test_previous_session_on_the_command_line_is_the_one_before_the_agents_own(
    store_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--previous-session` failed without `--current-session`, an id an agent running the command in
    its shell does not know offhand, where the shell holds it ($CLAUDE_CODE_SESSION_ID, $CODEX_THREAD_ID)."""
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    ids = [s["session_id"] for s in json.loads(cli_output("reconstruct", "claude-code-log", "--json"))["sessions"]]
    monkeypatch.setenv("CODEX_THREAD_ID", ids[-1])  # the newest, oldest first
    before = json.loads(cli_output("reconstruct", "claude-code-log", "--previous-session", "--json"))
    assert [s["session_id"] for s in before["sessions"]] == [ids[-2]]
    monkeypatch.delenv("CODEX_THREAD_ID")
    unknown = cli_output("reconstruct", "claude-code-log", "--previous-session")
    assert ids[-1][:8] in unknown and "The current session's id was not given" in unknown


def test_list_sessions_and_the_json_timeline_carry_the_same_titles(store_home: Path) -> None:
    listed = json.loads(cli_output("list-sessions", "JSSoundRecorder", "--json"))
    (session,) = listed["sessions"]
    assert session["title"].startswith("OK, so this was just so you know what there is now")
    timeline = json.loads(cli_output("reconstruct", "JSSoundRecorder", "--json"))
    assert [s["title"] for s in timeline["sessions"]] == [session["title"]]
    table = cli_output("list-sessions", "JSSoundRecorder")
    assert "OK, so this" in table and "ide_opened_file" not in table


def test_a_one_chunk_session_reads_1_chunk_not_1_chunks() -> None:
    """Most of test-repo's 27 sessions hold one chunk; its timeline read "1 chunks" on each of their lines."""
    session = SessionSummary("e31c844c-e04e", "2026-06-22T18:55:00Z", "2026-06-22T18:56:00Z", 1, 201, ("main",), "x")
    assert "  [main]  1 chunk  x" in timeline_line(session)


def test_agent_lines_mark_only_a_session_with_several_agents() -> None:
    """A page holding a session with a sub-agent marked "--- Agent: main ---" in every other session
    on it too, where main is the only agent (u/proj of the shared corpus: mem_sess beside mem_sc)."""

    def chunk(session: str, agent: str, minute: int) -> StoredChunk:
        stamp = f"2025-06-01T10:{minute:02d}:00Z"
        return StoredChunk(
            f"{session}-{minute}",
            session,
            1,
            "proj",
            agent,
            minute,
            0,
            stamp,
            stamp,
            f"[User] {agent} {minute}",
            "h",
            5,
            (),
        )

    chunks = (
        chunk("alone", "main", 0),
        chunk("alone", "main", 1),
        chunk("team", "main", 2),
        chunk("team", "Explore", 3),
    )
    sessions = tuple(
        SessionSummary(s, "2025-06-01T10:00:00Z", "2025-06-01T10:03:00Z", 2, 10, agents, "")
        for s, agents in (("alone", ("main",)), ("team", ("Explore", "main")))
    )
    text = render_reconstruction(Reconstruction("proj", "timeline", "text", sessions, chunks, 20, 1, 1, 0, 0))
    alone, team = text.split("=== Session team")
    assert "--- Agent:" not in alone
    assert "--- Agent: main ---" in team and "--- Agent: Explore ---" in team


def test_timeline_lines_keep_their_titles_in_one_column() -> None:
    """'… Claude Code  [main]  3 chunks  Lately, …' over '… Claude Code  [main]  127 chunks  I see …':
    each line was laid out alone, so titles started wherever a count, agent list or agent name ended."""
    sessions = (
        SessionSummary("67a8478e-0001", "2025-09-19T17:34:00Z", "2025-09-19T17:36:00Z", 3, 900, ("main",), "Lately"),
        SessionSummary("0fae0449-0002", "2025-09-19T23:23:00Z", "2025-09-20T05:11:00Z", 127, 9, ("main",), "I see"),
        SessionSummary(
            "019a93b9-0003",
            "2025-11-17T15:30:00Z",
            "2025-11-17T15:38:00Z",
            16,
            900,
            ("main", "Explore"),
            "Codex",
            "codex",
        ),
    )
    for width in (None, 120):
        text = render_reconstruction(
            Reconstruction("proj", "timeline", "timeline", sessions, (), 20, 1, 1, 0, 0), width=width
        )
        lines = text.splitlines()[1:]
        starts = {line.rindex(title) for line, title in zip(lines, ("Lately", "I see", "Codex"), strict=True)}
        assert len(starts) == 1, text
        assert "    3 chunks" in lines[0] and "  127 chunks" in lines[1]  # counts aligned on the right
