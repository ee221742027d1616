"""Registering Causantic's MCP server with the other agents that have MCP, and taking it out again.

- Codex CLI: the table ``[mcp_servers.causantic]`` in ``$CODEX_HOME/config.toml`` (default
  ``~/.codex/config.toml``), edited with tomlkit so the user's comments and layout stay as they are;
- Gemini CLI: ``mcpServers.causantic`` in ``~/.gemini/settings.json``;
- GitHub Copilot CLI: ``mcpServers.causantic`` in ``$COPILOT_HOME/mcp-config.json`` (default
  ``~/.copilot/mcp-config.json``), with the ``"type": "local"`` and ``"tools": ["*"]`` its schema asks for;
- Cursor: ``mcpServers.causantic`` in ``~/.cursor/mcp.json`` (global; the editor and ``cursor-agent``);
- Factory Droid: ``mcpServers.causantic`` in ``~/.factory/mcp.json`` (user level), ``"type": "stdio"``.

The JSON files get the same handling as Claude Code's files: a file that does not parse is never
touched, only what changed is laid out anew. Pi has no MCP by design (its README: "No MCP."), so
there is nothing to register there.

An agent counts as installed when its folder exists or its command is on ``PATH``; others are left
alone. The entry runs the same interpreter as Claude Code's (:class:`~.entries.Launcher`). Every
file is read and its new text made before any is written, so one that does not parse leaves all of
them as they were.

The manifest ``<home>/agents-integration.json`` records, per file: whether init created the file and
the ``mcp_servers``/``mcpServers`` container, the entry named ``causantic`` it replaced, a backup of the
file as it was before the first install, and the sha256 of the text init wrote. Uninstall puts the
backup's bytes back (or deletes a file init created) when the file is still exactly what init wrote,
so init followed by uninstall gives the file back byte for byte; when the agent or the user changed
it since, only our entry is taken out (the replaced one restored) and every other change is kept.
Running init again with nothing changed writes nothing and keeps the first run's record.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from causantic.config import causantic_home
from causantic.errors import CausanticError
from causantic.files import atomic_write, secure_dir
from causantic.integration.claude_files import backup, json_text, read_json
from causantic.integration.entries import SERVER_NAME, Launcher
from causantic.integration.install import Change, load_manifest
from causantic.sources import SOURCE_NAMES

MANIFEST = "agents-integration.json"
Agent = Literal["codex", "gemini", "copilot", "cursor", "droid"]


@dataclass(frozen=True, slots=True)
class AgentFile:
    """One agent's MCP configuration file."""

    agent: Agent
    path: Path
    home: Path  # the agent's own folder
    command: str  # its executable

    @property
    def installed(self) -> bool:
        return self.home.is_dir() or shutil.which(self.command) is not None


def agent_files(environ: dict[str, str] | None = None) -> list[AgentFile]:
    """The MCP files of Codex CLI, Gemini CLI, Copilot CLI, Cursor and Factory Droid for this user;
    ``HOME``, ``CODEX_HOME`` and ``COPILOT_HOME`` are honoured."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    codex = Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex"
    copilot = Path(env["COPILOT_HOME"]).expanduser() if env.get("COPILOT_HOME") else home / ".copilot"
    return [
        AgentFile("codex", codex / "config.toml", codex, "codex"),
        AgentFile("gemini", home / ".gemini" / "settings.json", home / ".gemini", "gemini"),
        AgentFile("copilot", copilot / "mcp-config.json", copilot, "copilot"),
        AgentFile("cursor", home / ".cursor" / "mcp.json", home / ".cursor", "cursor-agent"),
        AgentFile("droid", home / ".factory" / "mcp.json", home / ".factory", "droid"),
    ]


def install_agents(files: list[AgentFile], launcher: Launcher) -> list[Change]:
    """Add our MCP server to each file (those of installed agents only, see :func:`agent_files`).
    Every file is read and its new text made first: one that does not parse raises before any is
    written."""
    planned = []
    for file in files:
        if not file.installed:
            continue
        original = _read_text(file.path)
        entry = _entry(launcher, file.agent)
        if file.agent == "codex":
            text, previous, created_container = _toml_set(original or "", entry)
            where = f"[mcp_servers.{SERVER_NAME}]"
        else:
            text, previous, created_container = _json_set(file, original, entry)
            where = f"mcpServers.{SERVER_NAME}"
        planned.append((file, original, text, previous, created_container, where))
    manifest = _load_manifest()
    changes: list[Change] = []
    for file, original, text, previous, created_container, where in planned:
        if text == original:
            changes.append(Change(file.path, "unchanged", where))
            continue
        saved = backup(file.path)
        if not file.path.parent.exists():
            secure_dir(file.path.parent)
        mode = file.path.stat().st_mode & 0o777 if file.path.exists() else 0o600
        atomic_write(file.path, text, mode=mode)
        changes.append(Change(file.path, "updated" if original is not None else "created", where, saved))
        record = manifest.get(str(file.path))
        if record:  # installed before: that run knows what init created; the file has changed since,
            # so its backup no longer is "the file without our entry"
            manifest[str(file.path)] = {**record, "backup": None, "written_sha256": _sha(text)}
        else:
            manifest[str(file.path)] = {
                "agent": file.agent,
                "created_file": original is None,
                "created_container": created_container,
                "previous_entry": previous,
                "backup": str(saved) if saved is not None else None,
                "written_sha256": _sha(text),
            }
    _save_manifest(manifest)
    return changes


def uninstall_agents(files: list[AgentFile]) -> list[Change]:
    """Take out exactly what :func:`install_agents` added (rules in the module docstring)."""
    manifest = _load_manifest()
    changes: list[Change] = []
    for file in files:
        record = manifest.pop(str(file.path), {})
        current = _read_text(file.path)
        if current is None:
            continue
        untouched = record.get("written_sha256") == _sha(current)
        if untouched and record.get("created_file"):
            saved = backup(file.path)
            file.path.unlink()
            changes.append(Change(file.path, "deleted", "created by init", saved))
            continue
        original = _read_backup(record.get("backup")) if untouched else None
        if original is None:
            if file.agent == "codex":
                original = _toml_unset(current, record.get("previous_entry"), bool(record.get("created_container")))
            else:
                original = _json_unset(
                    file, current, record.get("previous_entry"), bool(record.get("created_container"))
                )
        if original == current:
            continue
        saved = backup(file.path)
        atomic_write(file.path, original, mode=file.path.stat().st_mode & 0o777)
        changes.append(Change(file.path, "removed", f"{SERVER_NAME} MCP server", saved))
    _save_manifest(manifest)
    return changes


def registered_agents(files: list[AgentFile]) -> list[AgentFile]:
    """The files that hold Causantic's MCP server entry: what :func:`uninstall_agents` takes out."""
    found = []
    for file in files:
        current = _read_text(file.path)
        if current is None:
            continue
        if file.agent == "codex":
            without = _toml_unset(current, None, False)
        else:
            without = _json_unset(file, current, None, False)
        if without != current:
            found.append(file)
    return found


# --- the entry -------------------------------------------------------------------------------------


def _entry(launcher: Launcher, agent: Agent) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": launcher.python, "args": ["-m", "causantic.mcp"]}
    if launcher.env:
        entry["env"] = dict(sorted(launcher.env.items()))
    if agent == "copilot":  # Copilot CLI's schema: a local process, and the tools it may call ("*": all)
        return {"type": "local", **entry, "tools": ["*"]}
    if agent == "droid":  # Factory Droid's: every entry names its type (stdio or http)
        return {"type": "stdio", **entry}
    return entry


def _toml_set(text: str, entry: dict[str, Any]) -> tuple[str, Any, bool]:
    """``text`` with ``[mcp_servers.causantic]`` set to ``entry``; the entry it replaced; whether
    the ``mcp_servers`` table was created."""
    import tomlkit  # ~17 ms: loaded only by init and uninstall
    from tomlkit.exceptions import ParseError

    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        raise CausanticError(f"Codex's config.toml is not valid TOML ({exc}); it was left untouched.") from exc
    servers: Any = doc.get("mcp_servers")
    created = servers is None
    if created:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    elif not isinstance(servers, dict):
        raise CausanticError("Codex's config.toml: 'mcp_servers' is not a table; fix it by hand and run init again.")
    previous = servers.get(SERVER_NAME)
    previous_value = previous.unwrap() if hasattr(previous, "unwrap") else previous
    if previous_value == entry:
        return text, previous_value, False
    table = tomlkit.table()
    for key, value in entry.items():
        if key == "env":
            inline = tomlkit.inline_table()
            inline.update(value)
            table[key] = inline
        else:
            table[key] = value
    table.add(tomlkit.nl())  # a blank line before whatever table follows
    servers[SERVER_NAME] = table
    return tomlkit.dumps(doc), previous_value, created


def _toml_unset(text: str, previous: Any, created_container: bool) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    servers: Any = doc.get("mcp_servers")
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return text
    if previous is not None:
        servers[SERVER_NAME] = previous
    else:
        del servers[SERVER_NAME]
        if created_container and not servers:
            del doc["mcp_servers"]
    return tomlkit.dumps(doc)


def _json_set(agent: AgentFile, text: str | None, entry: dict[str, Any]) -> tuple[str, Any, bool]:
    path = agent.path
    file = read_json(path, SOURCE_NAMES[agent.agent])  # raises, leaving the file alone, when not a JSON object
    data = dict(file.data or {})
    servers = data.get("mcpServers")
    created = servers is None
    if created:
        servers = {}
    elif not isinstance(servers, dict):
        raise CausanticError(f"{path}: 'mcpServers' is not a JSON object; fix it by hand and run init again.")
    previous = servers.get(SERVER_NAME)
    if previous == entry and text is not None:
        return text, previous, False
    data["mcpServers"] = {**servers, SERVER_NAME: entry}
    return json_text(file, data), previous, created


def _json_unset(agent: AgentFile, text: str, previous: Any, created_container: bool) -> str:
    file = read_json(agent.path, SOURCE_NAMES[agent.agent])
    data = dict(file.data or {})
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return text
    servers = dict(servers)
    if previous is not None:
        servers[SERVER_NAME] = previous
    else:
        del servers[SERVER_NAME]
    if servers or not created_container:
        data["mcpServers"] = servers
    else:
        del data["mcpServers"]
    return json_text(file, data)


# --- files ----------------------------------------------------------------------------------------


def _read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise CausanticError(f"Cannot read {path}: {exc}; it was left untouched.") from exc


def _read_backup(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _manifest_path() -> Path:
    return causantic_home() / MANIFEST


def _load_manifest() -> dict[str, Any]:
    return load_manifest(_manifest_path())


def _save_manifest(manifest: dict[str, Any]) -> None:
    if not manifest:
        _manifest_path().unlink(missing_ok=True)
        return
    secure_dir(causantic_home())
    atomic_write(_manifest_path(), json.dumps(manifest, indent=2) + "\n")
