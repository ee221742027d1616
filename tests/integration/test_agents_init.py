"""`causantic init` / `uninstall` with Codex CLI, Gemini CLI, Copilot CLI, Cursor and Factory Droid
installed, on realistic files.

Each test gets its own HOME with the agents' folders (how init tells the agents are installed)
holding copies of real-looking configurations: the user's own MCP servers, comments, odd spacing,
a minified file. The commands run as subprocesses, as a user runs them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from process_support import causantic, subprocess_env

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / ".codex").mkdir(parents=True)
    (path / ".gemini").mkdir()
    return path


def place(home: Path, codex: str | None, gemini: str | None) -> tuple[Path, Path]:
    toml, settings = home / ".codex" / "config.toml", home / ".gemini" / "settings.json"
    if codex:
        shutil.copyfile(FIXTURES / codex, toml)
    if gemini:
        shutil.copyfile(FIXTURES / gemini, settings)
    return toml, settings


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = causantic(*args, env=subprocess_env(HOME=str(home), **env), cwd=home)
    assert done.returncode == 0, done.stderr
    return done


def snapshot(*paths: Path) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.exists() else None for p in paths}


@pytest.mark.parametrize(
    ("codex", "gemini"),
    [
        ("codex-config.toml", "gemini-settings.json"),
        ("codex-config-no-servers.toml", "gemini-settings-no-servers.json"),
        (None, None),
    ],
)
def test_init_registers_with_both_agents_and_uninstall_gives_the_files_back_byte_for_byte(
    home: Path, codex: str | None, gemini: str | None
) -> None:
    toml, settings = place(home, codex, gemini)
    before = snapshot(toml, settings)

    run(home, "init", "--yes", "--no-ingest", "--no-check")
    server = tomllib.loads(toml.read_text())["mcp_servers"]["causantic"]
    assert server["args"] == ["-m", "causantic.mcp"] and Path(server["command"]).name.startswith("python")
    assert json.loads(settings.read_text())["mcpServers"]["causantic"]["args"] == ["-m", "causantic.mcp"]
    if codex == "codex-config.toml":  # the user's servers, comments and spacing are all still there
        text = toml.read_text()
        assert "# MCP servers I use every day" in text and 'args    = [ "@playwright/mcp@latest" ]' in text
        assert set(tomllib.loads(text)["mcp_servers"]) == {"github", "playwright", "causantic"}
        assert json.loads(settings.read_text())["mcpServers"]["github"]["trust"] is False

    run(home, "uninstall", "--yes")
    assert snapshot(toml, settings) == before


def test_init_twice_changes_nothing_the_second_time_and_one_uninstall_undoes_both(home: Path) -> None:
    toml, settings = place(home, "codex-config.toml", "gemini-settings.json")
    before = snapshot(toml, settings)
    run(home, "init", "--yes", "--no-ingest", "--no-check")
    once = snapshot(toml, settings)
    second = run(home, "init", "--yes", "--no-ingest", "--no-check")
    assert snapshot(toml, settings) == once
    assert f"unchanged  {toml}" in second.stdout and f"unchanged  {settings}" in second.stdout
    run(home, "uninstall", "--yes")
    assert snapshot(toml, settings) == before


def test_uninstall_after_the_user_edited_the_files_keeps_their_edits_and_takes_out_only_ours(home: Path) -> None:
    toml, settings = place(home, "codex-config.toml", "gemini-settings.json")
    run(home, "init", "--yes", "--no-ingest", "--no-check")
    toml.write_text(toml.read_text() + '\n[mcp_servers.notes]\ncommand = "notes-mcp"  # added after init\n')
    data = json.loads(settings.read_text())
    data["theme"] = "Dracula"
    settings.write_text(json.dumps(data, indent=2) + "\n")

    run(home, "uninstall", "--yes")
    text = toml.read_text()
    assert "[mcp_servers.causantic]" not in text and "# added after init" in text
    assert "# MCP servers I use every day" in text
    assert set(tomllib.loads(text)["mcp_servers"]) == {"github", "playwright", "notes"}
    after = json.loads(settings.read_text())
    assert after["theme"] == "Dracula" and set(after["mcpServers"]) == {"github"}


def test_an_agent_that_is_not_installed_gets_no_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    run(home, "init", "--yes", "--no-ingest", "--no-check", PATH="/usr/bin:/bin")
    assert not [p.name for p in home.iterdir() if p.name in (".codex", ".gemini", ".copilot", ".cursor", ".factory")]


def test_codex_home_is_honoured(tmp_path: Path) -> None:
    home, codex_home = tmp_path / "home", tmp_path / "elsewhere" / "codex"
    home.mkdir()
    codex_home.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "codex-config.toml", codex_home / "config.toml")
    before = (codex_home / "config.toml").read_bytes()
    run(home, "init", "--yes", "--no-ingest", "--no-check", CODEX_HOME=str(codex_home))
    assert "causantic" in tomllib.loads((codex_home / "config.toml").read_text())["mcp_servers"]
    run(home, "uninstall", "--yes", CODEX_HOME=str(codex_home))
    assert (codex_home / "config.toml").read_bytes() == before


def test_a_broken_codex_config_is_left_untouched_with_a_clear_error(home: Path) -> None:
    toml, _ = place(home, None, None)
    toml.write_text('model = "gpt-5"\n[mcp_servers\n')
    done = causantic("init", "--yes", "--no-ingest", "--no-check", env=subprocess_env(HOME=str(home)), cwd=home)
    assert done.returncode != 0 and "not valid TOML" in done.stderr
    assert toml.read_text() == 'model = "gpt-5"\n[mcp_servers\n'


def test_init_leaves_the_users_one_line_gemini_entries_as_they_were(home: Path) -> None:
    """Init spread the user's one-line "args", "env" and "checkpointing" over many lines."""
    _, settings = place(home, None, "gemini-settings.json")
    before = settings.read_text(encoding="utf-8")
    run(home, "init", "--yes", "--no-ingest", "--no-check")
    after = settings.read_text(encoding="utf-8")
    kept = [line for line in before.splitlines() if line.strip().startswith(('"args"', '"env"', '"checkpointing"'))]
    assert len(kept) == 3 and all(line in after.splitlines() for line in kept)
    assert "causantic" in json.loads(after)["mcpServers"]


# Copilot CLI, Cursor and Factory Droid: each one's user-level MCP file and the entry shape its docs
# give (Copilot CLI: "type" and the "tools" it may call; Droid: "type"; Cursor: the plain form).
MCP_AGENTS = {  # agent: (folder, file, fixture, the entry's fields besides command/args/env, its name)
    "copilot": (
        ".copilot",
        "mcp-config.json",
        "copilot-mcp-config.json",
        {"type": "local", "tools": ["*"]},
        "Copilot CLI",
    ),
    "cursor": (".cursor", "mcp.json", "cursor-mcp.json", {}, "Cursor"),
    "droid": (".factory", "mcp.json", "droid-mcp.json", {"type": "stdio"}, "Factory Droid"),
}


def agent_file(home: Path, agent: str, fixture: bool = True) -> Path:
    folder, name, copy, *_ = MCP_AGENTS[agent]
    (home / folder).mkdir(parents=True, exist_ok=True)
    if fixture:
        shutil.copyfile(FIXTURES / copy, home / folder / name)
    return home / folder / name


@pytest.mark.parametrize("agent", sorted(MCP_AGENTS))
@pytest.mark.parametrize("fixture", [True, False], ids=["users-file", "no-file"])
def test_init_registers_with_copilot_cursor_and_droid_and_uninstall_gives_the_file_back(
    tmp_path: Path, agent: str, fixture: bool
) -> None:
    home = tmp_path / "home"
    path = agent_file(home, agent, fixture)
    before = snapshot(path)
    user_servers = set(json.loads(path.read_text())["mcpServers"]) if fixture else set()

    first = run(home, "init", "--yes", "--no-ingest", "--no-check", PATH="/usr/bin:/bin")
    servers = json.loads(path.read_text())["mcpServers"]
    assert set(servers) == user_servers | {"causantic"}
    ours = servers["causantic"]
    assert ours["args"] == ["-m", "causantic.mcp"] and Path(ours["command"]).name.startswith("python")
    assert {k: v for k, v in ours.items() if k not in ("command", "args", "env")} == MCP_AGENTS[agent][3]
    if fixture:  # the user's servers are as they were
        assert {k: servers[k] for k in user_servers} == json.loads(before[path] or b"")["mcpServers"]
    assert f"registered with {MCP_AGENTS[agent][4]} in {path}." in first.stdout

    once = snapshot(path)
    second = run(home, "init", "--yes", "--no-ingest", "--no-check", PATH="/usr/bin:/bin")
    assert snapshot(path) == once and f"unchanged  {path}" in second.stdout

    run(home, "uninstall", "--yes", PATH="/usr/bin:/bin")
    assert snapshot(path) == before


def test_init_names_each_agent_it_registers_with(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for agent in MCP_AGENTS:
        agent_file(home, agent)
    done = run(home, "init", "--yes", "--no-ingest", "--no-check", PATH="/usr/bin:/bin")
    for folder, file, _, _, name in MCP_AGENTS.values():
        assert f"registered with {name} in {home / folder / file}." in done.stdout
    assert "restart Copilot CLI, Cursor and Factory Droid too." in done.stdout


def test_a_cursor_file_that_does_not_parse_leaves_every_agents_file_untouched(tmp_path: Path) -> None:
    home = tmp_path / "home"
    copilot, droid = agent_file(home, "copilot"), agent_file(home, "droid")
    cursor = agent_file(home, "cursor", fixture=False)
    cursor.write_text('{"mcpServers": {"sqlite": {"command": "uvx",}}}\n')
    before = snapshot(copilot, droid, cursor)
    done = causantic(
        "init", "--yes", "--no-ingest", "--no-check", env=subprocess_env(HOME=str(home), PATH="/usr/bin:/bin"), cwd=home
    )
    assert done.returncode != 0
    assert f"{cursor} is not valid JSON" in done.stderr and "Cursor cannot read it either" in done.stderr
    assert snapshot(copilot, droid, cursor) == before


def test_uninstall_keeps_what_droid_and_the_user_changed_and_takes_out_only_ours(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = agent_file(home, "droid")
    run(home, "init", "--yes", "--no-ingest", "--no-check", PATH="/usr/bin:/bin")
    data = json.loads(path.read_text())
    data["mcpServers"]["linear"]["disabled"] = False  # the user turned a server on in /mcp
    data["mcpServers"]["causantic"]["disabled"] = True  # and ours off
    path.write_text(json.dumps(data, indent=2))
    run(home, "uninstall", "--yes", PATH="/usr/bin:/bin")
    servers = json.loads(path.read_text())["mcpServers"]
    assert set(servers) == {"playwright", "linear"} and servers["linear"]["disabled"] is False


def test_copilot_home_is_honoured(tmp_path: Path) -> None:
    home, copilot_home = tmp_path / "home", tmp_path / "elsewhere" / "copilot"
    home.mkdir()
    copilot_home.mkdir(parents=True)
    run(home, "init", "--yes", "--no-ingest", "--no-check", PATH="/usr/bin:/bin", COPILOT_HOME=str(copilot_home))
    assert "causantic" in json.loads((copilot_home / "mcp-config.json").read_text())["mcpServers"]
    assert not (home / ".copilot").exists()
    run(home, "uninstall", "--yes", PATH="/usr/bin:/bin", COPILOT_HOME=str(copilot_home))
    assert not (copilot_home / "mcp-config.json").exists()


def test_a_gemini_file_that_does_not_parse_leaves_codex_untouched_too(home: Path) -> None:
    """Init wrote Codex's file, then stopped at Gemini's, and kept no record of the Codex entry: a
    later uninstall left it there."""
    toml, settings = place(home, "codex-config.toml", None)
    settings.write_text('{"theme": "GitHub",\n')
    before = snapshot(toml, settings)
    done = causantic("init", "--yes", "--no-ingest", "--no-check", env=subprocess_env(HOME=str(home)), cwd=home)
    assert done.returncode != 0 and snapshot(toml, settings) == before
    assert "Gemini CLI cannot read it either" in done.stderr  # was "Claude Code cannot read it either"
