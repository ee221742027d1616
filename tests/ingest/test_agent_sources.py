"""Ingesting Codex CLI and Gemini CLI sessions beside Claude Code's: counts on the real corpus,
one project per repository whichever agent worked in it, spawned Codex agents, the source filter."""

from __future__ import annotations

import json
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from process_support import causantic, subprocess_env
from transcript_files import write_gemini_log

from causantic.cli.main import cli
from causantic.config import Config
from causantic.facade import Memory
from causantic.hooks.briefing import build_briefing
from causantic.ingest.service import ingest_paths
from causantic.retrieval.reconstruct import ReconstructRequest, reconstruct, render_reconstruction
from causantic.retrieval.search import SearchRequest
from causantic.services import Services, open_services

POMODORO = "codex/yoavf__ai-sessions/examples/codex-pomodor-timer.jsonl"
ENTIRE = "codex/blackgirlbytes__entire-token-costs-benchmark-tests/a7/1156299398/0/full.jsonl"
ENTIRE_THREAD = "019ef35b-2300-75e0-98d6-8e4dce14050f"
POMODORO_CWD = "/Users/yoavfarhi/dev/pomodoro/codex"
SPAWNS = "codex/ConfabulousDev__confab-web/backend/internal/codex/testdata/sample_rollout_parent_with_spawns.jsonl"
EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "causantic" / "examples" / "sessions"


def _ingest(services: Services, *paths: Path):  # type: ignore[no-untyped-def]
    return ingest_paths(services, list(paths), embed=False, workers=1)


def _sessions_by_project(services: Services) -> dict[str, list[tuple[str, str, str]]]:
    """Project name → (start, source, session id) of its sessions, in time order."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for name, started, source, sid in services.store.conn.execute(
        "SELECT p.name, s.started_at, s.source, s.id FROM sessions s JOIN projects p ON p.id = s.project_id"
        " ORDER BY s.started_at"
    ):
        out.setdefault(name, []).append((started, source, sid))
    return out


def _cross_session_pairs(services: Services) -> set[tuple[str, str]]:
    """(source session, target session) of every cross-session edge."""
    return {
        (a, b)
        for a, b in services.store.conn.execute(
            "SELECT s.session_id, t.session_id FROM edges e JOIN chunks s ON s.id = e.source_chunk_id"
            " JOIN chunks t ON t.id = e.target_chunk_id WHERE e.reference_type = 'cross-session'"
        )
    }


def test_the_codex_and_gemini_corpus_ingests_with_these_counts_and_again_changes_nothing(agents_corpus: Path) -> None:
    with open_services(Config()) as services:
        report = _ingest(services, agents_corpus / "codex", agents_corpus / "gemini")
        assert report.errors == []
        assert (report.files, report.sessions, report.chunks_added) == (31, 22, 264)
        assert report.broken_lines == 0
        assert report.skipped_lines["unknown record type"] == 3
        assert report.skipped_lines["empty message"] == 216
        stats = services.store.counts()
        # Two Confab fixtures share a thread id: 12 rollouts with messages are 11 sessions.
        assert stats["sources"] == {
            "claude-code": {"sessions": 0, "chunks": 0},
            "codex": {"sessions": 11, "chunks": 243},
            "gemini": {"sessions": 11, "chunks": 21},
            **{source: {"sessions": 0, "chunks": 0} for source in ("copilot", "cursor", "droid", "pi")},
        }
        # The summary's "sessions" is what `stats` then counts, not one per file holding the session.
        assert report.sessions == sum(source["sessions"] for source in stats["sources"].values())
        again = _ingest(services, agents_corpus / "codex", agents_corpus / "gemini")
        assert (again.files_unchanged, again.chunks_added, again.chunks_updated) == (31, 0, 0)
        assert services.store.counts()["sources"] == stats["sources"]


def test_claude_code_and_gemini_sessions_of_one_repository_share_its_project_in_time_order(agents_corpus: Path) -> None:
    # Real sessions of one test repository (computermode/test-repo) by both agents. Gemini CLI records
    # only sha256(cwd); Claude Code's sessions name the cwds, so the hashes find their projects.
    with open_services(Config()) as services:
        report = _ingest(
            services,
            agents_corpus / "claude-code" / "computermode__test-repo",
            agents_corpus / "gemini" / "computermode__test-repo",
        )
        assert report.errors == []
        projects = _sessions_by_project(services)
        test_dir = projects["test-dir"]
        assert [source for _, source, _ in test_dir] == ["gemini"] * 6 + ["claude-code"]
        test_repo = [source for _, source, _ in projects["test-repo"]]
        assert test_repo.count("claude-code") == 27 and test_repo.count("gemini") == 1
        assert test_repo.index("gemini") == 6  # between the Claude Code sessions of 18 March and 1 April
        pairs = _cross_session_pairs(services)
        for sessions in (test_dir, projects["test-repo"]):
            ids = [sid for _, _, sid in sessions]
            assert {(a, b) for a, b in zip(ids, ids[1:], strict=False)} <= pairs  # each to the next, across agents
        assert any(a[1] != b[1] for a, b in zip(test_dir, test_dir[1:], strict=False))

        # Which agent did what: reconstruct heads each session with it, so does the briefing.
        timeline = render_reconstruction(reconstruct(services.store, ReconstructRequest("test-dir"), 20_000))
        assert sum(bool(re.search(r"  Gemini CLI +\[", line)) for line in timeline.splitlines()) == 6
        replay = render_reconstruction(reconstruct(services.store, ReconstructRequest("test-dir", full=True), 20_000))
        headers = [line for line in replay.splitlines() if line.startswith("=== Session")]
        assert len(headers) == 7 and sum("· Gemini CLI (" in h for h in headers) == 6
        assert sum("· Claude Code (" in h for h in headers) == 1
    with Memory(config=Config()) as memory:
        briefing = build_briefing(
            memory, "/Users/ninawork/entire/test-repos/test-repo/test-dir", exclude_session=None, budget=2000
        )
        assert briefing is not None and "Claude Code" in briefing.text and "Gemini CLI" in briefing.text


def test_gemini_sessions_ingested_before_the_other_agents_join_their_project_later(agents_corpus: Path) -> None:
    with open_services(Config()) as services:
        _ingest(services, agents_corpus / "gemini" / "computermode__test-repo")
        # Three cwds, known by their hash; two are named in their sessions' text, and one is not.
        stand_ins = {name for name in _sessions_by_project(services) if name.startswith("gemini:")}
        assert stand_ins == {"gemini:f27a15ed61c0409f"}
        _ingest(services, agents_corpus / "claude-code" / "computermode__test-repo")
        projects = _sessions_by_project(services)
        assert [name for name in projects if name.startswith("gemini:")] == []
        assert [source for _, source, _ in projects["gemini-attach"]] == ["gemini"]
        assert [source for _, source, _ in projects["test-dir"]] == ["gemini"] * 6 + ["claude-code"]
        ids = [sid for _, _, sid in projects["test-dir"]]
        assert {(a, b) for a, b in zip(ids, ids[1:], strict=False)} <= _cross_session_pairs(services)
        assert projects["test-repo"][6][1] == "gemini"  # the stand-in's session, between 18 March and 1 April
        moved = services.store.conn.execute(
            "SELECT COUNT(*) FROM chunks c JOIN projects p ON p.id = c.project_id WHERE p.name = 'test-repo'"
            " AND c.source = 'gemini'"
        ).fetchone()[0]
        assert moved == 4 and services.store.keyword_search(
            "hello.py", project_ids=[services.store.find_projects("test-repo")[0].id]
        )  # the keyword index follows the move


def test_gemini_sessions_alone_are_filed_under_their_folder_when_their_text_names_it(agents_corpus: Path) -> None:
    # Gemini CLI records sha256(cwd) only. A session that names its folder (a tool's absolute path,
    # an error naming the workspace) proves it: that folder's hash is the projectHash. Sessions of
    # the same hash that name no path join it; `list-projects` shows folders, not hashes.
    with open_services(Config()) as services:
        _ingest(services, agents_corpus / "gemini")
        store = services.store
        projects = {p.name: p.path for p in store.projects_by_id(store.projects_with_chunks())}
        assert projects == {
            "test-dir": "/Users/ninawork/entire/test-repos/test-repo/test-dir",
            "gemini-attach": "/Users/ninawork/entire/test-repos/test-repo/gemini-attach",
            "cli": "/Users/peytonmontei/Documents/entire/devenv/entireio/cli",
            "gemini:f27a15ed61c0409f": "gemini:f27a15ed61c0409f",  # relative paths only: known by its hash
        }
        by_project = _sessions_by_project(services)
        assert (len(by_project["test-dir"]), len(by_project["cli"])) == (6, 3)


def _retarget(source: Path, target: Path, old_cwd: str, new_cwd: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source.read_text(encoding="utf-8").replace(old_cwd, new_cwd), encoding="utf-8")


def test_claude_code_and_codex_sessions_of_one_repository_link_and_search_narrows_by_source(
    agents_corpus: Path, tmp_path: Path, causantic_home: Path
) -> None:
    repo = tmp_path / "pomodoro"
    (repo / ".git").mkdir(parents=True)
    (repo / "web").mkdir()
    # The real Codex session, run in a folder of the repository; a Claude Code session in its root.
    _retarget(agents_corpus / POMODORO, tmp_path / "codex" / "rollout.jsonl", POMODORO_CWD, str(repo / "web"))
    claude_session = sorted(EXAMPLES.glob("*/*.jsonl"))[0]
    old_cwd = json.loads(next(line for line in claude_session.read_text().splitlines() if '"cwd"' in line))["cwd"]
    _retarget(claude_session, tmp_path / "claude" / "p" / claude_session.name, old_cwd, str(repo))
    with open_services(Config()) as services:
        report = _ingest(services, tmp_path / "claude", tmp_path / "codex")
        assert report.errors == []
        [(name, sessions)] = _sessions_by_project(services).items()
        assert name == "pomodoro" and {source for _, source, _ in sessions} == {"claude-code", "codex"}
        ids = [sid for _, _, sid in sessions]
        assert (ids[0], ids[1]) in _cross_session_pairs(services)

        query = "const files tests updated"  # words both sessions use
        both = services.searcher.search(SearchRequest(query, mode="keyword", limit=50))
        assert {h.chunk.source for h in both.hits} == {"codex", "claude-code"}
        for source in ("codex", "claude-code"):
            narrowed = services.searcher.search(SearchRequest(query, mode="keyword", source=source, limit=50))
            assert narrowed.hits and {h.chunk.source for h in narrowed.hits} == {source}
        assert services.searcher.search(SearchRequest(query, mode="keyword", source="gemini")).hits == []

    done = causantic(
        "search",
        "Pomodoro timer",
        "--source",
        "codex",
        "--json",
        env=subprocess_env(CAUSANTIC_HOME=str(causantic_home)),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert hits and {h["source"] for h in hits} == {"codex"}
    done = causantic("stats", "--json", env=subprocess_env(CAUSANTIC_HOME=str(causantic_home)), cwd=tmp_path)
    sources = json.loads(done.stdout)["sources"]
    assert sources["codex"]["session_count"] == 1 and sources["claude-code"]["session_count"] == 1
    assert sources["gemini"] == {"session_count": 0, "chunk_count": 0}


def test_a_spawned_codex_agent_is_linked_to_the_call_that_started_it(agents_corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / "2026" / "05" / "13"
    folder.mkdir(parents=True)
    parent = folder / "rollout-2026-05-13T01-00-00-019e-parent.jsonl"
    shutil.copyfile(agents_corpus / SPAWNS, parent)
    # The child thread's rollout, as Codex writes it: its meta names the parent thread.
    meta = {
        "id": "019e-child-1",
        "timestamp": "2026-05-13T01:00:00.300Z",
        "cwd": "/Users/dev/example",
        "source": {
            "subagent": {
                "thread_spawn": {
                    "parent_thread_id": "019e-parent",
                    "depth": 1,
                    "agent_nickname": "Hubble",
                    "agent_role": "default",
                }
            }
        },
        "agent_nickname": "Hubble",
        "agent_role": "default",
        "cli_version": "0.130.0",
    }
    records = [
        {"timestamp": "2026-05-13T01:00:00.300Z", "type": "session_meta", "payload": meta},
        {
            "timestamp": "2026-05-13T01:00:00.400Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Write a short poem"}],
            },
        },
        {
            "timestamp": "2026-05-13T01:00:03.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Here is the poem"}],
            },
        },
    ]
    child = folder / "rollout-2026-05-13T01-00-00-019e-child-1.jsonl"
    child.write_text("".join(json.dumps(r) + "\n" for r in records))
    with open_services(Config()) as services:
        # The child's rollout read alone first (before its parent's was written, say) is a session of
        # its own; read with its parent's, it is the parent session's stream, and only that.
        assert _ingest(services, child).sessions == 1
        report = _ingest(services, tmp_path / "sessions")
        assert report.errors == [] and report.sessions == 1 and report.chunks_removed == 1
        assert services.store.counts()["sources"]["codex"]["sessions"] == 1
        assert (report.subagent_streams, report.linked_subagents) == (1, 1)
        assert report.edges_added["brief"] == 1 and report.edges_added["debrief"] == 1
        agents = dict(services.store.conn.execute("SELECT agent, source FROM chunks WHERE agent != 'main'"))
        assert agents == {"default": "codex"}
        [lead] = [row[0] for row in services.store.conn.execute("SELECT content FROM chunks WHERE agent = 'main'")]
    # A spawn_agent call has no description: no empty slot before its message. Its result and the
    # wait for the agents read as words, not JSON.
    assert lead.startswith("[Tool:spawn_agent] default — Write a short poem\n")
    assert "[Result:spawn_agent] started Hubble (019e-child-1)\n" in lead
    assert "[Tool:wait_agent] 019e-child-1, 019e-child-2\n" in lead
    assert "[Result:wait_agent] 019e-child-1 completed: Here is the poem; 019e-child-2 failed: agent timed out" in lead


def test_a_forked_codex_agent_is_remembered_without_the_copy_of_its_parents_conversation(
    agents_corpus: Path, tmp_path: Path
) -> None:
    # spawn_agent with fork_context: Codex versions before fork references wrote the parent's items
    # again at the start of the child's rollout (their times rewritten), then the child's own work.
    folder = tmp_path / "sessions" / "2026" / "05" / "13"
    folder.mkdir(parents=True)
    parent = folder / "rollout-2026-05-13T01-00-00-019e-parent.jsonl"
    shutil.copyfile(agents_corpus / SPAWNS, parent)
    copied = [
        {**json.loads(line), "timestamp": "2026-05-13T01:00:00.600Z"} for line in parent.read_text().splitlines()[1:5]
    ]
    meta = {
        "id": "019e-child-2",
        "cwd": "/Users/dev/example",
        "parent_thread_id": "019e-parent",
        "agent_role": "explorer",
    }
    own = [
        ("user", "input_text", "Explore the codebase"),
        ("assistant", "output_text", "The codebase has three packages: api, web and jobs."),
    ]
    records = [
        {"timestamp": "2026-05-13T01:00:00.600Z", "type": "session_meta", "payload": meta},
        *copied,
        *(
            {
                "timestamp": f"2026-05-13T01:00:0{n + 1}.000Z",
                "type": "response_item",
                "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
            }
            for n, (role, kind, text) in enumerate(own)
        ),
    ]
    (folder / "rollout-2026-05-13T01-00-00-019e-child-2.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records)
    )
    with open_services(Config()) as services:
        report = _ingest(services, tmp_path / "sessions")
        assert report.errors == [] and (report.sessions, report.linked_subagents) == (1, 1)
        rows = services.store.conn.execute("SELECT agent, content FROM chunks ORDER BY start_time").fetchall()
    [explorer] = [text for agent, text in rows if agent == "explorer"]
    assert explorer == (
        "[User]\nExplore the codebase\n\n[Assistant]\nThe codebase has three packages: api, web and jobs."
    )
    assert sum(text.count("[Tool:spawn_agent] default — Write a short poem") for _, text in rows) == 1


def test_secrets_in_codex_shell_output_are_redacted(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    records = [
        {"timestamp": "2026-01-01T10:00:00Z", "type": "session_meta", "payload": {"id": "t1", "cwd": "/w/app"}},
        {
            "timestamp": "2026-01-01T10:00:01Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "print my env"}]},
        },
        {
            "timestamp": "2026-01-01T10:00:02Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "shell",
                "call_id": "c1",
                "arguments": json.dumps({"command": ["bash", "-lc", f"GITHUB_TOKEN={token} env"]}),
            },
        },
        {
            "timestamp": "2026-01-01T10:00:03Z",
            "type": "response_item",
            "payload": {
                "type": "function_call_output",
                "call_id": "c1",
                "output": json.dumps({"output": f"GITHUB_TOKEN={token}\n", "metadata": {"exit_code": 0}}),
            },
        },
    ]
    path = tmp_path / "rollout-2026-01-01T10-00-00-t1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with open_services(Config()) as services:
        assert _ingest(services, path).chunks_added == 1
        [content] = [r[0] for r in services.store.conn.execute("SELECT content FROM chunks")]
    assert token not in content and "print my env" in content and "[Tool:shell]" in content


def test_codex_tool_calls_read_as_the_commands_and_files_they_touched_not_as_json(agents_corpus: Path) -> None:
    # What `causantic reconstruct` shows of a real Codex session: the command an exec_command ran
    # and what it printed, not its arguments' JSON and the header Codex writes for the model.
    with open_services(Config()) as services:
        _ingest(services, agents_corpus / ENTIRE, agents_corpus / POMODORO)
        replay = render_reconstruction(
            reconstruct(
                services.store, ReconstructRequest("cli", session_id=ENTIRE_THREAD, full=True, keep_newest=False), 4_000
            )
        )
        pomodoro = render_reconstruction(
            reconstruct(services.store, ReconstructRequest("codex", full=True, keep_newest=False), 4_000)
        )
        contents = [row[0] for row in services.store.conn.execute("SELECT content FROM chunks")]
    assert "[Tool:exec_command] git status --short --branch --untracked-files=all\n" in replay
    assert "[Result:exec_command] ## main...origin/main [behind 166]\n" in replay
    assert "[Tool:exec_command] git pull --ff-only\n" in replay
    # (One output quotes a rollout line, header and all: what the command printed stays.)
    for noise in ('[Tool:exec_command] {"cmd":', "[Result:exec_command] Chunk ID:", "\nOriginal token count:"):
        assert sum(noise in c for c in contents) <= (1 if noise.startswith("\n") else 0), noise
    assert "[Tool:shell] ls\n" in pomodoro  # ["zsh", "-lc", "ls"]
    assert "[Tool:apply_patch] add index.html\n" in pomodoro
    assert (
        "[Tool:update_plan] Design the app structure and decide on file layout (HTML, CSS, JS). (in progress);"
        in pomodoro
    )


def test_gemini_tool_calls_read_as_the_folder_listed_and_the_question_asked(agents_corpus: Path) -> None:
    with open_services(Config()) as services:
        _ingest(services, agents_corpus / "gemini/computermode__test-repo/79/d52455f160/0/full.jsonl")
        contents = "\n".join(row[0] for row in services.store.conn.execute("SELECT content FROM chunks"))
    assert "[Tool:list_directory] .\n" in contents and '{"dir_path"' not in contents
    question = "The directory is empty. Should I create a new README.md file? (Yes, create it / No)"
    assert f"[Tool:ask_user] {question}\n" in contents and '{"questions"' not in contents


def test_a_codex_command_that_exits_non_zero_reads_as_an_error(tmp_path: Path) -> None:
    output = (
        "Chunk ID: 1a2b3c\nWall time: 0.4 seconds\nProcess exited with code 1\nOriginal token count: 7\n"
        "Output:\nFAILED tests/test_app.py::test_login\n"
    )
    records = [
        {"timestamp": "2026-01-01T10:00:00Z", "type": "session_meta", "payload": {"id": "t1", "cwd": "/w/app"}},
        {
            "timestamp": "2026-01-01T10:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "run the tests"}],
            },
        },
        {
            "timestamp": "2026-01-01T10:00:02Z",
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "c1",
                "arguments": json.dumps({"cmd": "pytest -q", "workdir": "/w/app", "yield_time_ms": 10000}),
            },
        },
        {
            "timestamp": "2026-01-01T10:00:03Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c1", "output": output},
        },
    ]
    path = tmp_path / "rollout-2026-01-01T10-00-00-t1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with open_services(Config()) as services:
        assert _ingest(services, path).chunks_added == 1
        [content] = [r[0] for r in services.store.conn.execute("SELECT content FROM chunks")]
    assert "[Tool:exec_command] pytest -q\n" in content
    assert content.endswith("[Error:exec_command] FAILED tests/test_app.py::test_login")


def test_files_of_agents_causantic_does_not_read_are_named_and_counted_not_passed_over(
    agents_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Kiro's exported histories beside a Copilot CLI session and a Codex rollout: "files read 4 of 4"
    # and nothing else would leave the user thinking the Kiro sessions are in memory.
    folder = tmp_path / "sessions"
    for name, source in [
        ("kiro-1.jsonl", "other-agents/computermode__test-repo/9b/bf78569566/0/full.jsonl"),
        ("kiro-2.jsonl", "other-agents/computermode__test-repo/cc/e48b6a4aec/0/full.jsonl"),
        ("copilot.jsonl", "other-agents/computermode__test-repo/69/9504f045e2/0/full.jsonl"),
        ("pomodoro.jsonl", POMODORO),
    ]:
        folder.mkdir(exist_ok=True)
        shutil.copyfile(agents_corpus / source, folder / name)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    done = CliRunner().invoke(cli, ["batch-ingest", str(folder), "--no-embed"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    assert (
        "note: 2 files in no format Causantic reads (it reads the sessions of Claude Code, Codex CLI, Gemini CLI, "
        "Copilot CLI, Cursor, Factory Droid and Pi; Kiro and OpenCode keep theirs in databases it does not read)"
    ) in said
    assert f"{folder / 'kiro-1.jsonl'}, {folder / 'kiro-2.jsonl'}" in said
    assert "sessions │ 2" in said  # the Copilot CLI session and the Codex one
    # Again with another folder: the files told about are unchanged and not told about twice; the
    # new folder holds a Codex rollout and an edit log that only its name calls a Codex session.
    edit_log = agents_corpus / "codex/ai4curation__ai-blame/tests/data/traces/codex-session1.jsonl"
    with open_services(Config()) as services:
        report = _ingest(services, folder, agents_corpus / "codex" / "ai4curation__ai-blame")
    assert (report.files_unchanged, report.sessions) == (4, 1)
    assert report.skipped_lines["file in another format"] == 1 and report.broken_lines == 0
    assert report.as_dict()["notes"] == [
        "1 file in no format Causantic reads (it reads the sessions of Claude Code, Codex CLI, Gemini CLI, "
        "Copilot CLI, Cursor, Factory Droid and Pi; Kiro and OpenCode keep theirs in databases it does not "
        f"read), so nothing of it is in memory: {edit_log}"
    ]


def test_a_growing_rollout_adds_only_its_new_turns(agents_corpus: Path, tmp_path: Path) -> None:
    lines = (agents_corpus / POMODORO).read_bytes().split(b"\n")
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"\n".join(lines[:60]) + b"\n")
    with open_services(Config()) as services:
        first = _ingest(services, path)
        path.write_bytes(b"\n".join(lines))
        grown = _ingest(services, path)
        assert first.chunks_added > 0 and grown.chunks_added > 0
        total = services.store.counts()["chunks"]
    fresh = tmp_path / "fresh" / "rollout.jsonl"
    fresh.parent.mkdir()
    shutil.copyfile(agents_corpus / POMODORO, fresh)
    with open_services(Config().with_overrides({"storage.dbPath": str(tmp_path / "fresh.db")})) as clean:
        assert _ingest(clean, fresh).chunks_added == total


def _graph(db: Path) -> tuple[set[str], set[tuple[str, str, str]]]:
    with sqlite3.connect(db) as conn:
        chunks = {r[0] for r in conn.execute("SELECT id FROM chunks")}
        edges = set(conn.execute("SELECT source_chunk_id, target_chunk_id, reference_type FROM edges"))
    return chunks, edges


@pytest.mark.slow
def test_a_killed_ingest_of_codex_rollouts_leaves_a_consistent_store_that_the_next_run_completes(
    agents_corpus: Path, tmp_path: Path, causantic_home: Path
) -> None:
    # 24 threads of the real 3 MB Codex session in the ~/.codex/sessions layout: ingest commits at
    # most every half second, and on a quiet machine eight went in one commit (no kill could land).
    folder = tmp_path / "sessions"
    text = (agents_corpus / ENTIRE).read_text(encoding="utf-8")
    for day in range(1, 25):
        thread = ENTIRE_THREAD[:-2] + f"{day:02d}"
        target = folder / "2026" / "06" / f"{day:02d}" / f"rollout-2026-06-{day:02d}T07-21-36-{thread}.jsonl"
        target.parent.mkdir(parents=True)
        target.write_text(text.replace(ENTIRE_THREAD, thread), encoding="utf-8")
    command = [sys.executable, "-m", "causantic", "batch-ingest", str(folder), "--no-embed", "--json"]
    # On a loaded machine the poller may first see the store when the ingest is already whole: then
    # no kill landed mid-ingest, and the attempt starts again from an empty home (at most four).
    for attempt in range(4):
        home = causantic_home / f"attempt-{attempt}"
        env = subprocess_env(CAUSANTIC_HOME=str(home))
        partial = _killed_twice(command, env, home / "memory.db")
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        assert json.loads(done.stdout)["errors"] == []
        resumed = _graph(home / "memory.db")
        if any(0 < n < len(resumed[0]) for n in partial):
            break
    else:
        pytest.fail(f"no kill landed mid-ingest in four attempts: {partial}")
    clean_home = tmp_path / "clean"
    subprocess.run(command, env={**env, "CAUSANTIC_HOME": str(clean_home)}, capture_output=True, check=True)
    assert _graph(clean_home / "memory.db") == resumed
    assert len(resumed[0]) == 24 * 218


def _killed_twice(command: list[str], env: dict[str, str], db: Path) -> list[int]:
    """Start the ingest twice on one store, each time killed (SIGKILL) once its first commit is seen
    (at once, then half a second later); each kill must leave a whole, consistent store. Returns the
    chunks each kill left."""
    partial = []
    for delay in (0.0, 0.5):
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:  # until the first commit
            try:
                with sqlite3.connect(db, timeout=1) as conn:
                    if conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]:
                        break
            except sqlite3.OperationalError:
                pass  # not created yet
            time.sleep(0.02)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert (
                conn.execute(
                    "SELECT COUNT(*) FROM edges WHERE source_chunk_id NOT IN (SELECT id FROM chunks)"
                    " OR target_chunk_id NOT IN (SELECT id FROM chunks)"
                ).fetchone()[0]
                == 0
            )
            partial.append(conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
    return partial


def test_a_gemini_json_lines_session_and_its_sub_agent_ingest_once_each_and_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gemini CLI (since April 2026) appends a reply again as its tokens and tool calls arrive, and
    # writes a sub-agent's conversation to chats/<session id>/<agent id>.jsonl.
    chats = tmp_path / "gemini" / "tmp" / "app" / "chats"
    session, agent = "5e551010-aaaa-4bbb-8ccc-000000000001", "a9e47000-dddd-4eee-8fff-000000000002"
    task = "Find where the token budget is enforced"
    run = {"name": "invoke_agent", "args": {"agent_name": "codebase_investigator", "prompt": task}}
    write_gemini_log(
        chats,
        "/home/dev/app",
        session,
        [
            {"user": "where is the token budget enforced?"},
            {"gemini": "I will ask an investigator.", "calls": [{**run, "output": "In budget.py", "agentId": agent}]},
            {"gemini": "It is enforced in retrieval/budget.py."},
        ],
    )
    grep = {"name": "run_shell_command", "args": {"command": "rg -n enforce_budget"}, "output": "budget.py:12"}
    alone = write_gemini_log(
        chats,
        "/home/dev/app",
        agent,
        [{"user": task}, {"gemini": "Searching.", "calls": [grep]}, {"gemini": "In budget.py"}],
        parent=session,
    )
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    # Read alone first (an ingest of that one file), the sub-agent is a session of its own; read with
    # its parent, it is a stream of the parent's session, and is kept there only.
    done = CliRunner().invoke(cli, ["ingest", str(alone), "--no-embed", "--json"])
    assert done.exit_code == 0 and json.loads(done.output)["session_count"] == 1, done.output
    done = CliRunner().invoke(cli, ["ingest", str(tmp_path / "gemini"), "--no-embed", "--json"])
    assert done.exit_code == 0, done.output
    summary = json.loads(done.output)
    assert (summary["session_count"], summary["subagent_streams"], summary["linked_subagents"]) == (1, 1, 1)
    with open_services(Config()) as services:
        chunks = services.store.conn.execute(
            "SELECT agent, session_id, content FROM chunks ORDER BY start_time, agent"
        ).fetchall()
        edges = dict(services.store.conn.execute("SELECT reference_type, COUNT(*) FROM edges GROUP BY 1"))
        [project] = _sessions_by_project(services)
        hits = services.searcher.search(SearchRequest("enforce_budget", mode="keyword")).hits
    assert project == "app" and {sid for _, sid, _ in chunks} == {session} and len(chunks) == 2
    [main] = [text for who, _, text in chunks if who == "main"]
    [investigator] = [text for who, _, text in chunks if who == "codebase_investigator"]
    # Each message once, in its last version: the call with its result, then the answer.
    assert main.count("where is the token budget enforced?") == 1 and main.count("[Tool:invoke_agent]") == 1
    assert f"[Tool:invoke_agent] codebase_investigator — {task}\n\n[Result:invoke_agent] In budget.py" in main
    assert investigator.count("[Tool:run_shell_command] rg -n enforce_budget") == 1
    assert edges["brief"] == 1 and edges["debrief"] == 1
    assert [h.chunk.agent for h in hits] == ["codebase_investigator"]


def test_copilot_sessions_are_looked_for_under_copilot_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Copilot CLI keeps its whole configuration under $COPILOT_HOME when set (its sessions too); init
    registered the MCP server there while batch-ingest kept looking in ~/.copilot."""
    from causantic.config import agent_folder_paths

    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    assert tmp_path / "copilot" / "session-state" in agent_folder_paths(Config())
    monkeypatch.delenv("COPILOT_HOME")
    assert Path.home() / ".copilot" / "session-state" in agent_folder_paths(Config())


def _cursor_session(projects: Path, workspace: str, session: str, prompt: str) -> None:
    folder = projects / workspace / "agent-transcripts"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        {"role": "user", "message": {"content": [{"type": "text", "text": f"<user_query>\n{prompt}\n</user_query>"}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": f"Done: {prompt}."}]}},
    ]
    (folder / f"{session}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_cursor_workspace_stays_one_project_when_its_cursor_folder_moves(tmp_path: Path) -> None:
    """Cursor records no cwd: the workspace's folder under ~/.cursor/projects stood for the project
    by its whole path, so the same ~/.cursor read from a new machine or a restored backup made a
    second project of every workspace (named apart by a longer path)."""
    first, second = "0f7a2b8e-9a41-4d5c-8e2f-3c1d5b6a7e80", "1e8b3c9f-ab52-4e6d-9f30-4d2e6c7b8f91"
    before, after = tmp_path / "alice" / ".cursor" / "projects", tmp_path / "backup" / "cursor" / "projects"
    _cursor_session(before, "Users-dev-shop", first, "fix the cart total")
    _cursor_session(before, "Users-dev-blog", "2f9c4dae-bc63-4f7e-a041-5e3f7d8c9fa2", "add an RSS feed")
    for session, prompt in ((first, "fix the cart total"), (second, "add a coupon field")):
        _cursor_session(after, "Users-dev-shop", session, prompt)
    with open_services(Config()) as services:
        _ingest(services, before)
        _ingest(services, after)
        projects = {name: sorted(s for *_, s in found) for name, found in _sessions_by_project(services).items()}
    assert projects == {
        "Users-dev-shop": sorted([first, second]),
        "Users-dev-blog": ["2f9c4dae-bc63-4f7e-a041-5e3f7d8c9fa2"],
    }


def test_a_cursor_workspaces_project_stored_at_its_folders_path_keeps_its_new_sessions(tmp_path: Path) -> None:
    """A store made before Cursor workspaces were keyed by their folder's name holds the project at
    the folder's whole path: a new session of that workspace joins it, not a second project, and
    the project takes the folder's key (so a moved ~/.cursor joins it too)."""
    projects = tmp_path / ".cursor" / "projects"
    _cursor_session(projects, "Users-dev-shop", "0f7a2b8e-9a41-4d5c-8e2f-3c1d5b6a7e80", "fix the cart total")
    folder = str(projects / "Users-dev-shop")
    with open_services(Config()) as services:
        services.store.resolve_project(folder, folder)  # as an older release made it
        _ingest(services, projects)
        assert list(_sessions_by_project(services)) == ["Users-dev-shop"]
        assert [r[0] for r in services.store.conn.execute("SELECT path FROM projects")] == [
            "~/.cursor/projects/Users-dev-shop"
        ]
