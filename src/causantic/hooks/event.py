"""The hook's stdin as one frozen value.

Claude Code sends one JSON object; its fields keep growing and only ``hook_event_name`` is always
there, so every field is optional here and unknown keys are ignored. Text that is not a JSON object
(a person running the hook by hand, a broken pipe) gives an empty event, not an error.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass

STDIN_TIMEOUT_S = 2.0
# No real field is longer (PATH_MAX is 4096). A longer value is dropped as if absent: passed on to
# the ingest worker it made the spawn fail ("Argument list too long") and filled the hook log.
MAX_FIELD_CHARS = 4096


class HookProblem(Exception):
    """An expected reason a hook could not do its work (bad input, missing file); no traceback."""


@dataclass(frozen=True, slots=True)
class HookEvent:
    hook_event_name: str = ""
    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    source: str = ""  # SessionStart: startup | resume | clear | compact | fork
    trigger: str = ""  # PreCompact: manual | auto
    reason: str = ""  # SessionEnd
    prompt: str = ""  # UserPromptSubmit: the submitted text
    parsed: bool = False  # whether stdin held a JSON object at all

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @property
    def working_dir(self) -> str:
        """The session's directory: ``cwd`` from stdin, else the hook process's own (they match)."""
        return self.cwd or os.getcwd()


def parse_event(text: str) -> HookEvent:
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return HookEvent()
    fields = {
        name: value
        for name in HookEvent.__dataclass_fields__
        if name != "parsed" and isinstance(value := data.get(name), str) and len(value) <= MAX_FIELD_CHARS
    }
    return HookEvent(**fields, parsed=True)


def read_stdin(timeout: float = STDIN_TIMEOUT_S) -> str:
    """All of stdin, or "" when it is a terminal or stays silent for ``timeout`` seconds."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return ""
    try:
        if stream.isatty():
            return ""
        if os.name == "posix":
            import select

            ready, _, _ = select.select([stream], [], [], timeout)
            if not ready:
                return ""
        return stream.read()
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
