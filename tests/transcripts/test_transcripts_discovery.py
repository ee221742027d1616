"""discover / read_session: every sub-agent layout on real examples, and folder walking rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_records import assistant, jsonl, text, user, write

from causantic.errors import TranscriptError
from causantic.transcripts import SessionFiles, assemble_turns, discover, read_session
from causantic.transcripts.model import AgentMeta


def _only_session(folder: Path) -> SessionFiles:
    [found] = discover(folder)
    return found


def test_the_agent_team_session_yields_its_six_sub_agent_transcripts_with_their_meta(
    corpus_dir: Path,
) -> None:
    folder = corpus_dir / "daaain__claude-code-log/test/test_data/real_projects/-experiments-worktrees"
    files = _only_session(folder)
    assert files.session_id == "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    assert files.main == folder / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    assert files.folder == folder
    assert len(files.subagents) == 6

    [session], report = read_session(files)
    assert session.main is not None
    assert len(session.main.messages) == 62
    assert session.cwd == "-experiments/worktrees"
    assert {t.agent_id: len(t.messages) for t in session.subagents} == {
        "a36efb2a1231c41e2": 14,
        "a4ca7529859c158c2": 45,
        "a52886dc180afb356": 34,
        "a6aa8ad077d9ea083": 12,
        "ab1e6e141221a29ab": 33,
        "aef063ba534d73153": 12,
    }
    assert session.subagents[1].meta == AgentMeta(
        agent_type="general-purpose",
        description="Research Claude Code plan mode",
        worktree_path="-experiments/worktrees/.claude/worktrees/agent-a4ca7529",
    )
    assert len(session.files) == 7
    assert dict(report.counts) == {"non-message record": 73}
    assert all(len(assemble_turns(t)) == 1 for t in session.subagents)


def test_sub_agent_files_in_a_subagents_folder_link_to_agent_progress_of_the_main_file(
    corpus_dir: Path,
) -> None:
    folder = corpus_dir / "marot__spotter/test/fixtures/transcripts"
    files = next(s for s in discover(folder) if s.session_id.startswith("fa812bfe"))
    [session], _ = read_session(files)
    assert session.main is not None
    assert [(t.agent_id, len(t.messages)) for t in session.subagents] == [
        ("a93ccab", 37),
        ("aa84377", 31),
        ("acompact-70d8e7", 2),  # the instruction and the summary: 13 hook notes before them are the main stream's
    ]
    linked = {p.agent_id for p in session.main.progress}
    assert linked == {"a93ccab", "aa84377"}


def test_flat_agent_files_beside_sessions_join_the_session_named_in_their_records(corpus_dir: Path) -> None:
    folder = corpus_dir / (
        "kfischer-okarin__scripts-and-tools/src/claude-history/test/fixtures/claude-projects/-Users-user-project"
    )
    found = discover(folder)
    assert len(found) == 10  # 10 session files; the 19 agent-*.jsonl files all attach to one of them
    assert all(s.main is not None for s in found)
    assert sum(len(s.subagents) for s in found) == 19
    files = next(s for s in found if s.session_id == "b3edadab-bca0-4054-9b41-f7ffa6941260")
    [session], _ = read_session(files)
    assert session.main is not None
    assert len(session.main.messages) == 24
    assert [(t.agent_id, len(t.messages)) for t in session.subagents] == [
        ("a434715", 6),
        ("a4e24f0", 2),
        ("a6e784a", 2),
        ("a86dcdc", 1),
        ("a8a15e2", 2),
        ("rewound-84944fbf", 4),  # two attempts the user rewound past (claude-history's rewind fixture)
        ("rewound-291cfc48", 4),
    ]


def test_an_empty_session_file_with_agent_files_still_yields_the_agents(corpus_dir: Path) -> None:
    folder = corpus_dir / (
        "kfischer-okarin__scripts-and-tools/src/claude-history/test/fixtures/claude-projects/-Users-user-project"
    )
    files = next(s for s in discover(folder) if s.session_id.startswith("0f13eeba"))
    assert files.main is not None and files.main.stat().st_size == 0
    [session], _ = read_session(files)
    assert session.main is None
    assert [t.agent_id for t in session.subagents] == ["a1593bc", "a7b5cd5"]


def test_inline_sidechains_appear_as_sub_agents_of_their_session(corpus_dir: Path) -> None:
    path = corpus_dir / (
        "d-kimuson__claude-code-viewer/mock-global-claude-dir/projects/sample-project/"
        "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    )
    [session], _ = read_session(_only_session(path))
    assert session.main is not None
    assert len(session.subagents) == 5
    assert all(t.agent_id and t.agent_id.startswith("sidechain-") for t in session.subagents)
    assert session.files == (path,)


def test_sub_agent_files_without_their_session_file_still_form_a_session(corpus_dir: Path) -> None:
    folder = corpus_dir / "randlee__claude-history/docs/examples/claude-history-subagents"
    files = _only_session(folder)
    assert files.main is None
    assert files.session_id == "c04f363a-5592-4c56-b4af-8d9533b5bca1"
    assert len(files.subagents) == 13
    [session], _ = read_session(files)
    assert session.main is None
    assert session.session_id == files.session_id
    assert len(session.subagents) == 13
    assert session.cwd is not None


def test_a_main_file_of_any_name_pairs_with_agent_files_in_a_sub_folder(corpus_dir: Path) -> None:
    folder = corpus_dir / "randlee__claude-history/docs/examples/claude-history-simple"
    files = _only_session(folder)
    assert files.main is not None and files.main.name == "session.jsonl"
    assert files.session_id == "967e501d-aa48-4eab-a21f-b17058bd78f0"  # from its first record
    assert {p.parent.name for p in files.subagents} == {"agents"}
    [session], _ = read_session(files)
    # 195 of the session file, and the result of its last Read call, held only by the compaction's file.
    assert session.main is not None and len(session.main.messages) == 196
    assert len(session.subagents) == 9


def test_entire_checkpoint_copies_named_full_jsonl_are_each_a_session(corpus_dir: Path) -> None:
    found = discover(corpus_dir / "entireio__cli")
    assert len(found) == 37
    assert all(s.main is not None and s.main.name == "full.jsonl" for s in found)
    assert all(not s.session_id == "full" for s in found)


def test_workflow_agents_nested_under_subagents_belong_to_the_session(corpus_dir: Path) -> None:
    files = _only_session(corpus_dir / "daaain__claude-code-log/test/test_data/workflow_basic")
    assert [p.name for p in files.subagents] == [
        "agent-ag000001.jsonl",
        "agent-ag000002.jsonl",
        "agent-ag000003.jsonl",
        "journal.jsonl",  # a workflow journal: no message records, so no transcript
    ]
    # These (hand-made) records say sessionId "<session>#agent-<id>"; the folder names the owner.
    [session], _ = read_session(files)
    assert session.session_id == "11110000-0000-4000-8000-000000000001"
    assert [t.agent_id for t in session.subagents] == ["ag000001", "ag000002", "ag000003"]
    assert {t.meta.agent_type for t in session.subagents if t.meta} == {"workflow-subagent"}


def test_the_other_agents_files_read_as_the_agent_that_wrote_each(corpus_dir: Path) -> None:
    # Copilot CLI, Factory Droid, Pi and Cursor sessions are read; Kiro's exported histories and the
    # hand-made generic fixtures are not. Entire filed one Gemini CLI document under "Opencode".
    found = discover(corpus_dir.parent / "other-agents") + discover(corpus_dir.parent / "cursor")
    assert len(found) == 16
    read = [s for files in found for s in read_session(files)[0]]
    assert [(s.source, s.session_id[:8], len(s.main.messages) if s.main else 0) for s in read] == [
        ("gemini", "a324af07", 4),
        ("copilot", "31b0eadb", 5),
        ("droid", "a31fbbb0", 2),
        ("droid", "992853e5", 2),
        ("copilot", "b4257b63", 7),
        ("pi", "019dc132", 9),
        ("cursor", "13e662e2", 56),  # the ids their Entire checkpoints' metadata.json record
        ("cursor", "fcab959a", 5),
    ]
    unread = [f.main.parts[-4] for f in found if f.main is not None and not read_session(f)[0]]
    assert unread == ["75", "75", "9b", "cc", "d0", *["jazzyalex__agent-sessions"] * 3]


def test_discovery_of_the_whole_corpus_is_deterministic_and_places_each_file_once(corpus_dir: Path) -> None:
    first, second = discover(corpus_dir), discover(corpus_dir)
    assert first == second
    keys = [str(s.main if s.main is not None else s.subagents[0]) for s in first]
    assert keys == sorted(keys)
    placed = [p for s in first for p in ([s.main] if s.main else []) + list(s.subagents)]
    assert len(placed) == len(set(placed))
    visible = [
        p
        for p in corpus_dir.rglob("*.jsonl")
        if not any(part.startswith(".") for part in p.relative_to(corpus_dir).parts)
    ]
    assert set(placed) == set(visible)


def test_hidden_folders_and_node_modules_are_not_entered(tmp_path: Path) -> None:
    data = jsonl(user("q", session="s1"), assistant([text("a")], session="s1"))
    write(tmp_path / "proj" / "s1.jsonl", data)
    write(tmp_path / ".cache" / "s2.jsonl", data)
    write(tmp_path / "proj" / "node_modules" / "pkg" / "s3.jsonl", data)
    found = discover(tmp_path)
    assert [s.main for s in found] == [tmp_path / "proj" / "s1.jsonl"]


def test_a_sub_agent_file_whose_session_file_is_absent_forms_its_own_session(tmp_path: Path) -> None:
    sid = "11111111-2222-4333-8444-555555555555"
    agent = jsonl(user("task", session=sid, isSidechain=True, agentId="a1"))
    write(tmp_path / sid / "subagents" / "agent-a1.jsonl", agent)
    write(tmp_path / sid / "subagents" / "agent-a1.meta.json", b"[not an object]")
    [files] = discover(tmp_path)
    assert (files.session_id, files.main, files.folder) == (sid, None, tmp_path)
    [session], report = read_session(files)
    assert session.main is None
    assert [t.agent_id for t in session.subagents] == ["a1"]
    assert dict(report.counts) == {"invalid agent meta file": 1}


def test_a_single_file_can_be_discovered_directly(tmp_path: Path) -> None:
    path = write(tmp_path / "x.jsonl", jsonl(user("q", session="abc")))
    assert discover(path) == [SessionFiles("abc", path, (), tmp_path)]


def test_discovering_a_missing_folder_raises_a_transcript_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="No transcript folder"):
        discover(tmp_path / "missing")
