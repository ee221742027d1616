"""`causantic init` and `causantic uninstall`, run for real on copies of realistic Claude Code files.

Each test gets its own HOME (and CAUSANTIC_HOME); the commands run as subprocesses, as a user
runs them. Init followed by uninstall must give back the original files.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from process_support import EXAMPLES, McpProcess, causantic, subprocess_env

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EVENTS = {
    "SessionStart": ("session-start", 10),
    "PreCompact": ("pre-compact", 30),
    "SessionEnd": ("session-end", 10),
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def place(home: Path, settings: str | None = "settings.json", claude: str | None = "claude.json") -> None:
    if settings:
        (home / ".claude").mkdir(exist_ok=True)
        shutil.copyfile(FIXTURES / settings, home / ".claude" / "settings.json")
    if claude:
        shutil.copyfile(FIXTURES / claude, home / ".claude.json")
        (home / ".claude.json").chmod(0o600)


def run(home: Path, *args: str, input: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return causantic(*args, input=input, env=subprocess_env(HOME=str(home), **env), cwd=home)


def snapshot(home: Path) -> dict[str, bytes]:
    files = [home / ".claude" / "settings.json", home / ".claude.json"]
    return {str(p): p.read_bytes() for p in files if p.exists()}


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [(g, h) for g in settings["hooks"].get(event, []) for h in g["hooks"] if "causantic" in h["command"]]


@pytest.mark.parametrize(
    ("settings", "claude"),
    [
        ("settings.json", "claude.json"),
        ("settings-4-space-indent.json", "claude.json"),
        ("settings-minified.json", "claude.json"),  # came back with spaces after every ',' and ':'
        ("settings.json", None),
        (None, "claude.json"),
        (None, None),
    ],
)
def test_init_then_uninstall_gives_back_the_original_files_byte_for_byte(
    home: Path, settings: str | None, claude: str | None
) -> None:
    place(home, settings, claude)
    before = snapshot(home)
    done = run(home, "init", "--yes", "--no-ingest", "--no-check")
    assert done.returncode == 0, done.stderr
    assert snapshot(home) != before
    done = run(home, "uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert snapshot(home) == before


def test_uninstall_with_nothing_registered_says_so_instead_of_printing_nothing(home: Path) -> None:
    """A second uninstall (or one before any init) printed nothing at all and exited 0."""
    place(home, "settings.json", "claude.json")
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    assert "Nothing to remove" not in run(home, "uninstall", "--yes").stdout
    again = run(home, "uninstall", "--yes")
    assert again.returncode == 0
    assert f"Nothing to remove: Causantic is not registered in {home / '.claude.json'}" in again.stdout
    assert "unchanged" not in again.stdout  # no table of files left as they were above the sentence


def test_uninstall_with_nothing_registered_says_so_without_asking(home: Path) -> None:
    """Without --yes it asked 'Remove the causantic MCP server … and its hooks …? [y/N]', only to say
    'Nothing to remove' after a yes; it answers at once now, and changes nothing."""
    place(home, "settings.json", "claude.json")
    before = snapshot(home)
    done = run(home, "uninstall", input="")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == f"Nothing to remove: Causantic is not registered in {home / '.claude.json'} or " + (
        f"{home / '.claude' / 'settings.json'}.\n"
    )
    assert snapshot(home) == before
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    asked = run(home, "uninstall", input="n\n")
    assert "Remove the causantic MCP server from" in asked.stdout
    # a no is a choice, said as forget says it: not click's 'Aborted!' and exit 1, read as a failure
    assert asked.stdout.endswith("Nothing was changed.\n") and asked.returncode == 0
    assert "Aborted!" not in asked.stderr


def test_init_keeps_a_minified_settings_file_minified(home: Path) -> None:
    """A settings.json written without spaces gained one after every ',' and ':' of it at init."""
    place(home, "settings-minified.json", "claude.json")
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    text = (home / ".claude" / "settings.json").read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    assert ours(json.loads(text), "SessionStart")


HAND_FORMATTED_LINES = (  # of settings-hand-formatted.json, each the user's own one-line layout
    '  "permissions": { "allow": ["Bash(make test)", "WebFetch(domain:docs.python.org)"] },\n',
    '{ "matcher": "manual", "hooks": [ { "type": "command", "command": "~/bin/save-plan.sh" } ] }',
    '  "outputStyle": "Explanatory"\n',
)


def test_hand_formatted_settings_keep_their_layout_and_come_back_byte_for_byte(home: Path) -> None:
    """Init spread every one-line object and array of the file over many lines, and uninstall left it so."""
    place(home, "settings-hand-formatted.json")
    path = home / ".claude" / "settings.json"
    original = path.read_text(encoding="utf-8")
    assert run(home, "init", "--yes", "--no-ingest", "--no-check", "--prompt-memory").returncode == 0
    installed = path.read_text(encoding="utf-8")
    assert all(line in installed for line in HAND_FORMATTED_LINES)
    assert len(ours(json.loads(installed), "PreCompact")) == 1
    assert run(home, "uninstall", "--yes").returncode == 0
    assert path.read_text(encoding="utf-8") == original


def test_uninstall_keeps_the_users_edits_since_init_in_their_layout(home: Path) -> None:
    place(home, "settings-hand-formatted.json")
    path = home / ".claude" / "settings.json"
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    edited = path.read_text(encoding="utf-8").replace(
        '"outputStyle": "Explanatory"', '"outputStyle": "Explanatory",\n  "env": { "DEBUG": "1" }'
    )
    path.write_text(edited, encoding="utf-8")
    assert run(home, "uninstall", "--yes").returncode == 0
    text = path.read_text(encoding="utf-8")
    assert all(line in text for line in HAND_FORMATTED_LINES[:2])
    assert '"outputStyle": "Explanatory",\n  "env": { "DEBUG": "1" }\n}' in text
    assert "causantic" not in text


def test_init_writes_the_documented_entries_and_keeps_everything_else(home: Path, causantic_home: Path) -> None:
    place(home)
    original_settings, original_claude = read(FIXTURES / "settings.json"), read(FIXTURES / "claude.json")
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    settings, claude = read(home / ".claude" / "settings.json"), read(home / ".claude.json")

    for event, (hook, timeout) in EVENTS.items():
        [(group, handler)] = ours(settings, event)
        assert handler["type"] == "command" and handler["timeout"] == timeout
        assert handler["command"].endswith(f" -m causantic.hooks {hook}")
        assert f"CAUSANTIC_HOME={causantic_home.resolve()}" in handler["command"]
        assert group.get("matcher", None) == ("" if event == "PreCompact" else None)
    entry = claude["mcpServers"]["causantic"]
    assert entry["type"] == "stdio" and entry["args"] == ["-m", "causantic.mcp"]
    assert Path(entry["command"]).is_absolute() and os.access(entry["command"], os.X_OK)
    assert entry["env"]["CAUSANTIC_HOME"] == str(causantic_home.resolve())

    for key, value in original_settings.items():  # nothing of the user's is lost or changed
        if key != "hooks":
            assert settings[key] == value
    for event, groups in original_settings["hooks"].items():
        assert settings["hooks"][event][: len(groups)] == groups
    assert {k: v for k, v in claude.items() if k != "mcpServers"} == {
        k: v for k, v in original_claude.items() if k != "mcpServers"
    }
    assert {k: v for k, v in claude["mcpServers"].items() if k != "causantic"} == original_claude["mcpServers"]
    assert stat.S_IMODE(os.stat(home / ".claude.json").st_mode) == 0o600
    backups = list((causantic_home / "backups").iterdir())
    assert len(backups) == 2 and all(stat.S_IMODE(os.stat(b).st_mode) == 0o600 for b in backups)


def test_running_init_again_changes_nothing_and_makes_no_new_backup(home: Path, causantic_home: Path) -> None:
    place(home)
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    after_first = snapshot(home)
    backups = sorted((causantic_home / "backups").iterdir())
    done = run(home, "init", "--yes", "--no-ingest", "--no-check")
    assert done.returncode == 0 and "unchanged" in done.stdout
    assert snapshot(home) == after_first
    assert sorted((causantic_home / "backups").iterdir()) == backups
    assert run(home, "uninstall", "--yes").returncode == 0  # the first run's record still applies
    assert snapshot(home)[str(home / ".claude.json")] == (FIXTURES / "claude.json").read_bytes()


def test_init_replaces_the_earlier_causantic_hooks_instead_of_running_both(home: Path) -> None:
    place(home, "settings-earlier-causantic.json", None)
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    settings = read(home / ".claude" / "settings.json")
    commands = [h["command"] for groups in settings["hooks"].values() for g in groups for h in g["hooks"]]
    assert not any(
        c.startswith("npx causantic hook session") or c == "npx causantic hook pre-compact" for c in commands
    )
    for event in EVENTS:
        assert len(ours(settings, event)) == (2 if event == "SessionEnd" else 1)  # + claudemd-generator, not ours
    assert "npx causantic hook claudemd-generator" in commands


def test_init_leaves_a_broken_settings_file_untouched_and_says_how_to_fix_it(home: Path) -> None:
    place(home, None)
    (home / ".claude").mkdir()
    broken = '{"permissions": {"allow": ["Bash(ls)",]}}\n'  # trailing comma: Claude Code rejects it too
    (home / ".claude" / "settings.json").write_text(broken)
    before = snapshot(home)
    done = run(home, "init", "--yes", "--no-ingest", "--no-check")
    assert done.returncode == 1
    assert "is not valid JSON" in done.stderr and "left untouched" in done.stderr
    assert snapshot(home) == before


def test_a_broken_claude_json_stops_init_before_any_file_changes(home: Path) -> None:
    place(home, "settings.json", None)
    (home / ".claude.json").write_text('{"numStartups": 3, "mcpServers": {')  # cut short by a crash
    before = snapshot(home)
    done = run(home, "init", "--yes", "--no-ingest", "--no-check")
    assert done.returncode == 1 and ".claude.json is not valid JSON" in done.stderr
    assert snapshot(home) == before


def test_init_honours_claude_config_dir(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    done = run(home, "init", "--yes", "--no-ingest", "--no-check", CLAUDE_CONFIG_DIR=str(config))
    assert done.returncode == 0, done.stderr
    assert "causantic" in read(config / ".claude.json")["mcpServers"]
    assert ours(read(config / "settings.json"), "SessionStart")
    assert not (home / ".claude.json").exists() and not (home / ".claude").exists()
    assert run(home, "uninstall", "--yes", CLAUDE_CONFIG_DIR=str(config)).returncode == 0
    assert not (config / ".claude.json").exists() and not (config / "settings.json").exists()


def test_uninstall_without_a_record_removes_only_causantic_entries(home: Path, causantic_home: Path) -> None:
    place(home)
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    (causantic_home / "integration.json").unlink()  # e.g. the data folder was deleted
    assert run(home, "uninstall", "--yes").returncode == 0
    assert read(home / ".claude" / "settings.json") == read(FIXTURES / "settings.json")
    assert read(home / ".claude.json") == read(FIXTURES / "claude.json")


def test_init_asks_first_and_a_no_changes_nothing(home: Path) -> None:
    place(home)
    before = snapshot(home)
    done = run(home, "init", "--no-ingest", "--no-check", input="n\n")
    assert "Go ahead?" in done.stdout
    # it printed click's 'Aborted!' and exited 1, as if init had failed
    assert done.stdout.endswith("Nothing was changed.\n") and done.returncode == 0
    assert done.stderr == ""
    assert snapshot(home) == before


def test_init_run_from_a_script_with_no_answer_says_to_add_yes(home: Path) -> None:
    """It stopped at a bare 'Aborted!' when stdin held no answer."""
    place(home)
    before = snapshot(home)
    done = run(home, "init", "--no-ingest", "--no-check", input="")
    assert done.returncode == 1 and "add --yes to go ahead without asking" in done.stderr
    assert "Aborted!" not in done.stderr and snapshot(home) == before


def test_the_registered_server_and_hook_run_the_way_claude_code_runs_them(home: Path, causantic_home: Path) -> None:
    place(home)
    assert run(home, "ingest", "--no-embed", str(EXAMPLES)).returncode == 0
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    settings, claude = read(home / ".claude" / "settings.json"), read(home / ".claude.json")

    [(_, handler)] = ours(settings, "SessionStart")
    payload = json.dumps({"session_id": "5d0f-health", "cwd": "/home/dev/acme-shop", "hook_event_name": "SessionStart"})
    clean_env = {"PATH": os.environ["PATH"], "HOME": str(home)}  # only what the command itself carries
    done = subprocess.run(
        ["sh", "-c", handler["command"]],
        input=payload,
        capture_output=True,
        text=True,
        env=clean_env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "acme-shop" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]

    entry = claude["mcpServers"]["causantic"]
    assert entry["command"] == os.path.abspath(sys.executable)  # this interpreter, venv symlink kept
    with McpProcess(args=entry["args"], env={**clean_env, **entry["env"]}) as server:
        result = server.call("list-projects")
        assert "acme-shop" in result.content[0].text


def test_full_init_ingests_the_existing_sessions_and_passes_its_health_check(home: Path) -> None:
    place(home)
    shutil.copytree(EXAMPLES, home / ".claude" / "projects")
    done = run(home, "init", "--yes", CAUSANTIC_EMBEDDING_EAGER="false")
    assert done.returncode == 0, done.stderr
    assert "Ingest summary" in done.stdout and "chunks added" in done.stdout
    checks = done.stdout.split("Health check:\n", 1)[1].splitlines()[:4]
    assert all(line.startswith("  ✓ ") for line in checks), done.stdout
    assert "✓ MCP server: answered tools/list with 9 tools" in done.stdout
    assert "✓ session-start hook: ran in" in done.stdout
    # Hook status names that trial run as init's health check, not as a session of Claude Code's
    # ("session causanti — no memory of this project").
    [start] = [r for r in run(home, "hook", "status", COLUMNS="200").stdout.splitlines() if "session-start" in r]
    assert "causantic init's health check: " in start, start


@pytest.mark.parametrize(
    "settings", ["settings.json", "settings-user-prompt-hooks.json", "settings-4-space-indent.json", None]
)
def test_init_with_prompt_memory_then_uninstall_gives_back_the_original_files_byte_for_byte(
    home: Path, settings: str | None
) -> None:
    place(home, settings)
    before = snapshot(home)
    done = run(home, "init", "--yes", "--no-ingest", "--no-check", "--prompt-memory")
    assert done.returncode == 0, done.stderr
    assert "UserPromptSubmit" in done.stdout
    assert len(ours(read(home / ".claude" / "settings.json"), "UserPromptSubmit")) == 1
    done = run(home, "uninstall", "--yes")
    assert done.returncode == 0, done.stderr
    assert snapshot(home) == before


def test_prompt_memory_is_registered_only_when_asked_and_keeps_the_users_prompt_hooks(home: Path) -> None:
    place(home, "settings-user-prompt-hooks.json")
    original = read(FIXTURES / "settings-user-prompt-hooks.json")["hooks"]["UserPromptSubmit"]
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    assert ours(read(home / ".claude" / "settings.json"), "UserPromptSubmit") == []

    assert run(home, "init", "--yes", "--no-ingest", "--no-check", "--prompt-memory").returncode == 0
    settings = read(home / ".claude" / "settings.json")
    [(group, handler)] = ours(settings, "UserPromptSubmit")
    assert "matcher" not in group and handler["type"] == "command" and handler["timeout"] == 10
    assert handler["command"].endswith(" -m causantic.hooks user-prompt-submit")
    assert "CAUSANTIC_PROMPT_MEMORY_ENABLED=true " in handler["command"]
    assert settings["hooks"]["UserPromptSubmit"][: len(original)] == original
    for event in EVENTS:  # the other hooks never carry the switch
        assert all("PROMPT_MEMORY" not in h["command"] for _, h in ours(settings, event))

    again = run(home, "init", "--yes", "--no-ingest", "--no-check")  # a plain init leaves it registered
    assert again.returncode == 0 and "unchanged" in again.stdout
    assert read(home / ".claude" / "settings.json") == settings


def test_the_registered_prompt_hook_runs_the_way_claude_code_runs_it(home: Path, causantic_home: Path) -> None:
    place(home)
    assert run(home, "init", "--yes", "--no-ingest", "--no-check", "--prompt-memory").returncode == 0
    [(_, handler)] = ours(read(home / ".claude" / "settings.json"), "UserPromptSubmit")
    hook_input = json.dumps(
        {
            "session_id": "s-1",
            "cwd": str(home),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "How did we set up the rate limiter?",
        }
    )
    done = subprocess.run(
        ["sh", "-c", handler["command"]],
        input=hook_input,
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(HOME=str(home)),
        cwd=home,
    )
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    run_record = json.loads((causantic_home / "hook-status.json").read_text())["user-prompt-submit"]
    assert run_record["success"] and run_record["outcome"] == "no memory yet (nothing ingested)"  # switched on


def test_purge_previews_the_memory_it_deletes_then_deletes_exactly_that(home: Path, causantic_home: Path) -> None:
    """--purge said neither how much memory it deleted nor what, and left cache/ (topic map) behind."""
    place(home, "settings.json", "claude.json")
    assert run(home, "ingest", "--no-embed", str(EXAMPLES)).returncode == 0
    assert run(home, "init", "--yes", "--no-ingest", "--no-check").returncode == 0
    (causantic_home / "cache").mkdir(exist_ok=True)
    (causantic_home / "cache" / "topic-map.json").write_text("{}")  # derived from memory: goes with it
    (causantic_home / "config.json").write_text("{}\n")
    (causantic_home / "http-token").write_text("secret\n")
    (causantic_home / "notes.txt").write_text("not ours to delete\n")
    stats = json.loads(run(home, "stats", "--json").stdout)

    asked = run(home, "uninstall", "--purge", input="n\n")
    assert asked.returncode == 0 and asked.stdout.endswith("Nothing was changed.\n")  # said no: nothing removed
    preview, question = asked.stdout.split("Remove the causantic MCP server")
    listed = {line.split()[0].rstrip("/") for line in preview.splitlines() if line.startswith("  ")}
    assert {"memory.db", "cache"} <= listed
    assert f"memory: {stats['chunk_count']} chunks of {stats['session_count']} sessions" in preview
    assert "It keeps in" in preview and "config.json" in preview and "http-token" in preview
    assert "notes.txt" in preview and "backups/" in preview
    assert "integration.json" not in preview  # init's record of what it added: uninstall removes it
    assert "then delete the memory listed above (" in question
    assert (causantic_home / "memory.db").exists() and (causantic_home / "cache" / "topic-map.json").exists()

    done = run(home, "uninstall", "--purge", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"Deleted the memory: {len(listed)} items" in done.stdout
    assert not any((causantic_home / name).exists() for name in listed)
    assert sorted(p.name for p in causantic_home.iterdir()) == ["backups", "config.json", "http-token", "notes.txt"]


def test_init_into_a_claude_folder_it_cannot_write_says_which_file_instead_of_a_traceback() -> None:
    """A ~/.claude left read-only (made by another user, or by `sudo claude`): init names the file and
    the cause, and changes nothing. Run as `nobody` when the tests run as root (root writes anywhere)."""
    import pwd
    import tempfile

    user = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
    top = Path(tempfile.mkdtemp(prefix="causantic-readonly-"))
    try:
        top.chmod(0o755)
        home, data = top / "home", top / "data"
        (home / ".claude").mkdir(parents=True)
        data.mkdir()
        if user is not None:
            for path in (home, home / ".claude", data):
                os.chown(path, user.pw_uid, user.pw_gid)
        (home / ".claude").chmod(0o555)
        env = subprocess_env(HOME=str(home), CAUSANTIC_HOME=str(data))
        as_user: dict[str, Any] = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}
        probe = subprocess.run([sys.executable, "-c", "import causantic"], env=env, cwd=top, check=False, **as_user)
        if probe.returncode != 0:
            pytest.skip("`nobody` cannot run this checkout's Python")
        done = subprocess.run(
            [sys.executable, "-m", "causantic", "init", "--yes", "--no-ingest", "--no-check"],
            capture_output=True,
            text=True,
            env=env,
            cwd=top,
            timeout=120,
            check=False,
            **as_user,
        )
        assert done.returncode == 1 and "Traceback" not in done.stderr
        settings = home / ".claude" / "settings.json"
        assert f"Cannot write {settings}: Permission denied." in done.stderr
        assert "run `causantic init` again" in done.stderr
        assert list((home / ".claude").iterdir()) == [] and not (home / ".claude.json").exists()
    finally:
        (top / "home" / ".claude").chmod(0o755)
        shutil.rmtree(top)
