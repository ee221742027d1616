"""The user-prompt-submit hook, run as Claude Code runs it: a process with the hook JSON on stdin,
over a store ingested from real transcripts of the shared corpus."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from process_support import REAL_PROJECTS, run_hook, subprocess_env
from transcript_files import write_session

from causantic.config import PromptMemoryConfig
from causantic.mcp.server import build_server
from causantic.runs import read_status

PROJECT = "/Users/dain/workspace/JSSoundRecorder"  # the cwd its sessions record (need not exist here)
PAST_SESSION = "7acd37a8-2745-4b58-a8a9-46164b22ad9e"  # the session that set up Vite
# The in-process path (no warm process left behind by each test); the warm one has its own tests.
ON = {"CAUSANTIC_PROMPT_MEMORY_ENABLED": "true", "CAUSANTIC_PROMPT_MEMORY_WARM_MINUTES": "0"}
ABOUT_VITE = "How did we set up the Vite dev server so it works cross-platform?"


@pytest.fixture
def sound_memory(causantic_home: Path, corpus_dir: Path) -> Path:
    """This test's home with two real projects of the corpus ingested (no vectors)."""
    folder = corpus_dir / REAL_PROJECTS
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
    # `causantic hook status` shows this; it read "… 1 session(s); lead infx the next session"
    why = r"added \d+ past moments?, \d+ characters: this project: found \d+ moments? of \d+ sessions?: "
    why += r"the best match covers \d+% of the prompt's words \(needs 50%\), "
    lead = r"(its session led the next by (\d+(\.\d\d)?x|over 100x)|no other session matched),"
    # it read "each moment reached relevance 6%" of moments at 20% and 15%: the bar, not their figure
    bar = r" and each moment cleared the 6% relevance bar"
    assert re.match(why + lead + bar, run["outcome"])
    added = [m for m in run["injected"] if m["sessionId"] == PAST_SESSION]
    assert 1 <= len(added) <= 2  # promptMemory.perSession
    for m in added:  # why: clears the bar, covers enough of the prompt, its session clearly led
        assert m["relevance"] >= PromptMemoryConfig().bar and 0.5 <= m["coverage"] <= 1
        assert m["margin"] is None or m["margin"] >= 1.4


@pytest.mark.parametrize("max_tokens", [50, 80, 120])
def test_what_is_added_fits_a_small_budget_and_every_moment_shown_has_its_excerpt(
    sound_memory: Path, max_tokens: int
) -> None:
    """At promptMemory.maxTokens 50 the hook added 114 tokens: bare headings, no excerpt, over budget."""
    done = prompt_hook(payload(ABOUT_VITE), **ON, CAUSANTIC_PROMPT_MEMORY_MAX_TOKENS=str(max_tokens))
    run = read_status()["user-prompt-submit"]
    if not done.stdout:
        assert run["outcome"].startswith(f"none added: promptMemory.maxTokens ({max_tokens}) has no room for any of")
        return
    context = context_of(done.stdout)
    assert len(context) / 3.5 <= max_tokens
    # hook status: the scopes' counts are what was found, the lead says how many of them fit
    if cut := re.search(r"(\d+) of the (\d+) moments found fit", run["outcome"]):
        assert int(cut[1]) == len(run["injected"])
        assert sum(int(n) for n in re.findall(r": found (\d+) moments?", run["outcome"])) == int(cut[2])
    lines = context.splitlines()[1:]
    headings = [i for i, line in enumerate(lines) if re.match(r"\d+\. ", line)]
    assert headings and len(headings) == len(run["injected"])
    assert all(lines[i + 1].startswith("   ") and len(lines[i + 1].strip()) >= 40 for i in headings)


def test_a_prompt_longer_than_any_other_hook_field_is_still_read(sound_memory: Path) -> None:
    long_prompt = ABOUT_VITE + "\n" + "-" * 12_000  # past the 4,096 characters other fields may hold
    assert "session 7acd37a8" in context_of(prompt_hook(payload(long_prompt), **ON).stdout)


def test_an_unrelated_prompt_gets_nothing_printed(sound_memory: Path) -> None:
    for prompt in (
        "What temperature should I bake sourdough bread at for a crispy crust?",
        "recipe for banana bread",
        "Wie wird das Wetter morgen in Berlin?",
        "zzqx nonexistent gibberish qqq",
        "yes",
        "   ",
    ):
        assert prompt_hook(payload(prompt), **ON).stdout == ""
    assert "injected" not in read_status()["user-prompt-submit"]


def test_another_projects_moment_says_it_is_another_projects(sound_memory: Path, tmp_path: Path) -> None:
    """Both read "project JSSoundRecorder": nothing told Claude that the moment was not of the project
    the session works in."""
    here = context_of(prompt_hook(payload(ABOUT_VITE), **ON).stdout)
    assert " · project JSSoundRecorder · session 7acd37a8" in here and "other project" not in here
    other_session = "0b9b4a6e-2222-4aaa-8bbb-000000000003"
    elsewhere = context_of(prompt_hook(payload(ABOUT_VITE, other_session, cwd=str(tmp_path)), **ON).stdout)
    assert " · other project JSSoundRecorder · session 7acd37a8" in elsewhere


WEBHOOK_PROMPT = "why do the checkout webhook retries time out"


def test_no_other_projects_moment_when_this_projects_sessions_match_the_prompt_as_well(
    causantic_home: Path, tmp_path: Path
) -> None:
    """Two of this project's sessions matched the prompt alike (no clear lead: nothing added), and another
    project's session, ranked below both, was added: its only rivals were other projects' sessions."""
    projects = tmp_path / "projects"
    for n, answer in enumerate(("The provider waits 10 s.", "We raised the retry budget.")):
        turns = [(f"the checkout webhook retries time out again ({n})", answer)]
        write_session(projects, "/work/shop", f"5e0c1a55-0000-4000-8000-00000000000{n}", turns, day=2 + n)
    write_session(
        projects,
        "/work/blog",
        "5e0c1a55-0000-4000-8000-0000000000b1",
        [("the blog's checkout page webhook retries time out", "The blog uses the shop's checkout webhook.")],
        day=5,
    )
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:
        ingest_paths(services, [projects], embed=False, workers=1)
    done = prompt_hook(payload(WEBHOOK_PROMPT, cwd="/work/shop"), **ON)
    outcome = read_status()["user-prompt-submit"]["outcome"]
    assert done.stdout == "", context_of(done.stdout)
    assert "other projects: none added: no session clearly led" in outcome and "this project's best" in outcome
    # From a third folder both projects are other projects, and the blog still ranks below the shop.
    assert prompt_hook(payload(WEBHOOK_PROMPT, cwd="/work/docs"), **ON).stdout == ""


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
    # hook status says why the same prompt got less: what was added before is left out
    assert "added earlier in this session left out" in read_status()["user-prompt-submit"]["outcome"]
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
    assert "user-prompt-submit" in text and "JSSoundRecorder, session 7acd37a8" in text
    assert "relevance" in text and "of the prompt's words" in text
    added = [m for m in read_status()["user-prompt-submit"]["injected"] if m["sessionId"] == PAST_SESSION]
    assert added and all(m["relevance"] >= PromptMemoryConfig().bar for m in added)
    assert all(f"{round(m['relevance'] * 100)}%" in text for m in added)


@pytest.fixture
def test_hook_status_says_plainly_whether_the_last_prompt_got_memory_and_why(sound_memory: Path) -> None:
    """It read "lead covers 32% … (needs 50%)" (another scope's best match) beside moments it did add."""
    from click.testing import CliRunner

    from causantic.cli.main import cli

    prompt_hook(payload(ABOUT_VITE), **ON)
    run = read_status()["user-prompt-submit"]
    shown = CliRunner().invoke(cli, ["hook", "status"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    added = len(run["injected"])
    assert f"UTC, project JSSoundRecorder: memory added: {added} past moment" in shown.output
    scopes = [line.strip() for line in lines if line.startswith(("  this project:", "  other projects:"))]
    assert scopes[0].startswith("this project: found")
    # the scopes' counts add up to the moments listed, one line each with its own figures
    counts = [int(m) for s in scopes for m in re.findall(r": found (\d+) moments?", s)]
    assert sum(counts) == added == len([line for line in lines if re.match(r"  \d+\. ", line)])
    best = re.search(r"the best match covers (\d+)% of the prompt's words \(needs 50%\)", scopes[0])
    assert best is not None
    # the best match's coverage is one of the moments listed when it was added, printed the same way
    first = next(line for line in lines if line.startswith("  1. "))
    assert f"covers {best.group(1)}% of the prompt's words" in first


def test_hook_status_says_for_each_recent_prompt_whether_memory_was_added(sound_memory: Path) -> None:
    from click.testing import CliRunner

    from causantic.cli.main import cli

    prompt_hook(payload(ABOUT_VITE), **ON)
    prompt_hook(payload("What is the weather like on the moon tonight, roughly?"), **ON)
    shown = CliRunner().invoke(cli, ["hook", "status"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    heads = [line for line in shown.output.splitlines() if " UTC, project JSSoundRecorder: " in line]
    assert [h.split(": ", 1)[1] for h in heads] == ["no memory added.", "memory added: 2 past moments."]
    assert "  this project: none added: " in shown.output


@pytest.fixture
def warm_memory(sound_memory: Path) -> Iterator[Path]:
    """``sound_memory`` with the warm process allowed (idle 30 s); the process the hook started is
    stopped at the end."""
    yield sound_memory
    pid_file = sound_memory / "run" / "prompt-server.pid"
    if pid_file.exists():
        os.kill(int(pid_file.read_text()), signal.SIGTERM)
        for _ in range(100):
            if not pid_file.exists():
                break
            time.sleep(0.05)
        assert not (sound_memory / "run" / "prompt-memory.sock").exists()  # it cleaned up on the way out


WARM = {"CAUSANTIC_PROMPT_MEMORY_ENABLED": "true", "CAUSANTIC_PROMPT_MEMORY_WARM_MINUTES": "0.5"}


def wait_for_socket(home: Path) -> Path:
    sock = home / "run" / "prompt-memory.sock"
    for _ in range(300):  # the detached process imports the hook's modules first
        if sock.exists() and (home / "run" / "prompt-server.pid").exists():
            return sock
        time.sleep(0.05)
    raise AssertionError("the warm process did not start")


def test_the_first_prompt_starts_a_warm_process_that_answers_the_next_ones_alike(warm_memory: Path) -> None:
    cold = prompt_hook(payload(ABOUT_VITE), **WARM)
    assert "[warm process]" not in read_status()["user-prompt-submit"]["outcome"]
    sock = wait_for_socket(warm_memory)
    assert stat.S_ISSOCK(os.stat(sock).st_mode) and stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700
    warm = prompt_hook(payload(ABOUT_VITE, session_id="0b9b4a6e-2222-4aaa-8bbb-000000000009"), **WARM)
    run = read_status()["user-prompt-submit"]
    assert run["outcome"].endswith("[warm process]") and run["sessionId"] == "0b9b4a6e-2222-4aaa-8bbb-000000000009"
    assert context_of(warm.stdout) == context_of(cold.stdout)  # the same answer, from the warm process
    # No memory twice in a session, from either path: the cold run's session asks again, warm.
    again = prompt_hook(payload(ABOUT_VITE), **WARM).stdout
    assert again == "" or context_of(again) != context_of(cold.stdout)


def test_the_warm_process_follows_each_prompts_own_configuration(warm_memory: Path) -> None:
    prompt_hook(payload(ABOUT_VITE), **WARM)
    wait_for_socket(warm_memory)
    off = prompt_hook(
        payload(ABOUT_VITE, session_id="0b9b4a6e-2222-4aaa-8bbb-00000000000a"),
        **{**WARM, "CAUSANTIC_PROMPT_MEMORY_ENABLED": "false"},
    )
    assert off.stdout == ""
    assert read_status()["user-prompt-submit"]["outcome"] == "off (promptMemory.enabled is false) [warm process]"


def test_a_dead_warm_process_costs_nothing_but_speed(warm_memory: Path) -> None:
    run = warm_memory / "run"
    run.mkdir(mode=0o700, parents=True, exist_ok=True)  # an ingest made it (its running status)
    (run / "prompt-memory.sock").write_text("not a socket")  # left behind, as after a crash
    context = context_of(prompt_hook(payload(ABOUT_VITE), **WARM).stdout)
    assert "session 7acd37a8" in context
    assert "[warm process]" not in read_status()["user-prompt-submit"]["outcome"]
    wait_for_socket(warm_memory)  # and a new warm process replaced the stale socket
    assert stat.S_ISSOCK(os.stat(run / "prompt-memory.sock").st_mode)


def test_after_an_upgrade_the_next_prompt_is_answered_by_the_new_code(warm_memory: Path, tmp_path: Path) -> None:
    """A warm process started before an upgrade must not answer with the old code: it steps aside and the
    hook answers in-process, with the code now installed."""
    import shutil

    import causantic

    installed = tmp_path / "site"
    shutil.copytree(
        Path(causantic.__file__).parent,
        installed / "causantic",
        ignore=shutil.ignore_patterns("__pycache__", "*.onnx"),
    )
    env = {**WARM, "PYTHONPATH": str(installed)}
    prompt_hook(payload(ABOUT_VITE), **env)
    wait_for_socket(warm_memory)
    module = installed / "causantic" / "hooks" / "prompt_memory.py"
    module.write_text(module.read_text().replace('HEADER = "Causantic memory:', 'HEADER = "Upgraded memory:'))
    answer = prompt_hook(payload(ABOUT_VITE, session_id="0b9b4a6e-2222-4aaa-8bbb-00000000000b"), **env)
    assert context_of(answer.stdout).startswith("Upgraded memory:")
    assert "[warm process]" not in read_status()["user-prompt-submit"]["outcome"]


def test_a_deleted_working_directory_still_gets_an_answer_and_exit_0(sound_memory: Path, tmp_path: Path) -> None:
    """Claude Code's session folder may be gone (a removed worktree): the hook still answers, no traceback."""
    gone = tmp_path / "removed-worktree"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && exec "$2" -m causantic.hooks user-prompt-submit'
    done = subprocess.run(
        ["sh", "-c", script, "sh", str(gone), sys.executable],
        input=json.dumps(payload(ABOUT_VITE)),
        capture_output=True,
        text=True,
        env=subprocess_env(**ON),
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert "session 7acd37a8" in context_of(done.stdout)
