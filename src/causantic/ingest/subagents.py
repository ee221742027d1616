"""Sub-agent streams: which ones to keep, which call started each one, and their brief/debrief edges.

Every sub-agent stream of a session falls in one of five kinds:

- **stub** — a dead-end file: no assistant message and at most 2 lines (Claude Code writes one
  when several messages reach an agent at once, or when a start is abandoned). Not ingested.
- **warm-up** — first prompt ``Warmup``: Claude Code 2.0.x warms the prompt cache of each agent
  type at start-up, and the reply is boilerplate. Not ingested, and not a spawned sub-agent. Some
  2.0.x files hold only the reply (the ``Warmup`` line was never written): a sub-agent file with no
  prompt at all and a single assistant message that calls no tool is a warm-up too. A real sub-agent
  always starts from a prompt, and one reply without a tool call is only a greeting
  (daaain ``real_projects/-Users-dain-workspace-JSSoundRecorder/agent-*.jsonl``).
- **prompt suggestion** — ``aprompt_suggestion-…`` (first prompt ``[SUGGESTION MODE: …``): Claude
  Code guesses the user's next prompt after each reply. The stream is its 1 kB instruction, a copy of
  the last reply and a 2–12 word guess the user may never have typed (randlee
  ``claude-history-*/export/source/agents/agent-aprompt_suggestion-*.jsonl``). Not ingested.
- **spawned** — started by a tool call (``Task``, ``Agent``, Codex CLI's ``spawn_agent``, Gemini CLI's
  ``invoke_agent``, or ``Workflow`` for its run's agents) in the main stream or in another sub-agent's
  stream. Linked by brief/debrief, or by team edges when the call makes it a teammate (:mod:`teams`).
- **ambient** — run by Claude Code itself with no tool call: compaction (``acompact-…``; its
  instruction reads as one line, see :mod:`causantic.transcripts._system_text`, and its summary
  restates the session's work) and any other stream no call claims. Linked by the
  *ambient* rule: brief from the main chunk it forked from, debrief into the main chunk that
  followed it — by file position for an inline sidechain, by time (within ``graph.timeGapMinutes``)
  for a separate file. A compaction's summary thus leads into the continued conversation. An attempt
  the user rewound past (``rewound-…``, :mod:`causantic.transcripts.rewinds`) is linked the same way:
  from the turn it branched off to the turn typed after going back. It is never a stub: a prompt
  the user went back from before any reply is still something they asked.

Which call started a stream — the first rule that answers wins, and a call starts one stream
(a ``Workflow`` call starts all the agents of its run):

1. ``meta``: the stream's ``agent-<id>.meta.json`` records the call's id (``toolUseId``);
2. ``result``: the call's result names the agent (``toolUseResult.agentId``, or ``agentId: <id>``
   in the text);
3. ``progress``: an ``agent_progress`` record pairs the agent with its ``parentToolUseID``;
4. ``workflow``: a ``Workflow`` call's result names the run folder the agent's file lies in;
5. ``prompt``: the stream's first prompt equals the call's ``prompt`` (or starts with its first 200
   characters) — inline sidechains and old files;
6. ``description``: the ``.meta.json`` description equals the call's, and only one open call has it;
7. ``time``: the stream started between the call and its result; the latest such call wins.

Edges (chunk ids, never turn indices, so streams that restart turn numbering cannot mix):

- brief: the chunk holding the call → the stream's first chunk;
- debrief: the stream's last chunk → where its result reached the caller: for a background agent the
  ``<task-notification>`` (Codex: ``<subagent_notification>``) naming it, else the call's result;
  failing both, the caller's first chunk after the spawning one that starts once the agent has
  ended (within the time gap).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from causantic.ingest.streams import PlannedStream
from causantic.sources import SPAWN_TOOLS
from causantic.store.records import EdgeRecord, parse_iso
from causantic.transcripts import SUGGESTION_PROMPT_OPENING
from causantic.transcripts.model import TextBlock, ToolCall, ToolResult, Transcript
from causantic.transcripts.rewinds import REWOUND_PREFIX
from causantic.transcripts.turns import prompt_of

WORKFLOW_TOOL = "Workflow"
WARMUP_PROMPT = "Warmup"
STUB_MAX_LINES = 2
_AGENT_ID_IN_TEXT = re.compile(r"agentId:\s*([A-Za-z0-9_\-]+)")
_TASK_NOTIFICATION = re.compile(r"<task-notification>.*?<task-id>\s*([^<\s]+)\s*</task-id>", re.DOTALL)
# Codex CLI's equivalent: <subagent_notification>{"agent_path": "<thread id>", "status": …}
_CODEX_NOTIFICATION = re.compile(r'<subagent_notification>\s*\{[^<]*?"agent_path"\s*:\s*"([^"]+)"')
_ASYNC_STATUSES = frozenset({"async_launched", "spawned", "teammate_spawned"})
# Agents Claude Code runs on its own, recognised by their id prefix; the value is the agent label.
_PROMPT_SUGGESTION = "aprompt_suggestion-"
_AMBIENT_PREFIXES = {"acompact-": "compaction", _PROMPT_SUGGESTION: "prompt-suggestion", REWOUND_PREFIX: "rewound"}


@dataclass(frozen=True, slots=True)
class Spawn:
    """A tool call that starts sub-agents, with what its result said about them."""

    call_id: str
    tool: str
    input: dict[str, Any]
    owner: str | None  # agent id of the stream holding the call; None for the main stream
    called_at: datetime | None
    returned_at: datetime | None
    result_agent_id: str | None  # from toolUseResult or the result text
    result_name: str | None  # a teammate name the result reports (toolUseResult.name)
    run_id: str | None  # a Workflow run: its agents' files lie in a folder of this name
    is_async: bool  # the result only says it started; the outcome arrives later

    def text(self, key: str) -> str:
        value = self.input.get(key)
        return value.strip() if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class Link:
    spawn: Spawn
    rule: str  # which rule of the module docstring paired them


@dataclass(frozen=True, slots=True)
class Triage:
    kept: list[Transcript]  # the sub-agent streams worth ingesting
    skipped: Counter[str]  # how many were left out, by kind (stub, warm-up, prompt-suggestion)
    skipped_ids: tuple[str, ...]  # agent ids of those left out, so a store can drop what it kept of them


def triage(subagents: Sequence[Transcript], main_path: Path | None) -> Triage:
    """Sort a session's sub-agent streams into those to ingest and those to skip (stubs, warm-ups,
    prompt suggestions)."""
    kept: list[Transcript] = []
    skipped: Counter[str] = Counter()
    skipped_ids: list[str] = []
    for sub in subagents:
        if _is_stub(sub, inline=sub.path == main_path) and not (sub.agent_id or "").startswith(REWOUND_PREFIX):
            skipped["stub"] += 1
        elif _is_warm_up(sub):
            skipped["warm-up"] += 1
        elif _is_prompt_suggestion(sub):
            skipped["prompt-suggestion"] += 1
        else:
            kept.append(sub)
            continue
        if sub.agent_id:
            skipped_ids.append(sub.agent_id)
    return Triage(kept, skipped, tuple(skipped_ids))


def find_spawns(streams: Sequence[Transcript]) -> list[Spawn]:
    """Every spawning call in ``streams`` (main and sub-agent streams alike), in stream order."""
    spawns: list[Spawn] = []
    for stream in streams:
        calls: dict[str, tuple[ToolCall, datetime | None]] = {}
        results: dict[str, tuple[datetime | None, Any, str]] = {}
        for message in stream.messages:
            for block in message.blocks:
                if isinstance(block, ToolCall) and (block.name in SPAWN_TOOLS or block.name == WORKFLOW_TOOL):
                    calls[block.id] = (block, message.timestamp)
                elif isinstance(block, ToolResult) and block.tool_use_id not in results:
                    results[block.tool_use_id] = (message.timestamp, message.tool_use_result, block.tail or block.text)
        for call_id, (call, called_at) in calls.items():
            returned_at, raw, text = results.get(call_id, (None, None, ""))
            info: dict[str, Any] = raw if isinstance(raw, dict) else {}
            spawns.append(
                Spawn(
                    call_id=call_id,
                    tool=call.name,
                    input=call.input,
                    owner=stream.agent_id,
                    called_at=called_at,
                    returned_at=returned_at,
                    result_agent_id=_text(info.get("agentId")) or _agent_id_in(text),
                    result_name=_text(info.get("name")),
                    run_id=_text(info.get("runId")) or _folder_name(info.get("transcriptDir")),
                    is_async=info.get("isAsync") is True
                    or info.get("status") in _ASYNC_STATUSES
                    or call.input.get("run_in_background") is True,
                )
            )
    return spawns


def link_subagents(streams: Sequence[Transcript], spawns: Sequence[Spawn]) -> dict[str, Link]:
    """Map each sub-agent stream's agent id to the call that started it, when one is found."""
    subs = [s for s in streams if s.agent_id and not is_ambient(s)]
    by_call = {s.call_id: s for s in spawns}
    links: dict[str, Link] = {}
    used: set[str] = set()

    def claim(agent_id: str, spawn: Spawn | None, rule: str, *, shared: bool = False) -> None:
        if spawn is None or agent_id in links or spawn.owner == agent_id or (spawn.call_id in used and not shared):
            return
        links[agent_id] = Link(spawn, rule)
        used.add(spawn.call_id)

    for sub in subs:
        if sub.meta is not None and sub.meta.tool_use_id:
            claim(sub.agent_id or "", by_call.get(sub.meta.tool_use_id), "meta")
    ids = {s.agent_id for s in subs}
    for spawn in spawns:
        if spawn.result_agent_id in ids:
            claim(spawn.result_agent_id or "", spawn, "result")
    for stream in streams:
        for progress in stream.progress:
            if progress.agent_id in ids:
                claim(progress.agent_id, by_call.get(progress.parent_tool_use_id), "progress")
    workflows = {s.run_id: s for s in spawns if s.tool == WORKFLOW_TOOL and s.run_id}
    for sub in subs:
        claim(sub.agent_id or "", workflows.get(sub.path.parent.name), "workflow", shared=True)
    for sub in subs:
        prompt = _normalise(first_prompt(sub))
        if prompt and sub.agent_id not in links:
            for spawn in spawns:
                wanted = _normalise(spawn.text("prompt"))
                if wanted and spawn.call_id not in used and prompt.startswith(wanted[:200]):
                    claim(sub.agent_id or "", spawn, "prompt")
                    break
    for sub in subs:
        described = sub.meta.description if sub.meta is not None else None
        if described and sub.agent_id not in links:
            matching = [s for s in spawns if s.call_id not in used and s.text("description") == described]
            if len(matching) == 1:
                claim(sub.agent_id or "", matching[0], "description")
    for sub in subs:
        started = _first_time(sub)
        if sub.agent_id in links or started is None:
            continue
        window = [
            s
            for s in spawns
            if s.call_id not in used
            and s.tool != WORKFLOW_TOOL
            and s.called_at is not None
            and s.called_at <= started
            and (s.returned_at is None or started <= s.returned_at)
        ]
        if window:
            claim(sub.agent_id or "", max(window, key=lambda s: s.called_at or started), "time")
    return links


def is_ambient(sub: Transcript) -> bool:
    """True for a stream no call starts: an agent Claude Code runs on its own (compaction, prompt
    suggestion), or an attempt the user rewound past."""
    return (sub.agent_id or "").startswith(tuple(_AMBIENT_PREFIXES))


def agent_label(sub: Transcript, spawn: Spawn | None) -> str:
    """What an ordinary (not team) sub-agent's chunks are attributed to: its type, else its kind."""
    # agent_type: Codex CLI's spawn_agent; agent_name: Gemini CLI's invoke_agent
    if spawn is not None and (
        kind := spawn.text("subagent_type") or spawn.text("agent_type") or spawn.text("agent_name")
    ):
        return kind
    if sub.meta is not None and sub.meta.agent_type:
        return sub.meta.agent_type
    for prefix, label in _AMBIENT_PREFIXES.items():
        if (sub.agent_id or "").startswith(prefix):
            return label
    return "workflow" if spawn is not None and spawn.tool == WORKFLOW_TOOL else "subagent"


# ---- edges ----------------------------------------------------------------------------------------


def brief_debrief(
    caller: PlannedStream,
    sub: PlannedStream,
    spawn: Spawn,
    window: timedelta,
    *,
    kinds: tuple[str, str] = ("brief", "debrief"),
    guess_return: bool = True,
) -> list[EdgeRecord]:
    """Edges between a sub-agent and the stream whose call started it (rules in the module docstring).

    ``kinds`` names the two edges; teams use ("team-spawn", "team-report") and no time guess for
    the return, since a teammate reports by message.
    """
    there, back = kinds
    edges: list[EdgeRecord] = []
    spawned_at = caller.chunk_with_call(spawn.call_id)
    if spawned_at is not None:
        edges.append(EdgeRecord(caller.records[spawned_at].id, sub.records[0].id, there))
    returned_at = return_chunk(caller, sub, spawn, spawned_at, window, guess=guess_return)
    if returned_at is not None:
        edges.append(EdgeRecord(sub.records[-1].id, caller.records[returned_at].id, back))
    return edges


def return_chunk(
    caller: PlannedStream,
    sub: PlannedStream,
    spawn: Spawn,
    spawned_at: int | None,
    window: timedelta,
    *,
    guess: bool = True,
) -> int | None:
    """Where a sub-agent's outcome reached its caller (see the debrief rule); ``guess``: fall back
    on timing when the transcript does not say."""
    if spawn.is_async:
        notified = next(
            (
                m.uuid
                for m in caller.transcript.messages
                if m.role == "user" and sub.agent_id in _notified_ids(m.blocks)
            ),
            None,
        )
        if notified is not None:
            return caller.chunk_with_message(notified)
    else:
        found = caller.chunk_with_result(spawn.call_id)
        if found is not None:
            return found
    if not guess:
        return None
    after = spawned_at if spawned_at is not None else -1
    ended = sub.ended
    later = [
        (parse_iso(r.start_time), i)
        for i, r in enumerate(caller.records)
        if i > after and ended <= parse_iso(r.start_time) <= ended + window
    ]
    return min(later)[1] if later else None


def ambient_edges(main: PlannedStream, sub: PlannedStream, window: timedelta) -> list[EdgeRecord]:
    """Brief/debrief for a stream no call started (the ambient rule of the module docstring)."""
    if sub.transcript.path == main.transcript.path:
        lines = [m.line_no for m in sub.transcript.messages]
        forked, resumed = main.chunk_before_line(min(lines)), main.chunk_after_line(max(lines))
    else:
        forked, resumed = main.chunk_at(sub.started, window), main.first_chunk_from(sub.ended, window)
    edges = []
    if forked is not None:
        edges.append(EdgeRecord(main.records[forked].id, sub.records[0].id, "brief"))
    if resumed is not None:
        edges.append(EdgeRecord(sub.records[-1].id, main.records[resumed].id, "debrief"))
    return edges


# ---- helpers --------------------------------------------------------------------------------------


def first_prompt(transcript: Transcript) -> str:
    """The first prompt a stream was given (harness-injected text left out), stripped."""
    return next((p for m in transcript.messages if (p := prompt_of(m))), "").strip()


def _is_stub(sub: Transcript, *, inline: bool) -> bool:
    if any(m.role == "assistant" for m in sub.messages):
        return False
    if inline:
        return len(sub.messages) <= STUB_MAX_LINES
    try:
        with sub.path.open("rb") as handle:
            return sum(1 for line in handle if line.strip()) <= STUB_MAX_LINES
    except OSError:
        return True  # unreadable now: nothing worth keeping


def _is_warm_up(sub: Transcript) -> bool:
    prompt = first_prompt(sub)
    if prompt:
        return prompt == WARMUP_PROMPT
    if is_ambient(sub):
        return False  # compaction and prompt suggestion run without a prompt of their own
    replies = [m for m in sub.messages if m.role == "assistant"]
    return len(replies) == 1 and not any(isinstance(b, ToolCall) for b in replies[0].blocks)


def _is_prompt_suggestion(sub: Transcript) -> bool:
    return (sub.agent_id or "").startswith(_PROMPT_SUGGESTION) or first_prompt(sub).startswith(
        SUGGESTION_PROMPT_OPENING
    )


def _notified_ids(blocks: Sequence[object]) -> set[str]:
    return {
        match.group(1)
        for block in blocks
        if isinstance(block, TextBlock)
        for pattern in (_TASK_NOTIFICATION, _CODEX_NOTIFICATION)
        for match in pattern.finditer(block.text)
    }


def _agent_id_in(text: str) -> str | None:
    match = _AGENT_ID_IN_TEXT.search(text[-400:]) if text else None
    return match.group(1) if match else None


def _folder_name(value: object) -> str | None:
    return Path(value).name or None if isinstance(value, str) and value else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _first_time(transcript: Transcript) -> datetime | None:
    return next((m.timestamp for m in transcript.messages if m.timestamp is not None), None)


def _normalise(text: str) -> str:
    return " ".join(text.split())
