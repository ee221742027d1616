"""Many processes, one store: MCP servers answering while CLI ingests and hook workers write.

What a user runs at once: one server per Claude Code session, hooks ingesting in the background,
maybe a manual `causantic ingest`. No request may fail with "database is locked", and every chunk
must arrive exactly once: the result equals one ingest run alone.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from process_support import (
    CORPUS_FOLDERS,
    McpProcess,
    causantic,
    claude_projects,
    run_hook,
    subprocess_env,
    wait_for,
    worker_pids,
)
from tool_answers import hit_headers, text

from causantic.runs import read_status

QUERIES = [
    ("search", {"query": "redirect loop"}),
    ("stats", {}),
]
FILTERED = ("search", {"query": "worktree subagents", "project": "worktrees"})


def chunk_rows(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return sorted(conn.execute("SELECT id, content_hash FROM chunks").fetchall())


def edge_rows(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return sorted(conn.execute("SELECT source_chunk_id, target_chunk_id, reference_type FROM edges").fetchall())


def ingest_process(*targets: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "causantic", "ingest", "--no-embed", *map(str, targets)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_servers_and_parallel_ingests_share_one_store_with_no_error_and_no_duplicate(
    tmp_path: Path, causantic_home: Path, corpus_dir: Path
) -> None:
    projects = claude_projects(tmp_path / "user", corpus_dir, CORPUS_FOLDERS)
    env = subprocess_env(CAUSANTIC_EMBEDDING_EAGER="false")
    reference = tmp_path / "reference"
    done = causantic("ingest", "--no-embed", str(projects), env=subprocess_env(CAUSANTIC_HOME=str(reference)))
    assert done.returncode == 0, done.stderr

    errors: list[str] = []
    with ExitStack() as stack:
        servers = [stack.enter_context(McpProcess(env=env)) for _ in range(3)]  # three start on an empty home
        workers = [
            ingest_process(projects, env=env),
            ingest_process(projects, env=env),
            *(ingest_process(projects / name, env=env) for name in CORPUS_FOLDERS),
        ]
        worktrees = projects / "-experiments-worktrees"
        session = worktrees / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
        for hook in ("pre-compact", "session-end"):
            payload = {
                "session_id": session.stem,
                "transcript_path": str(session),
                "cwd": str(tmp_path),
                "hook_event_name": "PreCompact" if hook == "pre-compact" else "SessionEnd",
            }
            hooked, _ = run_hook(hook, payload, env=env)
            assert hooked.returncode == 0 and hooked.stdout == ""
        rounds = 0
        while any(w.poll() is None for w in workers) or worker_pids(str(projects)):
            for server in servers:
                for tool, arguments in QUERIES:
                    result: Any = server.call(tool, arguments)
                    if result.is_error:
                        errors.append(f"{tool}: {result.content[0].text}")
                # A project filter names a project that may not be ingested yet: once the server
                # lists it, the filtered search must answer; before, it may only say it is unknown.
                listed = server.call("list-projects")
                if listed.is_error:
                    errors.append(f"list-projects: {listed.content[0].text}")
                    continue
                known = {line[2:].split(" (")[0] for line in text(listed).splitlines()[1:]}
                filtered: Any = server.call(*FILTERED)
                unknown_yet = "worktrees" not in known and "No project named 'worktrees'" in filtered.content[0].text
                if filtered.is_error and not unknown_yet:
                    errors.append(f"filtered search: {filtered.content[0].text}")
            rounds += 1
            assert rounds < 2000, "ingests did not finish"
        for server in servers:  # every server sees the finished store
            assert f"- Chunks: {len(chunk_rows(reference / 'memory.db')):,}\n" in text(server.call("stats"))
            finished: Any = server.call(*FILTERED)
            assert not finished.is_error and hit_headers(text(finished)), text(finished)

    outputs = [w.communicate() for w in workers]
    assert [w.returncode for w in workers] == [0] * len(workers), outputs
    assert not any("locked" in out + err for out, err in outputs)
    assert errors == []
    runs = read_status()
    assert runs["pre-compact"]["success"] and runs["session-end"]["success"], runs
    assert chunk_rows(causantic_home / "memory.db") == chunk_rows(reference / "memory.db")
    assert edge_rows(causantic_home / "memory.db") == edge_rows(reference / "memory.db")


@pytest.mark.slow
def test_hook_workers_embedding_at_once_write_each_vector_exactly_once(
    tmp_path: Path, causantic_home: Path, corpus_dir: Path
) -> None:
    """Concurrent writers to one LanceDB table duplicate rows and fail compactions; the hook workers
    take turns for the vector step, so none of that reaches the store."""
    projects = claude_projects(tmp_path / "user", corpus_dir, ("-experiments-ideas",))
    sessions = sorted(projects.glob("*/*.jsonl"))
    assert len(sessions) == 5  # two folders: the examples' and the corpus project's
    for number, session in enumerate(sessions):
        payload = {"session_id": session.stem, "transcript_path": str(session), "cwd": str(tmp_path)}
        hooked, _ = run_hook("session-end" if number % 2 else "pre-compact", payload)
        assert hooked.returncode == 0
    wait_for(lambda: not worker_pids(str(projects)), timeout=300, interval=0.5)

    from causantic.services import open_services

    with open_services() as services:
        ids = services.vectors.ids()
        assert services.vectors.count() == len(ids) == len(chunk_rows(causantic_home / "memory.db"))
    runs = read_status()
    assert all(runs[h]["success"] for h in ("pre-compact", "session-end")), runs
