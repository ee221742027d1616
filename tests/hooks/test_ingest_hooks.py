"""pre-compact and session-end: return at once, ingest in a detached worker, never collide."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hook_payloads import ingest_payload, relocated_examples
from process_support import causantic, run_hook, subprocess_env, wait_for, worker_pids
from transcript_files import write_session

from causantic.ingest import rules
from causantic.runs import read_status
from causantic.transcripts import _system_text


def chunk_ids(home: Path) -> list[str]:
    with sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True) as conn:
        return sorted(r[0] for r in conn.execute("SELECT id FROM chunks"))


def wait_for_workers(marker: Path) -> None:
    wait_for(lambda: not worker_pids(str(marker)), timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tmp_path / "src" / "acme-shop"


@pytest.fixture
def sessions(tmp_path: Path, project: Path) -> Path:
    """The example project's transcripts in a Claude Code projects folder, recorded in ``project``."""
    return relocated_examples(tmp_path / "user", project)


@pytest.mark.parametrize("hook", ["session-start", "user-prompt-submit", "pre-compact", "session-end"])
def test_a_hook_run_by_hand_with_nothing_on_stdin_says_so_and_leaves_its_status(
    causantic_home: Path, tmp_path: Path, hook: str
) -> None:
    """`echo '' | causantic hook session-end` was recorded as the hook failing ('no transcript_path on
    stdin'), a warning on the dashboard's overview until Claude Code next ran it; Claude Code always
    sends JSON, so an empty stdin is a person trying the command."""
    from causantic.runs import record

    record(hook, success=True, started=0.0, outcome="Claude Code's last run")
    before = read_status()[hook]
    for stdin in ("\n", ""):
        done, _ = run_hook(hook, stdin, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, "")
        said = done.stderr
        assert said.startswith(f"causantic hook {hook}: nothing on stdin, so nothing was done"), said
        assert "Claude Code runs this hook with its event as JSON on stdin" in said
        assert read_status()[hook] == before
    lines = (causantic_home / "logs" / "hooks.log").read_text().splitlines()
    assert len(lines) == 2 and all(f"] {hook}: nothing on stdin (run by hand)" in line for line in lines), lines


@pytest.mark.slow  # the worker embeds with the real model
@pytest.mark.parametrize(("hook", "event"), [("pre-compact", "PreCompact"), ("session-end", "SessionEnd")])
def test_the_hook_returns_at_once_and_a_detached_worker_ingests_the_session(
    causantic_home: Path,
    sessions: Path,
    project: Path,
    hook: str,
    event: str,
    record_property: pytest.RecordProperty,
) -> None:
    transcript = sessions / "7a378dd6-f9b6-52f1-ad8d-dd8aa785f035.jsonl"
    done, seconds = run_hook(hook, ingest_payload(transcript, event, cwd=str(project)))
    record_property(f"{hook}_return_s", round(seconds, 3))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert worker_pids(str(transcript)) or read_status()[hook]["outcome"].startswith("ingested")
    wait_for_workers(transcript)
    run = read_status()[hook]
    assert run["success"], run
    stored = chunk_ids(causantic_home)  # the project folder: this session with its sub-agent, and the others
    assert len(stored) >= 6 and run["details"]["chunks"] == len(stored)
    assert run["outcome"] == f"ingested {len(stored)} new chunks"
    assert run["details"]["vectors"] == len(stored)  # embedded too (embedding.eager is on by default)
    assert run["project"] == "acme-shop" and run["sessionId"] == transcript.stem


def test_a_grown_transcript_is_ingested_again_and_nothing_twice(
    causantic_home: Path, sessions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_EAGER", "false")
    transcript = sessions / "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec.jsonl"
    full = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(full[:8]), encoding="utf-8")  # mid-session, before compaction
    run_hook("pre-compact", ingest_payload(transcript, "PreCompact"))
    wait_for_workers(transcript)
    before = chunk_ids(causantic_home)
    transcript.write_text("".join(full), encoding="utf-8")
    run_hook("session-end", ingest_payload(transcript, "SessionEnd"))
    wait_for_workers(transcript)
    after = chunk_ids(causantic_home)
    assert set(before) < set(after) and len(after) == len(set(after))
    assert read_status()["session-end"]["details"]["chunks"] == len(after) - len(before)


def test_chunks_only_renumbered_are_counted_apart_from_changed_ones(
    causantic_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ingest rules 2 made `/compact keep …` a prompt: the turns after it are numbered one higher, their
    text unchanged. `causantic ingest` says "renumbered"; the hook said "0 changed chunks" of them, and
    "ingested 0 new and 0 changed chunks" of a session it had just read."""
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_EAGER", "false")
    compact = (
        "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
        "<command-args>keep the checkout work</command-args>"
    )
    turns = [
        ("why does checkout time out", "the payment call had no timeout"),
        (compact, "Compacted."),
        ("now add a retry to the payment call", "added one retry with backoff"),
        ("and a test for it", "test added"),
    ]
    transcript = write_session(
        tmp_path / ".claude" / "projects", "/work/shop", "5e0c1a55-0000-4000-8000-00000000c0de", turns
    )
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with monkeypatch.context() as before:  # an older release: /compact's words were a local command's settings
        before.setattr(rules, "VERSION", 1)
        before.setattr(_system_text, "_LOCAL_COMMANDS", _system_text._LOCAL_COMMANDS | {"compact"})
        with open_services() as services:
            ingest_paths(services, [transcript.parent], embed=False, workers=1)
    event = json.dumps(ingest_payload(transcript, "PreCompact", cwd="/work/shop"))
    worker = [sys.executable, "-m", "causantic.hooks", "ingest-worker", "pre-compact", event]
    subprocess.run(worker, env=subprocess_env(), check=True, timeout=120)  # the hook's detached half, to its end
    run = read_status()["pre-compact"]
    assert run["outcome"] == "ingested 1 new chunk, 2 renumbered (text unchanged, a new turn number)"
    assert (run["details"]["chunks"], run["details"]["updated"], run["details"]["renumbered"]) == (1, 0, 2)
    subprocess.run(worker, env=subprocess_env(), check=True, timeout=120)
    assert read_status()["pre-compact"]["outcome"] == "ingested 0 new chunks: 1 file unchanged since the last ingest"


def test_two_ingests_of_one_session_at_once_take_turns(
    causantic_home: Path, sessions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_EAGER", "false")
    transcript = sessions / "4005b823-fa0d-5890-9dc8-e686765e4267.jsonl"
    for hook, event in (
        ("pre-compact", "PreCompact"),
        ("session-end", "SessionEnd"),
        ("pre-compact", "PreCompact"),
    ):
        done, _ = run_hook(hook, ingest_payload(transcript, event))
        assert done.returncode == 0
    wait_for_workers(transcript)
    runs = read_status()
    assert runs["pre-compact"]["success"] and runs["session-end"]["success"], runs
    assert len(chunk_ids(causantic_home)) >= 6
    log = (
        (causantic_home / "logs" / "hooks.log").read_text() if (causantic_home / "logs" / "hooks.log").exists() else ""
    )
    assert "locked" not in log and "Traceback" not in log


def test_a_missing_transcript_before_compaction_is_recorded_as_skipped_and_exits_zero(
    causantic_home: Path, tmp_path: Path
) -> None:
    done, _ = run_hook("pre-compact", ingest_payload(tmp_path / ".claude/projects/p/gone.jsonl", "PreCompact"))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    run = read_status()["pre-compact"]
    assert run["success"] is False and "does not exist" in run["error"]
    assert not worker_pids(str(tmp_path))


def test_a_session_that_ended_before_its_first_message_is_nothing_to_ingest_not_a_failure(
    causantic_home: Path, tmp_path: Path
) -> None:
    """Claude Code writes no transcript for a session closed before any message; hook status said FAILED."""
    done, _ = run_hook("session-end", ingest_payload(tmp_path / ".claude/projects/p/never.jsonl", "SessionEnd"))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    run = read_status()["session-end"]
    assert run["success"] is True and "error" not in run
    assert run["outcome"] == "nothing to ingest: never.jsonl was never written (no message sent)"
    assert not worker_pids(str(tmp_path))
    status = causantic("hook", "status", env=subprocess_env(CAUSANTIC_HOME=str(causantic_home)))
    assert "FAILED" not in status.stdout and "never.jsonl was never written" in status.stdout
    run_hook("session-end", ingest_payload(tmp_path / "elsewhere" / "never.jsonl", "SessionEnd"))
    refused = read_status()["session-end"]  # not a Claude Code transcript at all: still refused
    assert refused["success"] is False and "not a .jsonl file under a Claude Code projects folder" in refused["error"]


def test_a_payload_without_transcript_path_is_skipped(causantic_home: Path) -> None:
    done, _ = run_hook("pre-compact", {"session_id": "x", "hook_event_name": "PreCompact"})
    assert done.returncode == 0 and done.stdout == ""
    assert "no transcript_path" in read_status()["pre-compact"]["error"]


@pytest.mark.parametrize("hook", ["session-start", "user-prompt-submit", "pre-compact", "session-end"])
def test_stdin_that_is_not_json_is_one_line_in_the_hook_log_and_exit_zero(
    causantic_home: Path, tmp_path: Path, hook: str
) -> None:
    """pre-compact and session-end logged two lines for it: "running with an empty event", then the
    empty event's missing transcript_path."""
    done, _ = run_hook(hook, "{not json", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    lines = (causantic_home / "logs" / "hooks.log").read_text().splitlines()
    assert len(lines) == 1 and f"] {hook}: " in lines[0] and "no JSON object" in lines[0], lines


@pytest.mark.slow  # the worker embeds with the real model, so LanceDB's folder is there too
def test_hook_files_are_owner_only(causantic_home: Path, sessions: Path) -> None:
    transcript = sessions / "4005b823-fa0d-5890-9dc8-e686765e4267.jsonl"
    run_hook("session-end", ingest_payload(transcript, "SessionEnd"))
    run_hook("session-start", {"session_id": "s", "cwd": str(sessions), "hook_event_name": "SessionStart"})
    wait_for_workers(transcript)
    for path in [causantic_home, *causantic_home.rglob("*")]:
        if path.suffix == ".lance" or "vectors" in path.parts:
            continue  # LanceDB's own files; its folder is owner-only
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


def test_a_transcript_path_outside_claude_code_folders_is_refused_and_not_recorded(
    causantic_home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("root:$6$salt$hash:19000:0:99999:7:::\n")
    link = tmp_path / ".claude" / "projects" / "p" / "link.jsonl"  # a symlink into the folder counts too
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    for path in ("/etc/shadow", str(outside), str(link)):
        payload = {**ingest_payload(Path(path), "SessionEnd"), "transcript_path": path, "session_id": "s1"}
        done, _ = run_hook("session-end", payload)
        assert done.returncode == 0 and done.stdout == ""
        run = read_status()["session-end"]
        assert run["success"] is False and "not a .jsonl file under a Claude Code projects folder" in run["error"]
        assert "shadow" not in json.dumps(read_status()) and "secret.txt" not in json.dumps(read_status())
    assert not (causantic_home / "memory.db").exists()


def test_a_huge_cwd_does_not_stop_the_session_being_ingested(causantic_home: Path, sessions: Path) -> None:
    transcript = sessions / "4005b823-fa0d-5890-9dc8-e686765e4267.jsonl"
    done, _ = run_hook("session-end", ingest_payload(transcript, "SessionEnd", cwd="/x" * 5_000_000))
    assert done.returncode == 0 and done.stderr == ""
    wait_for_workers(transcript)
    wait_for(lambda: read_status()["session-end"].get("outcome", "").startswith("ingested"), timeout=120)
    assert chunk_ids(causantic_home)
    log = causantic_home / "logs" / "hooks.log"
    assert not log.exists() or log.stat().st_size < 100_000


def test_hooks_leave_the_mode_of_an_existing_data_folder_alone(tmp_path: Path, sessions: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    env = subprocess_env(CAUSANTIC_HOME=str(shared))
    transcript = sessions / "4005b823-fa0d-5890-9dc8-e686765e4267.jsonl"
    run_hook("session-end", ingest_payload(transcript, "SessionEnd"), env=env)
    wait_for_workers(transcript)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777  # the sticky bit survives
    made = [p for p in shared.iterdir() if p.is_dir()]
    assert made and all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in made)  # what Causantic made is 0700
