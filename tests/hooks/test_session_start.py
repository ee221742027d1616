"""The session-start hook, run as Claude Code runs it: a process with the hook JSON on stdin."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hook_payloads import LAST_SESSION, ingest_payload, relocated_examples, start_payload
from process_support import EXAMPLES, run_hook, subprocess_env, wait_for, worker_pids

from causantic.files import file_lock
from causantic.hooks.ingest import ingest_lock
from causantic.runs import read_status


def context_of(stdout: str) -> str:
    output = json.loads(stdout)
    assert list(output) == ["hookSpecificOutput"]
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    return str(output["hookSpecificOutput"]["additionalContext"])


def test_a_known_project_gets_a_briefing_of_where_work_stopped_and_recent_sessions(acme_memory: Path) -> None:
    done, _ = run_hook("session-start", start_payload("0b9b4a6e-1111-4aaa-8bbb-000000000001"))
    assert done.returncode == 0 and done.stderr == ""
    context = context_of(done.stdout)
    assert "acme-shop" in context
    assert "Where work stopped (session 4005b823" in context
    assert "make sure the limiter reads it from the environment" in context  # the last request
    assert "Safari" in context and "test_invoice_due_date" in context  # earlier sessions' topics
    assert context.count("4005b823") == 2  # in "where work stopped" and once among recent sessions
    assert len(context) / 3.5 <= 500  # tokens.claudeMdBudget
    run = read_status()["session-start"]
    assert run["success"] and run["project"] == "acme-shop"


def test_the_briefing_is_identical_on_resume_and_compact_of_the_same_session(
    acme_memory: Path, corpus_dir: Path
) -> None:
    session = "0b9b4a6e-1111-4aaa-8bbb-000000000002"
    first, _ = run_hook("session-start", start_payload(session))
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:  # memory changes in between (a pre-compact ingest, say)
        ingest_paths(
            services,
            [corpus_dir / "daaain__claude-code-log/test/test_data/real_projects/-experiments-ideas"],
            embed=False,
            workers=1,
        )
    resumed, _ = run_hook("session-start", start_payload(session, source="resume"))
    compacted, _ = run_hook("session-start", start_payload(session, source="compact"))
    assert first.stdout and first.stdout == resumed.stdout == compacted.stdout


def test_the_briefing_leaves_out_the_session_being_started(acme_memory: Path) -> None:
    done, _ = run_hook("session-start", start_payload(LAST_SESSION, source="resume"))
    context = context_of(done.stdout)
    assert "4005b823" not in context
    assert "Where work stopped (session 7a378dd6" in context


def test_after_a_compaction_the_agent_is_told_where_its_sessions_earlier_turns_are(acme_memory: Path) -> None:
    """The summary a compaction keeps loses the session's detail; the pre-compact hook has just put it
    in memory, and the briefing (earlier sessions only) never said so."""
    compacted, _ = run_hook("session-start", start_payload(LAST_SESSION, source="compact"))
    context = context_of(compacted.stdout)
    assert "Where work stopped (session 7a378dd6" in context  # the briefing, as on startup
    note = context.split("\n\n")[-1]
    assert note.startswith("This session before the compaction is in memory: ") and "chunk" in note
    assert "reconstruct tool (project 'acme-shop', session '4005b823')" in note
    assert "before the compaction" in read_status()["session-start"]["outcome"]
    started, _ = run_hook("session-start", start_payload(LAST_SESSION, source="startup"))
    assert "before the compaction" not in context_of(started.stdout)


def test_a_folder_inside_the_project_gets_the_projects_briefing(causantic_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "work" / "acme-shop"
    sessions = relocated_examples(tmp_path / "user", project)
    (project / "src" / "api").mkdir(parents=True)
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:
        ingest_paths(services, [sessions], embed=False, workers=1)
    done, _ = run_hook(
        "session-start",
        start_payload("0b9b4a6e-1111-4aaa-8bbb-000000000003", cwd=str(project / "src" / "api")),
    )
    context = context_of(done.stdout)
    assert "acme-shop" in context and "Where work stopped (session 4005b823" in context


def test_after_clear_the_briefing_says_where_the_cleared_session_stopped(
    causantic_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/clear ends a session (its session-end hook starts the ingest in the background) and starts a new
    one at once: the briefing, built before that ingest landed, said where the session *before* it
    stopped, and was kept for the whole new session."""
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_EAGER", "false")
    project = tmp_path / "work" / "acme-shop"
    folder = relocated_examples(tmp_path / "user", project)
    cleared = folder / f"{LAST_SESSION}.jsonl"
    text = cleared.read_text(encoding="utf-8")
    cleared.unlink()  # memory holds the project's earlier sessions, not yet the one being cleared
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:
        ingest_paths(services, [folder], embed=False, workers=1)
    cleared.write_text(text, encoding="utf-8")
    new_session = "0b9b4a6e-1111-4aaa-8bbb-00000000000c"
    payload = {**start_payload(new_session, cwd=str(project), source="clear")}
    payload["transcript_path"] = str(folder / f"{new_session}.jsonl")  # Claude Code writes it later
    with file_lock(ingest_lock(folder), timeout=0):  # the worker's ingest lands 3 s after the start
        ended, _ = run_hook(
            "session-end", {**ingest_payload(cleared, "SessionEnd", cwd=str(project)), "reason": "clear"}
        )
        assert ended.returncode == 0
        start = subprocess.Popen(
            [sys.executable, "-m", "causantic.hooks", "session-start"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        assert start.stdin is not None
        start.stdin.write(json.dumps(payload))
        start.stdin.close()
        time.sleep(3)
    with start:  # closes its pipes and waits for it
        assert start.stdout is not None
        started = start.stdout.read()
    assert start.returncode == 0
    wait_for(lambda: not worker_pids(str(cleared)), timeout=120)
    assert f"Where work stopped (session {LAST_SESSION[:8]}" in context_of(started)
    assert "waiting for the cleared session's ingest" in read_status()["session-start"]["outcome"]
    # Once the cleared session is in memory, the next clear has nothing to wait for.
    again, _ = run_hook("session-start", {**payload, "session_id": "0b9b4a6e-1111-4aaa-8bbb-00000000000d"})
    assert f"Where work stopped (session {LAST_SESSION[:8]}" in context_of(again.stdout)
    assert read_status()["session-start"]["outcome"] == f"briefing of {len(context_of(again.stdout)):,} characters"


def test_a_project_memory_has_never_seen_gets_no_output_at_all(acme_memory: Path, tmp_path: Path) -> None:
    done, _ = run_hook("session-start", start_payload("0b9b4a6e-1111-4aaa-8bbb-000000000004", cwd=str(tmp_path)))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert read_status()["session-start"]["outcome"] == "no memory of this project"


def test_before_any_ingest_there_is_no_output_and_no_database_is_created(causantic_home: Path) -> None:
    done, _ = run_hook("session-start", start_payload("0b9b4a6e-1111-4aaa-8bbb-000000000005"))
    assert done.returncode == 0 and done.stdout == ""
    assert not (causantic_home / "memory.db").exists()


def test_a_smaller_budget_gives_a_shorter_briefing(acme_memory: Path) -> None:
    env = subprocess_env(CAUSANTIC_TOKENS_CLAUDE_MD_BUDGET="120")
    done, _ = run_hook("session-start", start_payload("0b9b4a6e-1111-4aaa-8bbb-000000000006"), env=env)
    context = context_of(done.stdout)
    assert len(context) / 3.5 <= 120
    assert "Where work stopped" in context  # the most useful part is kept first


@pytest.mark.parametrize("stdin", ["not json at all", "[1, 2, 3]", '{"session_id": 42, "cwd": null}', "{"])
def test_malformed_stdin_fails_open(acme_memory: Path, tmp_path: Path, stdin: str) -> None:
    done, _ = run_hook("session-start", stdin, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    # Empty stdin is a person trying the hook by hand, and is told so (test_ingest_hooks.py).


def test_a_damaged_store_fails_open_and_the_failure_is_logged_and_recorded(causantic_home: Path) -> None:
    causantic_home.mkdir(parents=True)
    (causantic_home / "memory.db").write_bytes(b"this is not a SQLite database" * 100)
    done, _ = run_hook("session-start", start_payload("0b9b4a6e-1111-4aaa-8bbb-000000000007"))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    run = read_status()["session-start"]
    assert run["success"] is False
    assert "StoreError" in run["error"] or "DatabaseError" in run["error"]
    assert "Traceback" in (causantic_home / "logs" / "hooks.log").read_text()


def test_an_unwritable_home_fails_open(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    env = subprocess_env(CAUSANTIC_HOME=str(blocker / "home"))
    for hook in ("session-start", "pre-compact", "session-end"):
        done, _ = run_hook(hook, start_payload("0b9b4a6e-1111-4aaa-8bbb-000000000008"), env=env)
        assert (hook, done.returncode, done.stdout, done.stderr) == (hook, 0, "", "")


def test_an_unknown_hook_name_prints_usage_and_exits_zero() -> None:
    done, _ = run_hook("post-tool-use", "{}")  # a Claude Code event Causantic has no hook for
    assert done.returncode == 0 and done.stdout == "" and "usage:" in done.stderr


def test_the_hook_loads_neither_the_vector_index_nor_the_embedding_runtime(acme_memory: Path) -> None:
    code = (
        "import json, sys; from causantic.hooks.runner import run_hook; "
        f"run_hook('session-start', json.dumps({start_payload('0b9b4a6e-1111-4aaa-8bbb-000000000009')!r})); "
        "print([m for m in ('faiss', 'lancedb', 'numpy', 'onnxruntime', 'tokenizers', 'sklearn', 'mcp')"
        " if m in sys.modules], file=sys.stderr)"
    )
    import subprocess

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env())
    assert context_of(done.stdout)
    assert done.stderr.strip() == "[]"


def test_session_start_latency_is_reported(acme_memory: Path, record_property: pytest.RecordProperty) -> None:
    """Timing is reported, not asserted (machines differ); benchmarks/hooks.py measures it properly."""
    times = []
    for number in range(5):
        done, seconds = run_hook("session-start", start_payload(f"0b9b4a6e-1111-4aaa-8bbb-00000000010{number}"))
        assert done.returncode == 0 and done.stdout
        times.append(seconds)
    record_property("session_start_median_s", round(statistics.median(times), 3))
    print(
        f"session-start: median {statistics.median(times) * 1000:.0f} ms over {len(times)} runs "
        f"(example store of {EXAMPLES.name})"
    )


REAL_PROJECTS = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "corpus"
    / "claude-code"
    / ("daaain__claude-code-log/test/test_data/real_projects")
)


@pytest.fixture
def real_memory(causantic_home: Path) -> Path:
    """Three real projects as Claude Code left them: warm-up agent files, IDE wrappers, long sessions."""
    if not REAL_PROJECTS.is_dir():
        pytest.skip(f"the shared corpus is absent ({REAL_PROJECTS})")
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    folders = (
        "-Users-dain-workspace-JSSoundRecorder",
        "-Users-dain-workspace-coderabbit-review-helper",
        "-Users-dain-workspace-claude-code-log-sample",
        "-Users-dain-workspace-danieldemmel-me-next",
        "-src-deep-manifest",
    )
    with open_services() as services:
        ingest_paths(services, [REAL_PROJECTS / f for f in folders], embed=False, workers=1)
    return causantic_home


def _briefing(cwd: str) -> str:
    done, _ = run_hook("session-start", start_payload("0b9b4a6e-1111-4aaa-8bbb-00000000000a", cwd=cwd))
    assert done.returncode == 0 and done.stderr == ""
    return context_of(done.stdout)


def test_a_real_briefing_names_real_work_not_warm_up_greetings_or_ide_wrappers(real_memory: Path) -> None:
    context = _briefing("/Users/dain/workspace/JSSoundRecorder")
    assert "ready to help" not in context and "Hello!" not in context and "<ide_" not in context
    assert "1 session stored" in context  # two sessions existed only for their warm-up replies
    assert "- Last request: Let's also Migrate to AudioWorklet" in context
    assert "7acd37a8 · Claude Code · 36 chunks: OK, so this was just so you know what there is now" in context
    assert len(context) / 3.5 <= 500


def test_recent_sessions_are_the_users_sessions_with_their_first_prompts(real_memory: Path) -> None:
    context = _briefing("/Users/dain/workspace/coderabbit-review-helper")
    recent = context.split("Recent sessions (times in UTC):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(recent) == 2
    assert recent[0].endswith(
        "How can I make this possible to install as a library with `uv` so I can run from any directory?"
    )
    assert "Where work stopped (session cb2e607c" in context
    assert "- Last request: Let's update readme with the working reinstall" in context


def test_where_work_stopped_reaches_back_to_the_last_request_of_a_long_final_turn(real_memory: Path) -> None:
    context = _briefing("/Users/dain/workspace/claude-code-log")
    stopped = context.split("Where work stopped", 1)[1].split("\n\n", 1)[0]
    assert "- Last request: We've just done a big refactoring (Phase 2" in stopped
    assert "Only one test is still failing" not in context  # fixed later in that session
    assert '{"todos"' not in context
    assert len(context) / 3.5 <= 500


def test_where_work_stopped_quotes_the_last_request_that_names_work_not_the_thank_you_after_it(
    real_memory: Path,
) -> None:
    """deep-manifest's session ends with "Excellent work, thank you!": quoted as the last request, it told
    the next session nothing of the work (archive errors) that request had been about."""
    stopped = _briefing("/src/deep-manifest").split("Where work stopped", 1)[1].split("\n\n", 1)[0]
    assert "thank you" not in stopped
    assert "- Last request: OK, so first commit the changes related to the previous task, adding support for tar" in (
        stopped
    )
    assert "- Last reply: You're welcome! Here's a summary of what we accomplished" in stopped  # the session's end


def test_last_steps_name_the_projects_files_relative_to_it(real_memory: Path) -> None:
    """A step is cut at 60 characters: written with the absolute path, the file's name was cut off."""
    context = _briefing("/Users/dain/workspace/danieldemmel.me-next")
    steps = next(line for line in context.splitlines() if line.startswith("- Last steps: "))
    assert steps.endswith("; Write .markdownlintrc.json")
    assert "/Users/dain/workspace/danieldemmel.me-next/" not in steps


def test_a_long_run_on_one_prompt_says_what_it_was_asked_and_names_the_project_folder_as_dot(
    causantic_home: Path, corpus_dir: Path
) -> None:
    """marot/spotter's agent worked through an issue alone for 138 chunks: no request in the session's
    last pages, so "where work stopped" said what was done but not what for. A step on the project's
    folder itself read "find /home/USER/projects/spotter-worktrees/spotter-0rt -nam…", cut there."""
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    folder = corpus_dir / "marot__spotter/test/fixtures/transcripts"
    session = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
    explorer = "6c2214d7-b87e-4432-8e41-22ba294ea584"  # a sub-agent's session in another worktree
    with open_services() as services:
        paths = [folder / f"{session}.jsonl", folder / session, folder / explorer]
        ingest_paths(services, paths, embed=False, workers=1)
    stopped = _briefing("/home/USER/projects/spotter-worktrees/spotter-a0y").split("\n\n")[1]
    assert "- Opening request: Work on bead spotter-a0y. Run bd show spotter-a0y" in stopped
    assert "Last request" not in stopped
    steps = _briefing("/home/USER/projects/spotter-worktrees/spotter-0rt").split("- Last steps: ", 1)[1]
    assert '; Bash find . -name "*.heex" | wc -l;' in steps.splitlines()[0]


def test_recent_sessions_fit_five_sessions_in_the_budget(real_memory: Path) -> None:
    """Titles of 160 characters left room for 4 of claude-code-log's sessions in the 500-token budget."""
    context = _briefing("/Users/dain/workspace/claude-code-log")
    recent = context.split("Recent sessions (times in UTC):\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(recent) == 5 and "12 sessions stored" in context
    assert len(context) / 3.5 <= 500


def test_the_request_where_work_stopped_is_not_quoted_again_among_recent_sessions(real_memory: Path) -> None:
    """A one-request session's title is its last request: the same 100 characters twice, every session."""
    context = _briefing("/Users/dain/workspace/claude-code-log")
    recent = context.split("Recent sessions (times in UTC):\n", 1)[1].splitlines()
    assert recent[0] == "- 2025-07-20 18:30 · 12a546d1 · Claude Code · 23 chunks: (where work stopped, above)"
    assert context.count("We've just done a big refactoring") == 1
    other = _briefing("/Users/dain/workspace/coderabbit-review-helper")  # its last request is not its first
    assert "(where work stopped, above)" not in other


def test_the_same_session_id_from_another_folder_does_not_get_this_projects_briefing(
    acme_memory: Path, tmp_path: Path
) -> None:
    session = "0b9b4a6e-1111-4aaa-8bbb-000000000009"
    here, _ = run_hook("session-start", start_payload(session))
    assert "acme-shop" in context_of(here.stdout)
    elsewhere, _ = run_hook("session-start", start_payload(session, cwd=str(tmp_path), source="resume"))
    assert elsewhere.returncode == 0 and elsewhere.stdout == ""  # a project memory has never seen


# A real Claude Code 2.1.100 session: a plugin's SessionStart context at startup, then two resumes.
RESUMED = "computermode__test-repo/6d/206c888baf/0/full.jsonl"
COMPACT_BOUNDARY = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}


def saved_conversation(corpus_dir: Path, folder: Path, briefing_output: str | None) -> Path:
    """That session's transcript under ``folder``; with ``briefing_output`` (the startup hook's stdout)
    in place of the plugin's context, as Claude Code saves it (hook_success and hook_additional_context)."""
    lines = []
    for line in (corpus_dir / RESUMED).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        attachment = record.get("attachment") or {}
        if briefing_output and attachment.get("hookEvent") == "SessionStart":
            if attachment["type"] == "hook_additional_context":
                attachment["content"] = [context_of(briefing_output)]
            elif "additionalContext" in attachment.get("stdout", ""):
                attachment["stdout"] = briefing_output
        lines.append(json.dumps(record, separators=(",", ":")))
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{json.loads(lines[0])['sessionId']}.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return transcript


@pytest.mark.parametrize("source", ["resume", "fork"])
def test_a_resumed_conversation_that_holds_the_briefing_does_not_get_it_twice(
    acme_memory: Path, corpus_dir: Path, tmp_path: Path, source: str
) -> None:
    startup, _ = run_hook("session-start", start_payload("7bfa825d-a369-4307-9649-be8fd41c9afa"))
    transcript = saved_conversation(corpus_dir, tmp_path / "projects" / "-home-dev-acme-shop", startup.stdout)
    payload = {**start_payload(transcript.stem, source=source), "transcript_path": str(transcript)}
    again, _ = run_hook("session-start", payload)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    run = read_status()["session-start"]
    assert run["success"] and run["outcome"] == f"none on {source}: the saved conversation already holds a briefing"


def test_a_resumed_conversation_gets_the_briefing_when_its_copy_went_at_compaction_or_was_never_saved(
    acme_memory: Path, corpus_dir: Path, tmp_path: Path
) -> None:
    startup, _ = run_hook("session-start", start_payload("7bfa825d-a369-4307-9649-be8fd41c9afa"))
    compacted = saved_conversation(corpus_dir, tmp_path / "a", startup.stdout)
    with compacted.open("a", encoding="utf-8") as file:
        file.write(json.dumps(COMPACT_BOUNDARY, separators=(",", ":")) + "\n")
    only_a_plugins = saved_conversation(corpus_dir, tmp_path / "b", None)  # another plugin's context only
    for transcript in (compacted, only_a_plugins, tmp_path / "missing.jsonl", tmp_path):
        payload = {**start_payload("7bfa825d-a369-4307-9649-be8fd41c9afa", source="resume")}
        payload["transcript_path"] = str(transcript)
        resumed, _ = run_hook("session-start", payload)
        assert resumed.stdout == startup.stdout, transcript


def test_a_folder_named_in_accented_letters_gets_its_briefing_whatever_the_locales_encoding(tmp_path: Path) -> None:
    """Claude Code sends the event as UTF-8 JSON; the hook read it in the locale's encoding, and under a
    non-UTF-8 one (LANG=C with Python's UTF-8 mode off, or a Windows code page) the folder café-shop
    became caf\\udcc3\\udca9-shop, a project memory did not know: no briefing at all."""
    from transcript_files import write_session

    from causantic.facade import Memory

    cwd = "/home/dev/café-shop"
    write_session(
        tmp_path / "t", cwd, "0cafe000-0000-4000-8000-000000000001", [("Why is the crème total off?", "Floats.")]
    )
    with Memory() as memory:
        assert memory.ingest([tmp_path / "t"], embed=False).errors == []
    event = start_payload("0cafe000-0000-4000-8000-000000000002", cwd=cwd)
    done = subprocess.run(
        [sys.executable, "-m", "causantic.hooks", "session-start"],
        input=json.dumps(event, ensure_ascii=False).encode("utf-8"),
        capture_output=True,
        env=subprocess_env(LC_ALL="C", LANG="C", PYTHONUTF8="0"),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Memory of earlier coding-agent sessions in this project (café-shop" in context_of(done.stdout.decode())
