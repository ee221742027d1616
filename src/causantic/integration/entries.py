"""What ``causantic init`` registers with Claude Code, and recognising it again later.

- one user-scope MCP server, ``causantic``: ``{"type": "stdio", "command": <this python>, "args":
  ["-m", "causantic.mcp"], "env": {...}}``;
- three hooks in user settings, each ``<this python> -m causantic.hooks <name>`` in shell form:
  SessionStart (all sources, timeout 10 s), PreCompact (matcher "", 30 s), SessionEnd (10 s, which
  also raises Claude Code's shared SessionEnd budget from 1.5 s to 10 s);
- with ``--prompt-memory`` a fourth, UserPromptSubmit (10 s), whose command also sets
  ``CAUSANTIC_PROMPT_MEMORY_ENABLED=true``: registering it is the opt-in.

The absolute interpreter path pins this install; ``-m`` skips the CLI's imports (faster start).
``CAUSANTIC_HOME`` (and ``PYTHONPATH`` when this install is only importable through it, as in a
source checkout) are passed on so Claude Code's processes use the same memory as the installer.
A hook handler is ours when its command runs ``causantic.hooks <name>`` or ``causantic hook <name>``
(the earlier Causantic's form too), so re-running init replaces it in place instead of adding a
second copy. Functions here are pure: they take and return JSON values.
"""

from __future__ import annotations

import copy
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from causantic.errors import CausanticError

SERVER_NAME = "causantic"
HOOKS: dict[str, tuple[str, int, str | None]] = {  # event: (hook name, timeout seconds, matcher)
    "SessionStart": ("session-start", 10, None),
    "PreCompact": ("pre-compact", 30, ""),
    "SessionEnd": ("session-end", 10, None),
}
PROMPT_MEMORY_HOOKS: dict[str, tuple[str, int, str | None]] = {"UserPromptSubmit": ("user-prompt-submit", 10, None)}
PROMPT_MEMORY_ENV = {"CAUSANTIC_PROMPT_MEMORY_ENABLED": "true"}
_OURS = re.compile(
    r"(?:-m\s+causantic\.hooks|\bcausantic(?:\.exe)?['\"]?\s+hook)\s+"
    r"(session-start|pre-compact|session-end|user-prompt-submit)\b"
)


@dataclass(frozen=True, slots=True)
class Launcher:
    """How Claude Code should start this install of Causantic."""

    python: str
    env: dict[str, str] = field(default_factory=dict)

    def mcp_entry(self) -> dict[str, Any]:
        return {
            "type": "stdio",
            "command": self.python,
            "args": ["-m", "causantic.mcp"],
            "env": dict(self.env),
        }

    def hook_command(self, hook: str, extra_env: dict[str, str] | None = None) -> str:
        env = {**self.env, **(extra_env or {})}
        prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in sorted(env.items()))
        return f"{prefix}{shlex.quote(self.python)} -m causantic.hooks {hook}"

    def hook_handler(self, event: str) -> dict[str, Any]:
        if event in PROMPT_MEMORY_HOOKS:
            hook, timeout, _ = PROMPT_MEMORY_HOOKS[event]
            return {"type": "command", "command": self.hook_command(hook, PROMPT_MEMORY_ENV), "timeout": timeout}
        hook, timeout, _ = HOOKS[event]
        return {"type": "command", "command": self.hook_command(hook), "timeout": timeout}


def this_launcher(environ: dict[str, str] | None = None) -> Launcher:
    env = os.environ if environ is None else environ
    extra: dict[str, str] = {}
    if env.get("CAUSANTIC_HOME"):
        extra["CAUSANTIC_HOME"] = str(Path(env["CAUSANTIC_HOME"]).expanduser().resolve())
    source_root = str(Path(__file__).resolve().parents[2])
    if not _importable_without_pythonpath():
        extra["PYTHONPATH"] = source_root
    # abspath, not resolve(): a virtualenv's python is a symlink, and following it would leave the venv
    return Launcher(os.path.abspath(sys.executable), extra)


def hook_of(handler: Any) -> str | None:
    """The Causantic hook a settings handler runs (``session-start``…), or None if it is not ours."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return None
    match = _OURS.search(handler["command"])
    return match.group(1) if match else None


def add_hooks(
    settings: dict[str, Any], launcher: Launcher, *, prompt_memory: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """Settings with our three hooks (four with ``prompt_memory``) merged in, others untouched; and the
    events that changed. Without ``prompt_memory`` a prompt-memory hook already there stays as it is."""
    out = copy.deepcopy(settings)
    hooks = out.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise CausanticError("settings.json: 'hooks' is not a JSON object; fix it by hand and run init again.")
    changed = []
    for event, (hook, _, matcher) in {**HOOKS, **(PROMPT_MEMORY_HOOKS if prompt_memory else {})}.items():
        wanted = launcher.hook_handler(event)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise CausanticError(f"settings.json: hooks.{event} is not a list; fix it by hand and run init again.")
        places = [
            (g, i)
            for g in groups
            if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for i, h in enumerate(g["hooks"])
            if hook_of(h) == hook
        ]
        if [g["hooks"][i] for g, i in places] == [wanted]:
            continue
        if places:
            first, index = places[0]
            first["hooks"][index] = wanted
            for group, i in reversed(places[1:]):  # copies from hand edits or older installs: keep one
                del group["hooks"][i]
            touched = {id(g) for g, _ in places[1:]}
            groups[:] = [g for g in groups if id(g) not in touched or not _emptied(g)]
        else:
            groups.append({"matcher": matcher, "hooks": [wanted]} if matcher is not None else {"hooks": [wanted]})
        changed.append(event)
    return out, changed


def remove_hooks(
    settings: dict[str, Any], created_events: set[str] | None, created_hooks_key: bool | None
) -> tuple[dict[str, Any], int]:
    """Settings without our handlers. Containers left empty go when init created them (when that is
    unknown, None: when removing our handlers emptied them)."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out, 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                mine = sum(1 for h in group["hooks"] if hook_of(h) is not None)
                if mine:
                    removed += mine
                    group["hooks"] = [h for h in group["hooks"] if hook_of(h) is None]
                    if not group["hooks"]:
                        continue
            kept.append(group)
        hooks[event] = kept
        ours = event in created_events if created_events is not None else len(kept) < len(groups)
        if not kept and ours:
            del hooks[event]
    ours_key = created_hooks_key if created_hooks_key is not None else removed > 0
    if not hooks and ours_key:
        del out["hooks"]
    return out, removed


def set_server(claude_json: dict[str, Any], entry: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """``.claude.json`` with our user-scope server set; and the entry it replaced (None if none)."""
    out = copy.deepcopy(claude_json)
    servers = out.setdefault("mcpServers", {})
    previous = servers.get(SERVER_NAME)
    servers[SERVER_NAME] = entry
    return out, previous


def unset_server(claude_json: dict[str, Any], previous: Any, created_key: bool) -> dict[str, Any]:
    out = copy.deepcopy(claude_json)
    servers = out.get("mcpServers")
    if not isinstance(servers, dict):
        return out
    if previous is not None:
        servers[SERVER_NAME] = previous
    else:
        servers.pop(SERVER_NAME, None)
    if not servers and created_key:
        del out["mcpServers"]
    return out


def _emptied(group: Any) -> bool:
    return isinstance(group, dict) and isinstance(group.get("hooks"), list) and not group["hooks"]


def _importable_without_pythonpath() -> bool:
    """Whether this interpreter finds causantic with no PYTHONPATH (an installed package)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = "import causantic.hooks, os, sys; print(os.path.dirname(causantic.hooks.__file__))"
    try:
        out = subprocess.run(
            [sys.executable, "-c", probe],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path.home(),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    here = str(Path(__file__).resolve().parents[1] / "hooks")
    return out.returncode == 0 and Path(out.stdout.strip()).resolve() == Path(here).resolve()
