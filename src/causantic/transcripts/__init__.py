"""Transcript parsing: JSONL files written by Claude Code into typed sessions and turns.

- ``model``: the typed values (messages, transcripts, turns) every later layer consumes.
- ``reader``: robust line reading (bad lines skipped and counted), record parsing.
- ``discovery``: finding sessions and their sub-agent files in every layout.
- ``turns``: turn assembly.
- ``projects``: project identity from ``cwd``.
"""

from causantic.transcripts._system_text import (
    BRIEFING_OPENING,
    MEMORY_BLOCK_END,
    MEMORY_BLOCK_START,
    without_injected,
    without_trailing_reminders,
)
from causantic.transcripts.discovery import SessionFiles, discover, read_session
from causantic.transcripts.projects import canonical_project_path, project_key_for_folder
from causantic.transcripts.reader import BROKEN_LINE_REASONS, SkipReason, read_file
from causantic.transcripts.turns import assemble_turns, prompt_of

__all__ = [
    "BRIEFING_OPENING",
    "BROKEN_LINE_REASONS",
    "MEMORY_BLOCK_END",
    "MEMORY_BLOCK_START",
    "SessionFiles",
    "SkipReason",
    "assemble_turns",
    "canonical_project_path",
    "discover",
    "project_key_for_folder",
    "prompt_of",
    "read_file",
    "read_session",
    "without_injected",
    "without_trailing_reminders",
]
