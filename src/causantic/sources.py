"""Which coding agent wrote a transcript: the names every layer shares, in a module of their own so
that the store and the read commands can use them without loading the configuration's validation
(pydantic), which costs a cold `causantic search` more than its search. :mod:`causantic.config`
re-exports them."""

from __future__ import annotations

from typing import Literal

# Which coding agent wrote a transcript; recorded with every session and chunk.
Source = Literal["claude-code", "codex", "gemini", "copilot", "cursor", "droid", "pi"]
SOURCES: tuple[Source, ...] = ("claude-code", "codex", "gemini", "copilot", "cursor", "droid", "pi")
SOURCE_NAMES: dict[str, str] = {
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
    "copilot": "Copilot CLI",
    "cursor": "Cursor",
    "droid": "Factory Droid",
    "pi": "Pi",
}
# The tools with which an agent spawns a sub-agent (spawn_agent: Codex CLI; invoke_agent: Gemini
# CLI; task: Copilot CLI, ``task(agent_type=…)``); ingest links the sub-agent's session to the call,
# and a rendering never folds such a call into a listing.
SPAWN_TOOLS = frozenset({"Task", "Agent", "spawn_agent", "invoke_agent", "task"})
