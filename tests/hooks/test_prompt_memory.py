"""The user-prompt-submit hook, run as Claude Code runs it: a process with the hook JSON on stdin,
over a store ingested from real transcripts of the shared corpus."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from process_support import REAL_PROJECTS, run_hook, subprocess_env

from causantic.mcp.server import build_server
from causantic.runs import read_status

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "claude-code"
PROJECT = "/Users/dain/workspace/JSSoundRecorder"  # the cwd its sessions record (need not exist here)
PAST_SESSION = "7acd37a8-2745-4b58-a8a9-46164b22ad9e"  # the session that set up Vite
ON = {"CAUSANTIC_PROMPT_MEMORY_ENABLED": "true"}
ABOUT_VITE = "How did we set up the Vite dev server so it works cross-platform?"


@pytest.fixture
def sound_memory(causantic_home: Path) -> Path:
    """This test's home with two real projects of the corpus ingested (no vectors)."""
    folder = CORPUS / REAL_PROJECTS
    if not folder.is_dir():
        pytest.skip(f"the shared corpus is not at {CORPUS} (needs ../shared beside the repository)")
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:
        ingest_paths(
            services,
            [folder / "-Users-dain-workspace-JSSoundRecorder", folder / "-experiments-ideas"],
            embed=False,
            workers=1,
        )
    return causantic_home


def payload(
    prompt: str, session_id: str = "0b9b4a6e-2222-4aaa-8bbb-000000000001", cwd: str = PROJECT
) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "prompt_id": "b1d0c7e2-55a4-4f0e-8d2b-6a9e3c1f7d24",
        "transcript_path": f"/nowhere/{session_id}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def prompt_hook(body: dict[str, Any] | str, **env: str) -> subprocess.CompletedProcess[str]:
    done, _ = run_hook("user-prompt-submit", body, env=subprocess_env(**env))
    assert done.returncode == 0 and done.stderr == ""
    return done


def context_of(stdout: str) -> str:
    output = json.loads(stdout)
    assert list(output) == ["hookSpecificOutput"]
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert output["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    return str(output["hookSpecificOutput"]["additionalContext"])


def test_a_prompt_about_past_work_gets_the_moment_with_date_session_and_a_pointer(sound_memory: Path) -> None:
    context = context_of(prompt_hook(payload(ABOUT_VITE), **ON).stdout)
    assert "project JSSoundRecorder · session 7acd37a8" in context
    assert "2025-11-18" in context and "cross-platform" in context
    assert "recall" in context and "reconstruct" in context
    assert len(context) / 3.5 <= 300  # promptMemory.maxTokens
    run = read_status()["user-prompt-submit"]
    assert run["success"] and run["project"] == "JSSoundRecorder"
    [added] = [m for m in run["injected"] if m["sessionId"] == PAST_SESSION]
    assert added["relevance"] >= 0.95 and 0 < added["coverage"] <= 1


def test_an_unrelated_prompt_gets_nothing_printed(sound_memory: Path) -> None:
    for prompt in (
        "What temperature should I bake sourdough bread at for a crispy crust?",
        "zzqx nonexistent gibberish qqq",
        "yes",
        "   ",
    ):
        assert prompt_hook(payload(prompt), **ON).stdout == ""
    assert "injected" not in read_status()["user-prompt-submit"]


def test_nothing_comes_from_the_session_being_worked_in(sound_memory: Path) -> None:
    done = prompt_hook(payload(ABOUT_VITE, session_id=PAST_SESSION), **ON)
    assert PAST_SESSION[:8] not in done.stdout
    assert all(m["sessionId"] != PAST_SESSION for m in read_status()["user-prompt-submit"].get("injected", []))


def test_a_memory_is_added_once_per_session_and_again_in_a_new_session(sound_memory: Path) -> None:
    first = context_of(prompt_hook(payload(ABOUT_VITE), **ON).stdout)
    assert "session 7acd37a8" in first
    again = prompt_hook(payload(ABOUT_VITE), **ON).stdout
    assert again == "" or context_of(again) != first
    given = set(
        json.loads((sound_memory / "hooks" / "prompt-memory" / "0b9b4a6e-2222-4aaa-8bbb-000000000001.json").read_text())
    )
    assert not {m["chunkId"] for m in read_status()["user-prompt-submit"].get("injected", [])} - given
    record = sound_memory / "hooks" / "prompt-memory" / "0b9b4a6e-2222-4aaa-8bbb-000000000001.json"
    assert stat.S_IMODE(os.stat(record).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(record.parent).st_mode) == 0o700
    other = context_of(prompt_hook(payload(ABOUT_VITE, session_id="0b9b4a6e-2222-4aaa-8bbb-000000000002"), **ON).stdout)
    assert other == first


def test_old_session_records_are_pruned(sound_memory: Path) -> None:
    folder = sound_memory / "hooks" / "prompt-memory"
    folder.mkdir(parents=True)
    stale = folder / "old-session.json"
    stale.write_text("[]")
    os.utime(stale, (0, 0))
    prompt_hook(payload(ABOUT_VITE), **ON)
    assert not stale.exists()


def test_the_hook_is_off_by_default_and_prints_nothing(sound_memory: Path) -> None:
    assert prompt_hook(payload(ABOUT_VITE)).stdout == ""
    assert read_status()["user-prompt-submit"]["outcome"].startswith("off")


def test_a_broken_store_fails_open(causantic_home: Path) -> None:
    causantic_home.mkdir(parents=True)
    (causantic_home / "memory.db").write_bytes(b"this is not an SQLite database" * 100)
    assert prompt_hook(payload(ABOUT_VITE), **ON).stdout == ""
    run = read_status()["user-prompt-submit"]
    assert not run["success"] and run["outcome"] == "failed"


def test_hook_json_that_is_not_an_object_fails_open(sound_memory: Path) -> None:
    assert prompt_hook("not json at all", **ON).stdout == ""
    assert prompt_hook(json.dumps({"prompt": 42, "cwd": PROJECT}), **ON).stdout == ""


def test_the_hook_path_loads_neither_the_embedding_model_nor_the_vector_store(sound_memory: Path) -> None:
    probe = (
        "import json, sys\n"
        "from causantic.hooks.runner import run_hook\n"
        f"run_hook('user-prompt-submit', json.dumps({payload(ABOUT_VITE)!r}))\n"
        "heavy = [m for m in ('numpy', 'lancedb', 'pyarrow', 'onnxruntime', 'tokenizers', 'sklearn',"
        " 'causantic.embedding', 'causantic.retrieval.search') if m in sys.modules]\n"
        "print(json.dumps(heavy), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=subprocess_env(**ON)
    )
    assert "session 7acd37a8" in done.stdout  # it did inject
    assert json.loads(done.stderr) == []


def test_hook_status_shows_what_was_added_and_why(sound_memory: Path) -> None:
    prompt_hook(payload(ABOUT_VITE), **ON)

    async def ask() -> Any:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return await client.call_tool("hook-status", {})

    result = anyio.run(ask)
    text = result.content[0].text
    assert "user-prompt-submit" in text and "added: JSSoundRecorder session 7acd37a8" in text
    assert "relevance" in text and "prompt words covered" in text
    [added] = [
        m
        for m in result.structured_content["hooks"]["user-prompt-submit"]["injected"]
        if m["session_id"] == PAST_SESSION
    ]
    assert added["relevance"] >= 0.95
