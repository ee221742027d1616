"""``causantic init`` and ``causantic uninstall``: edit Claude Code's files, and undo exactly that.

Install merges our entries into the user's files (see :mod:`entries`) and writes a manifest,
``<home>/integration.json``, saying what it created: the files, the ``hooks`` key, each hook event
list, the ``mcpServers`` entry it replaced, if any, and the backup of each file as the first init
found it. Uninstall removes our entries and, from the manifest, exactly the containers install
created, taking the text of what it gives back from that backup, so init followed by uninstall gives
back the original files byte for byte, however they were laid out (see :mod:`claude_files`).
Running install again changes nothing when nothing changed, and never loses what the first run
recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from causantic.config import causantic_home
from causantic.errors import CausanticError
from causantic.files import atomic_write, secure_dir
from causantic.integration.claude_files import ClaudePaths, JsonFile, backup, read_json, write_json
from causantic.integration.entries import (
    SERVER_NAME,
    Launcher,
    add_hooks,
    remove_hooks,
    set_server,
    unset_server,
)
from causantic.wording import counted

MANIFEST = "integration.json"


@dataclass(frozen=True, slots=True)
class Change:
    path: Path
    action: str  # created | updated | unchanged | removed | deleted
    detail: str
    backup: Path | None = None


@dataclass(slots=True)
class Report:
    changes: list[Change] = field(default_factory=list)


def manifest_path() -> Path:
    return causantic_home() / MANIFEST


def load_manifest(path: Path | None = None) -> dict[str, Any]:
    """The manifest at ``path`` (default: Claude Code's, :func:`manifest_path`); ``{}`` when absent or unreadable."""
    try:
        data = json.loads((path or manifest_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def install(paths: ClaudePaths, launcher: Launcher, *, prompt_memory: bool = False) -> Report:
    report = Report()
    manifest = load_manifest()
    if manifest.get("settings", {}).get("path") not in (None, str(paths.settings)):
        manifest = {}  # installed into another Claude Code config before: that record does not apply here

    settings, claude = read_json(paths.settings), read_json(paths.claude_json)  # both readable, or no change
    before = settings.data or {}
    after, events = add_hooks(before, launcher, prompt_memory=prompt_memory)
    old = manifest.get("settings", {})
    record = {
        "path": str(paths.settings),
        "created_file": old.get("created_file", False) or not settings.exists,
        "created_hooks_key": old.get("created_hooks_key", False) or "hooks" not in before,
        "created_events": sorted(
            set(old.get("created_events", [])) | {e for e in after.get("hooks", {}) if e not in before.get("hooks", {})}
        ),
    }
    change = _write(settings, after, f"hooks {', '.join(events)}" if events else "hooks already set")
    record["original"] = old.get("original") if old else _backup_of(change)
    report.changes.append(change)

    current = claude.data or {}
    entry = launcher.mcp_entry()
    updated, previous = set_server(current, entry)
    old_mcp = manifest.get("claude_json", {})
    mcp_record = {
        "path": str(paths.claude_json),
        "created_file": old_mcp.get("created_file", False) or not claude.exists,
        "created_key": old_mcp.get("created_key", False) or "mcpServers" not in current,
        "previous_entry": old_mcp["previous_entry"] if "previous_entry" in old_mcp else previous,
    }
    change = _write(claude, updated, f"mcpServers.{SERVER_NAME}")
    mcp_record["original"] = old_mcp.get("original") if old_mcp else _backup_of(change)
    report.changes.append(change)

    secure_dir(causantic_home())
    atomic_write(
        manifest_path(),
        json.dumps(
            {
                "version": 1,
                "settings": record,
                "claude_json": mcp_record,
                "launcher": {"python": launcher.python, "env": launcher.env},
            },
            indent=2,
        )
        + "\n",
    )
    _verify_server(paths.claude_json, entry)
    return report


def uninstall(paths: ClaudePaths) -> Report:
    report = Report()
    manifest = load_manifest()
    record = manifest.get("settings", {}) if manifest.get("settings", {}).get("path") == str(paths.settings) else {}
    settings = read_json(paths.settings)
    if settings.exists:
        events = set(record["created_events"]) if "created_events" in record else None
        after, removed = remove_hooks(settings.data or {}, events, record.get("created_hooks_key"))
        what = f"{counted(removed, 'hook handler')} removed"
        created = record.get("created_file", False)
        report.changes.append(_write_or_delete(settings, after, created, what, _original(record)))

    mcp_record = manifest.get("claude_json", {})
    if mcp_record.get("path") != str(paths.claude_json):
        mcp_record = {}
    claude = read_json(paths.claude_json)
    servers = (claude.data or {}).get("mcpServers")
    if claude.exists and isinstance(servers, dict) and SERVER_NAME in servers:
        after = unset_server(claude.data or {}, mcp_record.get("previous_entry"), mcp_record.get("created_key", False))
        what = f"mcpServers.{SERVER_NAME} removed"
        created = mcp_record.get("created_file", False)
        report.changes.append(_write_or_delete(claude, after, created, what, _original(mcp_record)))
    manifest_path().unlink(missing_ok=True)
    return report


def registered(paths: ClaudePaths) -> bool:
    """Whether Claude Code's files hold Causantic's hooks or MCP server: what :func:`uninstall` takes out."""
    settings, claude = read_json(paths.settings), read_json(paths.claude_json)
    servers = (claude.data or {}).get("mcpServers")
    return remove_hooks(settings.data or {}, None, None)[1] > 0 or (
        isinstance(servers, dict) and SERVER_NAME in servers
    )


def _write(file: JsonFile, data: dict[str, Any], detail: str, original: JsonFile | None = None) -> Change:
    if file.exists and data == file.data:
        return Change(file.path, "unchanged", detail)
    saved = backup(file.path)
    write_json(file, data, original)
    return Change(file.path, "updated" if file.exists else "created", detail, saved)


def _write_or_delete(
    file: JsonFile, data: dict[str, Any], created: bool, detail: str, original: JsonFile | None
) -> Change:
    if created and not data:
        saved = backup(file.path)
        file.path.unlink()
        return Change(file.path, "deleted", "created by init, now empty", saved)
    return _write(file, data, detail, original)


def _backup_of(change: Change) -> str | None:
    """The backup a first init made of a file it changed: the file as the user had it."""
    return str(change.backup) if change.action == "updated" and change.backup else None


def _original(record: dict[str, Any]) -> JsonFile | None:
    """The file as the first init found it (from its backup), to lend uninstall its text; None if gone."""
    try:
        original = read_json(Path(record["original"])) if record.get("original") else None
    except CausanticError:
        return None
    return original if original is not None and original.exists else None


def _verify_server(path: Path, entry: dict[str, Any]) -> None:
    """Claude Code rewrites .claude.json often; make sure our entry survived the write."""
    written = read_json(path).data or {}
    if written.get("mcpServers", {}).get(SERVER_NAME) != entry:
        raise CausanticError(
            f"{path} was rewritten by another process while Causantic registered its MCP "
            "server; close Claude Code and run `causantic init` again."
        )
