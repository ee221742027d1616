"""Transcript parsing: the session files coding agents write, into typed sessions and turns.

Seven agents' files are read, told apart by their first bytes wherever they lie: Claude Code's JSONL
(main sessions and their sub-agents in every layout, compaction agents included), Codex CLI rollouts
(a spawned agent's joins its parent's session, a user's fork is read with the session it forked),
Gemini CLI sessions, and Copilot CLI, Cursor, Factory Droid and Pi sessions. Each becomes the same
typed values, its ``source`` naming the agent; what the user rewound past becomes a stream of its
own. Rendering turns into text, chunking and linking belong to ``ingest``.

- ``model``: the typed values (messages, transcripts, turns) every later layer consumes.
- ``reader``: Claude Code's files: robust line reading (bad lines skipped and counted), record parsing.
- ``codex``, ``gemini``: one Codex CLI rollout, one Gemini CLI session, into the same values.
- ``other_agents``: one Copilot CLI, Cursor, Factory Droid or Pi session, into the same values.
- ``rewinds``: attempts the user rewound past, marked by the readers, split off the main line.
- ``longvalue``: a multi-megabyte string value left in its file and decoded a window at a time.
- ``_system_text``: what Claude Code injected into a user record, told apart from what was typed.
- ``compaction``: the conversation's records a compaction agent's file holds, given back to it.
- ``discovery``: finding sessions and their sub-agent files in every layout, and which agent wrote each.
- ``turns``: turn assembly.
- ``projects``: project identity from ``cwd``.

The names below load from their modules on first use, so a hook that needs one small module
(``_system_text``, ``projects``) does not pay for the readers and discovery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from causantic import lazy_names

if TYPE_CHECKING:
    from causantic.transcripts._system_text import (
        BRIEFING_OPENING,
        COMPACTION_LINE,
        MEMORY_BLOCK_END,
        MEMORY_BLOCK_START,
        OPENING_CHARS,
        SUGGESTION_PROMPT_OPENING,
        injected_elements_removed,
        opens_plainly,
        opens_unclosed_element,
        without_injected,
        without_trailing_reminders,
    )
    from causantic.transcripts.discovery import SessionFiles, discover, read_session
    from causantic.transcripts.projects import canonical_project_path, folder_project
    from causantic.transcripts.reader import BROKEN_LINE_REASONS, SkipReason, read_file
    from causantic.transcripts.turns import assemble_turns, prompt_of

_HOME = {
    "BRIEFING_OPENING": "_system_text",
    "COMPACTION_LINE": "_system_text",
    "MEMORY_BLOCK_END": "_system_text",
    "MEMORY_BLOCK_START": "_system_text",
    "OPENING_CHARS": "_system_text",
    "SUGGESTION_PROMPT_OPENING": "_system_text",
    "injected_elements_removed": "_system_text",
    "opens_plainly": "_system_text",
    "opens_unclosed_element": "_system_text",
    "without_injected": "_system_text",
    "without_trailing_reminders": "_system_text",
    "SessionFiles": "discovery",
    "discover": "discovery",
    "read_session": "discovery",
    "canonical_project_path": "projects",
    "folder_project": "projects",
    "BROKEN_LINE_REASONS": "reader",
    "SkipReason": "reader",
    "read_file": "reader",
    "assemble_turns": "turns",
    "prompt_of": "turns",
}

__all__ = [
    "BRIEFING_OPENING",
    "BROKEN_LINE_REASONS",
    "COMPACTION_LINE",
    "MEMORY_BLOCK_END",
    "MEMORY_BLOCK_START",
    "OPENING_CHARS",
    "SUGGESTION_PROMPT_OPENING",
    "SessionFiles",
    "SkipReason",
    "assemble_turns",
    "canonical_project_path",
    "discover",
    "folder_project",
    "injected_elements_removed",
    "opens_plainly",
    "opens_unclosed_element",
    "prompt_of",
    "read_file",
    "read_session",
    "without_injected",
    "without_trailing_reminders",
]

__getattr__ = lazy_names(__name__, _HOME)
