"""A session's title: the first thing a person asked in it, for timelines, listings and briefings.

The title is the first real prompt of the session's main stream: what :func:`prompt_of` leaves once
harness-injected text (IDE wrappers, system reminders, command caveats, Causantic's own briefing)
is removed. A session whose main stream is absent or never prompted (only sub-agent files survive)
takes its first sub-agent's prompt. Image and document placeholders say nothing, so they are
left out. Titles are computed at ingest and stored, so listing a project stays one query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from causantic.ingest.redact import REDACT_MARGIN
from causantic.transcripts.model import Transcript
from causantic.transcripts.turns import prompt_of

TITLE_MAX_CHARS = 200
# Placeholders for pasted images and documents, Claude Code's "[Image #1]" references to them, and
# the backslash a terminal user types before a newline.
_NOISE = re.compile(r"\[(?:image|document)\]|\[Image #\d+\]|\\(?=\n)")


def session_title(streams: Iterable[Transcript], redact: Callable[[str], str]) -> str | None:
    """The first real prompt among ``streams`` (main stream first), on one line, redacted; else None.

    Only the prompt's head is normalised and redacted: a title keeps 200 characters, and a pasted
    50 MB line would otherwise be split into words and scanned by every redaction rule once more.
    The head reaches ``REDACT_MARGIN`` past the cut, so a secret crossing it is still seen whole.
    """
    for stream in streams:
        for message in stream.messages:
            head = prompt_of(message, head=TITLE_MAX_CHARS + REDACT_MARGIN)[: TITLE_MAX_CHARS + REDACT_MARGIN]
            prompt = " ".join(_NOISE.sub(" ", head).split())
            if prompt:
                return _cut(redact(prompt))
    return None


def _cut(text: str) -> str:
    return text if len(text) <= TITLE_MAX_CHARS else text[: TITLE_MAX_CHARS - 1].rstrip() + "…"
