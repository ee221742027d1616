"""Claude Code's configuration files: where they are, and reading and writing them safely.

- user settings (hooks): ``~/.claude/settings.json``, or ``$CLAUDE_CONFIG_DIR/settings.json``;
- user-scope MCP servers: top-level ``mcpServers`` of ``~/.claude.json``, or of
  ``$CLAUDE_CONFIG_DIR/.claude.json`` (never ``settings.json``, where Claude Code ignores them).

Both are strict JSON that Claude Code and the user also edit, so a file that does not parse is
never overwritten (the user is told to fix it), unknown keys are kept, a write goes to a temporary
file renamed over the original (keeping its permissions), and the original is copied to
``<causantic home>/backups/`` (owner-only: ``.claude.json`` holds account data) first.

A write changes only the text of the objects and arrays whose content changed (:func:`render`): a
value that is unchanged keeps its text as the user laid it out (``"allow": ["Bash(make test)"]`` on
one line stays on one line), and a changed container is laid out in the file's indentation. Given the
file as it was before init, uninstall takes that file's text for every value it gives back unchanged,
so init followed by uninstall restores a hand-formatted file byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from causantic.config import causantic_home, claude_config_dir
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
    folder = claude_config_dir(env)
    if env.get("CLAUDE_CONFIG_DIR"):
        return ClaudePaths(folder, folder / "settings.json", folder / ".claude.json")
    return ClaudePaths(folder, folder / "settings.json", folder.parent / ".claude.json")


@dataclass(frozen=True, slots=True)
class JsonFile:
    """A JSON object file as read: its value (None if absent) and how it was formatted."""

    path: Path
    data: dict[str, Any] | None
    indent: int | str | None = 2
    newline: bool = True
    text: str = ""

    @property
    def exists(self) -> bool:
        return self.data is not None


def read_json(path: Path, owner: str = "Claude Code") -> JsonFile:
    """The JSON object in ``path``; ``owner``, the program that reads the file, is named when it
    does not parse."""
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
            f"{path} is not valid JSON ({exc}); {owner} cannot read it either. Fix it "
            "(or move it away) and run this again; it was left untouched."
        ) from exc
    if not isinstance(data, dict):
        raise CausanticError(f"{path} holds a JSON {type(data).__name__}, not an object; it was left untouched.")
    return JsonFile(path, data, _indent_of(text), text.endswith("\n"), text)


def json_text(file: JsonFile, data: dict[str, Any], original: JsonFile | None = None) -> str:
    """The text of ``file`` holding ``data``: only what changed is laid out anew (:func:`render`;
    ``original``, the file before init, lends its text too)."""
    sources = [f for f in (file, original) if f is not None and f.data is not None and f.text.strip()]
    if file.indent is None or not sources:  # on one line (minified or not), or a new file
        given_back = [f.text.strip() for f in sources if _same(f.data, data)]
        separators = (",", ":") if file.data is not None and _compact(file.text, file.data) else None
        text = (
            given_back[0]
            if given_back
            else json.dumps(data, indent=file.indent, separators=separators, ensure_ascii=False)
        )
    else:
        text = render(data, [(f.text, f.data, _spans(f.text, 0)[0]) for f in sources], file.indent)
    return text + ("\n" if file.newline else "")


def write_json(file: JsonFile, data: dict[str, Any], original: JsonFile | None = None) -> None:
    """Replace the file atomically with :func:`json_text`, keeping the file's permissions."""
    text = json_text(file, data, original)
    mode = file.path.stat().st_mode & 0o777 if file.path.exists() else 0o600
    if not file.path.parent.exists():
        secure_dir(file.path.parent)
    atomic_write(file.path, text, mode=mode)


def backup(path: Path) -> Path | None:
    """Copy ``path`` into ``<home>/backups/`` (owner-only); None when there is nothing to copy. A file
    in an agent's own folder is named after it ('gemini-settings.json.<time>.bak'): Claude Code's and
    Gemini CLI's settings.json were both backed up as 'settings.json.<time>.bak'."""
    if not path.is_file():
        return None
    folder = secure_dir(causantic_home() / "backups")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    owner = f"{path.parent.name.lstrip('.')}-" if path.parent.name.startswith(".") else ""
    target = folder / f"{owner}{path.name.lstrip('.')}.{stamp}.bak"
    shutil.copyfile(path, target)
    target.chmod(0o600)
    return target


# A JSON value's place in its file's text: (start, end, children), the children an object's values by
# key or an array's items in order (None for a scalar).
Span = tuple[int, int, "dict[str, Span] | list[Span] | None"]
Source = tuple[str, Any, "Span | None"]  # a file's text, its value, and where that value sits in the text
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def render(value: Any, sources: list[Source], indent: int | str, depth: int = 0) -> str:
    """``value`` as JSON text: a part equal to the part at the same place in a source is that source's
    text; a changed object or array is laid out with ``indent``, its unchanged parts kept as they were."""
    for text, old, span in sources:
        if span is not None and _same(value, old):
            return text[span[0] : span[1]]
    unit = indent if isinstance(indent, str) else " " * indent
    inner = "\n" + unit * (depth + 1)
    if isinstance(value, dict) and value:
        here = [(t, o, s[2]) for t, o, s in sources if isinstance(o, dict) and s and isinstance(s[2], dict)]
        items = [
            f"{json.dumps(key, ensure_ascii=False)}: "
            + render(item, [(t, o[key], s[key]) for t, o, s in here if key in o and key in s], indent, depth + 1)
            for key, item in value.items()
        ]
        return "{" + inner + ("," + inner).join(items) + "\n" + unit * depth + "}"
    if isinstance(value, list) and value:
        rows = [(t, o, s[2]) for t, o, s in sources if isinstance(o, list) and s and isinstance(s[2], list)]
        items = []
        for index, item in enumerate(value):
            # an item equal to one anywhere in the old array keeps that one's text (arrays shrink and grow)
            equal = [(t, o[i], s[i]) for t, o, s in rows for i in range(len(o)) if _same(item, o[i])][:1]
            same_place = [(t, o[index], s[index]) for t, o, s in rows if index < len(o)]
            items.append(render(item, equal or same_place, indent, depth + 1))
        return "[" + inner + ("," + inner).join(items) + "\n" + unit * depth + "]"
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + unit * depth)


def _compact(text: str, data: Any) -> bool:
    """Whether a file is written without the spaces after ``,`` and ``:`` (minified)."""
    return text.strip() == json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text (order and types: 1 is not true, {"a","b"} is not {"b","a"})."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def _spans(text: str, at: int) -> tuple[Span, int]:
    """Where the JSON value starting at or after ``at`` sits, with its children; and where it ends.
    Only for text that :func:`json.loads` accepted."""
    at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
    opening = text[at]
    if opening not in "{[":
        _, end = _DECODER.raw_decode(text, at)
        return (at, end, None), end
    start, closing = at, "}" if opening == "{" else "]"
    keyed: dict[str, Span] = {}
    listed: list[Span] = []
    at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    while text[at] != closing:
        if opening == "{":
            key, at = _DECODER.raw_decode(text, at)
            at = _SPACE.match(text, at).end() + 1  # type: ignore[union-attr]  # past ":"
            keyed[key], at = _spans(text, at)
        else:
            span, at = _spans(text, at)
            listed.append(span)
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        if text[at] == ",":
            at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    return (start, at + 1, keyed if opening == "{" else listed), at + 1


def _indent_of(text: str) -> int | str | None:
    if "\n" not in text.strip():
        return None  # written on one line: keep it on one line
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            prefix = line[: len(line) - len(stripped)]
            return "\t" if prefix.startswith("\t") else len(prefix)
    return 2
