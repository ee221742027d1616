"""Turn assembly: a transcript's messages grouped by the user prompts that start them.

Rules (in record order, never re-sorted by timestamp):

- A **boundary** is a user message with prompt text (:func:`prompt_of`): not ``is_meta``, and with
  text left once harness-injected parts and a leading "[Request interrupted…]" marker are removed.
  A message carrying only tool results, only an interruption marker, or only injected text (caveats,
  ``/clear``, command output, ``<system-reminder>``) is not a boundary and stays in the running turn.
- A user message that carries tool results *and* typed text (the user steering mid-turn, e.g.
  "[Request interrupted by user] actually also run typecheck") is a boundary: its text is what the
  following work answers.
- A turn's prompt is the head of that text (:data:`PROMPT_HEAD_CHARS` of each block); the
  messages keep all of it.
- Everything from a boundary up to the next one is that turn. Messages before the first boundary
  form turn 0 with prompt ``""``, so indices are 0-based and contiguous over all groups.
- ``start_time``/``end_time`` are the earliest and latest message timestamps of the turn (``None``
  when no message has one): timestamps are not monotonic in resumed sessions, so first/last would lie.

Rendering turns into text and chunking them belongs to ``ingest``.
"""

from __future__ import annotations

from causantic.transcripts._system_text import prompt_text_of
from causantic.transcripts.model import Message, TextBlock, Transcript, Turn

__all__ = ["PROMPT_HEAD_CHARS", "assemble_turns", "prompt_of"]

PROMPT_HEAD_CHARS = 65_536  # how much of a prompt message a turn keeps as its prompt


def prompt_of(message: Message, head: int | None = None) -> str:
    """The prompt text `message` starts a turn with, or ``""`` when it is not a boundary.

    Slash commands with arguments read as ``"/name args"``; several text blocks are joined by a
    newline; image placeholders count as prompt text (a pasted screenshot is a request). `head`:
    read only each block's first `head` characters (a title needs no more of a pasted 50 MB line).
    """
    if message.role != "user" or message.is_meta:
        return ""
    parts = [prompt_text_of(block.text[:head]) for block in message.blocks if type(block) is TextBlock]
    return "\n".join(part for part in parts if part)


def assemble_turns(transcript: Transcript) -> list[Turn]:
    """Group `transcript`'s messages into turns (rules in the module docstring)."""
    turns: list[Turn] = []
    current: list[Message] = []
    prompt = ""
    for message in transcript.messages:
        # The head suffices for what a turn's prompt is read for (gating, titles); reading all of a
        # pasted 50 MB line would hold a second copy of it. Only a head of injected text alone is
        # no proof that the message is no prompt: then the whole text is read.
        text = prompt_of(message, PROMPT_HEAD_CHARS)
        if not text and any(type(b) is TextBlock and len(b.text) > PROMPT_HEAD_CHARS for b in message.blocks):
            text = prompt_of(message)[:PROMPT_HEAD_CHARS]
        if text:
            if current:
                turns.append(_turn(len(turns), prompt, current))
            current, prompt = [message], text
        else:
            current.append(message)
    if current:
        turns.append(_turn(len(turns), prompt, current))
    return turns


def _turn(index: int, prompt: str, messages: list[Message]) -> Turn:
    times = [m.timestamp for m in messages if m.timestamp is not None]
    return Turn(
        index=index,
        prompt=prompt,
        messages=tuple(messages),
        start_time=min(times) if times else None,
        end_time=max(times) if times else None,
    )
