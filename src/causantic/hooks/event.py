"""The hook's stdin as one frozen value.

Claude Code sends one JSON object; its fields keep growing and only ``hook_event_name`` is always
there, so every field is optional here and unknown keys are ignored. Text that is not a JSON object
(a person running the hook by hand, a broken pipe) gives an empty event, not an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

from causantic.hooks.stdin import read_stdin as read_stdin  # re-exported: part of reading the event

# No real field is longer (PATH_MAX is 4096). A longer value is dropped as if absent: passed on to
# the ingest worker it made the spawn fail ("Argument list too long") and filled the hook log.
# The prompt is the exception: a user may paste pages, and its head says what it is about, so it is
# cut to its first PROMPT_MAX_CHARS instead (only the prompt hook reads it; no worker is passed it).
MAX_FIELD_CHARS = 4096
PROMPT_MAX_CHARS = 8192


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
        if name not in ("parsed", "prompt")
        and isinstance(value := data.get(name), str)
        and len(value) <= MAX_FIELD_CHARS
    }
    prompt = data.get("prompt")
    return HookEvent(**fields, prompt=prompt[:PROMPT_MAX_CHARS] if isinstance(prompt, str) else "", parsed=True)
