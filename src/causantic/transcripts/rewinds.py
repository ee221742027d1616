"""Abandoned attempts: what the user rewound past, kept as history beside the main line.

Every agent lets the user go back to an earlier prompt and try again: Claude Code's ``/rewind``
(Esc Esc), Codex CLI's backtrack (``thread_rolled_back``), Gemini CLI's ``/rewind`` (``$rewindTo``),
Pi's ``/tree`` (a new branch of its entry tree). The turns gone back over are no longer part of the
conversation the agent resumes, yet they happened: "how did we fix X" may be answered by an attempt
that failed. One rule for all of them: the readers mark such messages with the branch they belong to
(:attr:`~causantic.transcripts.model.Message.rewound`), and :func:`split_rewound` moves each
branch into a stream of its own, ``rewound-<id>`` (label ``rewound``), so that it is kept and
searchable but never told as part of the main line: ingest links it as an ambient stream, from the
main chunk it branched off to the main chunk that followed it (:mod:`causantic.ingest.subagents`).

:func:`mark_claude_rewinds` finds Claude Code's rewinds, which its files record only through
``parentUuid``: a prompt whose parent record lies before other prompts of the same stream was typed
after going back past them.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace

from causantic.transcripts.model import AgentMeta, Message, Transcript
from causantic.transcripts.turns import PROMPT_HEAD_CHARS, prompt_of

__all__ = ["REWOUND_PREFIX", "mark_claude_rewinds", "split_rewound"]

REWOUND_PREFIX = "rewound-"
_META = AgentMeta(agent_type="rewound", description="an attempt the user rewound past")


def mark_claude_rewinds(messages: tuple[Message, ...], line_of: dict[str, int]) -> tuple[Message, ...]:
    """`messages` (one Claude Code main stream, in file order) with those a later prompt went back
    past marked as rewound. `line_of` gives the file line of every record uuid (messages or not:
    a prompt's parent is often a system or attachment record).

    A prompt whose parent lies at an earlier line than the stream's messages before it, with at
    least one other prompt among those, was typed after a rewind: those messages are the abandoned
    branch. A resumed session, a compaction (no parent) and tool results (parallel calls branch
    the tree as well) never match: only a prompt going back past a prompt does.
    """
    marked = list(messages)
    lines = [m.line_no for m in messages]  # ascending: a stream keeps its records' file order
    for i, message in enumerate(messages):
        start = line_of.get(message.parent_uuid or "") if message.role == "user" else None
        if start is None:
            continue
        gone = [j for j in range(bisect_right(lines, start, 0, i), i) if marked[j].rewound is None]
        if (
            gone
            and prompt_of(message, PROMPT_HEAD_CHARS)
            and any(prompt_of(messages[j], PROMPT_HEAD_CHARS) for j in gone)
        ):
            branch = messages[gone[0]].uuid[:8]
            for j in gone:
                marked[j] = replace(marked[j], rewound=branch)
    return tuple(marked)


def split_rewound(transcript: Transcript | None) -> tuple[Transcript | None, list[Transcript]]:
    """The main line of `transcript` and one stream per branch it marks as rewound (in the order
    they began); None for the main line when every message was rewound past."""
    if transcript is None or all(m.rewound is None for m in transcript.messages):
        return transcript, []
    main = tuple(m for m in transcript.messages if m.rewound is None)
    branches: dict[str, list[Message]] = {}
    for m in transcript.messages:
        if m.rewound is not None:
            agent = REWOUND_PREFIX + m.rewound
            branches.setdefault(agent, []).append(replace(m, agent_id=agent, is_sidechain=True))
    streams = [
        replace(transcript, agent_id=agent, messages=tuple(found), progress=(), meta=_META)
        for agent, found in branches.items()
    ]
    return (replace(transcript, messages=main) if main else None), streams
