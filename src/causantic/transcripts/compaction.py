"""The main conversation's records a compaction agent's file holds, given back to the conversation.

Claude Code 2.1.x compacts a conversation with an agent of its own, whose file
(``<session>/subagents/agent-acompact-<6 hex>.jsonl``) holds Claude Code's instruction to summarise
and the summary, and, before them, records of the conversation being compacted that the session's
own file does not hold under their uuids. Seen in the corpus (2.1.29 and 2.1.39; marot ``spotter``,
randlee ``claude-history``), 26 such records in 7 of its 9 compaction files:

- hook notes (``<system-reminder>PostToolUse:Edit hook additional context…``, ``isMeta``), whose
  text the session's file does not hold at all (only progress records naming the hook); each one's
  ``parentUuid`` is a record of that file;
- the result of the tool call the compaction cut into: randlee ``967e501d``'s file has the ``Read``
  call and no result; the result is only in the compaction's file, and the session file's
  ``compact_boundary`` names it as its ``logicalParentUuid``.

The instruction's ``parentUuid`` is the conversation's last record (the boundary's
``logicalParentUuid`` in 5 of the 6 compactions whose session file is present), so everything
before the instruction is the conversation's, not the compaction's. Read as the compaction's own,
those records made chunks of it (``[Result:tool] …`` with no prompt and no tool name: 3 in the
corpus), apart from the turn whose call they answer.

Rules (:func:`give_back_carried`): in a sub-agent stream whose first prompt is the compaction
instruction, the messages before it (none of them a prompt) leave that stream for the conversation
compacted: the stream holding the record the instruction continues (its ``parentUuid``), else one a
carried record continues, else the main stream. That is a sub-agent's own stream when the sub-agent
was compacted (none in the corpus; a written test), the main stream in every corpus file. One that
stream holds already (the same uuid, or the same role and blocks: none in the corpus) is a copy and
is dropped; any other joins it after the last of its messages written no later than it (by
timestamp: a merged assistant message answers to the uuid of its first record only, so its place
cannot always be found by ``parentUuid``), or at its end when it has no time. The conversation holds
each record once, in place: the randlee result joins the turn of its ``Read`` call; the hook notes
are harness text, which memory never keeps, wherever they stand. When the conversation compacted is
the main one and the session's own file is absent (randlee's ``claude-history-subagents`` export
has none), nothing says whether they are copies and there is no conversation to put them in: they
stay where they are (2 chunks in the corpus). A main stream made of them alone would span hours
between two compactions, and the timing rule would link every agent started meanwhile to it.
"""

from __future__ import annotations

from dataclasses import replace

from causantic.transcripts._system_text import COMPACTION_LINE
from causantic.transcripts.model import Message, Transcript
from causantic.transcripts.turns import prompt_of

__all__ = ["give_back_carried"]


def give_back_carried(
    main: Transcript | None, subagents: tuple[Transcript, ...]
) -> tuple[Transcript | None, tuple[Transcript, ...], int]:
    """The session's main stream and sub-agent streams with the conversation's records moved out of
    compaction streams (the rules in the module docstring), and how many were dropped as copies."""
    streams: list[Transcript | None] = [main, *subagents]
    copies = 0
    for k in range(1, len(streams)):
        sub = streams[k]
        cut = _instruction_at(sub) if sub is not None else 0
        if sub is None or not cut:
            continue
        carried = sub.messages[:cut]
        owner = _owner(streams, k, (sub.messages[cut], *reversed(carried)))
        target = streams[owner]
        if target is None:  # the compacted conversation's own file is absent: nowhere to put them
            continue
        streams[k] = replace(sub, messages=sub.messages[cut:])
        messages = list(target.messages)
        for message in carried:
            if any(_same(message, held) for held in messages):
                copies += 1
                continue
            at = _place(messages, message)
            # Its line is that of the message it follows: the stream's messages stay in file order.
            line = messages[at - 1].line_no if at else 0
            messages.insert(
                at,
                replace(
                    message,
                    session_id=target.session_id,
                    line_no=line,
                    agent_id=target.agent_id,
                    is_sidechain=target.agent_id is not None,
                ),
            )
        streams[owner] = replace(target, messages=tuple(messages))
    kept = tuple(s for s in streams[1:] if s is not None)
    return streams[0], kept, copies


def _owner(streams: list[Transcript | None], compaction: int, messages: tuple[Message, ...]) -> int:
    """Index in ``streams`` of the conversation a compaction summarised: the stream holding the record
    its instruction, or else one of the records it carries, continues (a sub-agent compacted on its
    own); the main stream (index 0) when none does."""
    held = [{m.uuid for m in s.messages} if s is not None and i != compaction else set() for i, s in enumerate(streams)]
    for message in messages:
        for index, uuids in enumerate(held):
            if message.parent_uuid in uuids:
                return index
    return 0


def _instruction_at(transcript: Transcript) -> int:
    """Index of a sub-agent stream's first prompt when it is Claude Code's compaction instruction;
    0 when it is another prompt (an agent compacted after its own task), none, or comes first."""
    if transcript.agent_id is None:
        return 0
    for index, message in enumerate(transcript.messages):
        if prompt := prompt_of(message, 256):
            return index if prompt == COMPACTION_LINE else 0
    return 0


def _same(carried: Message, held: Message) -> bool:
    return carried.uuid == held.uuid or (carried.role == held.role and carried.blocks == held.blocks)


def _place(messages: list[Message], message: Message) -> int:
    """Where ``message`` goes among ``messages``: after the last one written no later than it; at the
    start when all are later, at the end when it has no time."""
    if message.timestamp is None:
        return len(messages)
    moment = message.timestamp
    return next(
        (i + 1 for i in range(len(messages) - 1, -1, -1) if (t := messages[i].timestamp) is not None and t <= moment),
        0,
    )
