"""Which tool call spawned which sub-agent stream.

Claude Code has recorded the link in several ways over its versions; the first that answers wins:

1. the spawning call's result record carries ``toolUseResult.agentId`` (current versions);
2. an ``agent_progress`` record names the agent and its ``parentToolUseID``;
3. the result text says ``agentId: <id>``;
4. the sub-agent's first prompt equals the call's ``prompt`` input (inline sidechains, old files);
5. the sub-agent started between the call and its result, closest start first.

Both spawn tool names are recognised: ``Task`` and ``Agent`` (Claude Code renamed one to the other).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from causantic.ingest.render import SPAWN_TOOLS
from causantic.transcripts.model import TextBlock, ToolCall, ToolResult, Transcript

_AGENT_ID_IN_TEXT = re.compile(r"agentId:\s*([A-Za-z0-9_\-]+)")


@dataclass(frozen=True, slots=True)
class Spawn:
    call_id: str
    tool: str
    input: dict[str, object]
    called_at: datetime | None
    returned_at: datetime | None
    result_agent_id: str | None  # from toolUseResult or the result text


def find_spawns(main: Transcript) -> list[Spawn]:
    calls: dict[str, tuple[ToolCall, datetime | None]] = {}
    results: dict[str, tuple[datetime | None, str | None]] = {}
    for message in main.messages:
        for block in message.blocks:
            if isinstance(block, ToolCall) and block.name in SPAWN_TOOLS:
                calls[block.id] = (block, message.timestamp)
            elif isinstance(block, ToolResult) and block.tool_use_id not in results:
                agent_id = _agent_id_from_result(message.tool_use_result, block.text)
                results[block.tool_use_id] = (message.timestamp, agent_id)
    spawns = []
    for call_id, (call, called_at) in calls.items():
        returned_at, agent_id = results.get(call_id, (None, None))
        spawns.append(Spawn(call_id, call.name, call.input if isinstance(call.input, dict) else {},
                            called_at, returned_at, agent_id))
    return spawns


def link_subagents(main: Transcript, spawns: list[Spawn], subagents: list[Transcript]) -> dict[str, Spawn]:
    """Map each sub-agent stream's agent id to the spawn that started it (when one is found)."""
    by_call = {s.call_id: s for s in spawns}
    links: dict[str, Spawn] = {}
    used: set[str] = set()

    def claim(agent_id: str, spawn: Spawn | None) -> None:
        if spawn is not None and agent_id not in links and spawn.call_id not in used:
            links[agent_id] = spawn
            used.add(spawn.call_id)

    agent_ids = [s.agent_id for s in subagents if s.agent_id]
    for spawn in spawns:
        if spawn.result_agent_id in agent_ids:
            claim(spawn.result_agent_id, spawn)
    for progress in main.progress:
        if progress.agent_id in agent_ids:
            claim(progress.agent_id, by_call.get(progress.parent_tool_use_id))
    for sub in subagents:
        if not sub.agent_id or sub.agent_id in links:
            continue
        prompt = _normalise(_first_prompt(sub))
        if prompt:
            for spawn in spawns:
                wanted = _normalise(str(spawn.input.get("prompt") or ""))
                if wanted and spawn.call_id not in used and (prompt == wanted or prompt.startswith(wanted[:200])):
                    claim(sub.agent_id, spawn)
                    break
    for sub in subagents:
        if not sub.agent_id or sub.agent_id in links:
            continue
        started = _first_time(sub)
        if started is None:
            continue
        window = [
            s for s in spawns
            if s.call_id not in used and s.called_at is not None and s.called_at <= started
            and (s.returned_at is None or started <= s.returned_at)
        ]
        if window:
            claim(sub.agent_id, max(window, key=lambda s: s.called_at or started))
    return links


def _agent_id_from_result(tool_use_result: object, text: str) -> str | None:
    if isinstance(tool_use_result, dict):
        value = tool_use_result.get("agentId")
        if isinstance(value, str) and value:
            return value
    match = _AGENT_ID_IN_TEXT.search(text[-400:]) if text else None
    return match.group(1) if match else None


def _first_prompt(transcript: Transcript) -> str:
    for message in transcript.messages:
        if message.role == "user" and not message.is_meta:
            texts = [b.text for b in message.blocks if isinstance(b, TextBlock)]
            if texts:
                return "\n".join(texts)
    return ""


def _first_time(transcript: Transcript) -> datetime | None:
    return next((m.timestamp for m in transcript.messages if m.timestamp is not None), None)


def _normalise(text: str) -> str:
    return " ".join(text.split())
