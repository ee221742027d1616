"""Claude Code's configuration files: where they are, and reading and writing them safely.

- user settings (hooks): ``~/.claude/settings.json``, or ``$CLAUDE_CONFIG_DIR/settings.json``;
- user-scope MCP servers: top-level ``mcpServers`` of ``~/.claude.json``, or of
  ``$CLAUDE_CONFIG_DIR/.claude.json`` (never ``settings.json``, where Claude Code ignores them).

Both are strict JSON that Claude Code and the user also edit, so a file that does not parse is
never overwritten (the user is told to fix it), unknown keys are kept, a write goes to a temporary
file renamed over the original (keeping its permissions and indentation), and the original is
copied to ``<causantic home>/backups/`` (owner-only: ``.claude.json`` holds account data) first.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from causantic.config import causantic_home
from causantic.errors import CausanticError
from causantic.files import atomic_write, secure_dir


@dataclass(frozen=True, slots=True)
class ClaudePaths:
    config_dir: Path
    settings: Path
    claude_json: Path

    @property
    def projects(self) -> Path:
        return self.config_dir / "projects"


def claude_paths(environ: dict[str, str] | None = None) -> ClaudePaths:
    """The files of the Claude Code this user runs; ``HOME`` and ``CLAUDE_CONFIG_DIR`` are honoured."""
    env = os.environ if environ is None else environ
    custom = env.get("CLAUDE_CONFIG_DIR")
    if custom:
        folder = Path(custom).expanduser()
        return ClaudePaths(folder, folder / "settings.json", folder / ".claude.json")
    home = Path(env.get("HOME") or Path.home())
    return ClaudePaths(home / ".claude", home / ".claude" / "settings.json", home / ".claude.json")


@dataclass(frozen=True, slots=True)
class JsonFile:
    """A JSON object file as read: its value (None if absent) and how it was formatted."""

    path: Path
    data: dict[str, Any] | None
    indent: int | str | None = 2
    newline: bool = True

    @property
    def exists(self) -> bool:
        return self.data is not None


def read_json(path: Path) -> JsonFile:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return JsonFile(path, None)
    except OSError as exc:
        raise CausanticError(f"Cannot read {path}: {exc}.") from exc
    if not text.strip():
        return JsonFile(path, {})
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CausanticError(
            f"{path} is not valid JSON ({exc}); Claude Code cannot read it either. Fix it "
            "(or move it away) and run this again; it was left untouched."
        ) from exc
    if not isinstance(data, dict):
        raise CausanticError(f"{path} holds a JSON {type(data).__name__}, not an object; it was left untouched.")
    return JsonFile(path, data, _indent_of(text), text.endswith("\n"))


def write_json(file: JsonFile, data: dict[str, Any]) -> None:
    """Replace the file atomically with ``data`` in the original's indentation and permissions."""
    text = json.dumps(data, indent=file.indent, ensure_ascii=False) + ("\n" if file.newline else "")
    mode = file.path.stat().st_mode & 0o777 if file.path.exists() else 0o600
    if not file.path.parent.exists():
        secure_dir(file.path.parent)
    atomic_write(file.path, text, mode=mode)


def backup(path: Path) -> Path | None:
    """Copy ``path`` into ``<home>/backups/`` (owner-only); None when there is nothing to copy."""
    if not path.is_file():
        return None
    folder = secure_dir(causantic_home() / "backups")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"{path.name.lstrip('.')}.{stamp}.bak"
    shutil.copyfile(path, target)
    target.chmod(0o600)
    return target


def _indent_of(text: str) -> int | str | None:
    if "\n" not in text.strip():
        return None  # written on one line: keep it on one line
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            prefix = line[: len(line) - len(stripped)]
            return "\t" if prefix.startswith("\t") else len(prefix)
    return 2
