"""Reading one Codex CLI rollout file (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

A rollout is one thread: a ``session_meta`` record (thread id, ``cwd``, and for a spawned agent its
parent thread), then records in the order Codex wrote them. Versions seen (Codex 0.47 → 0.146):

- **envelope** (0.44 on): ``{"timestamp", "type", "payload"}`` with ``type`` one of
  ``session_meta``, ``response_item`` (the model conversation: ``message``, ``reasoning``,
  ``function_call``/``_output``, ``custom_tool_call``/``_output``, ``local_shell_call``,
  ``web_search_call``, ``tool_search_call``/``_output``, ``ghost_snapshot``, ``agent_message``…),
  ``event_msg`` (UI events that repeat the items: ``user_message``, ``agent_message``,
  ``agent_reasoning``, ``token_count``, rate limits, ``collab_*``…), ``turn_context``,
  ``compacted``, ``world_state`` and ``fork_reference`` (a forked thread naming the rollout it
  continues, instead of copying it). Hand-written tools also wrote ``request_item``.
- **legacy** (before 0.44): the first line is the bare meta (``{"id", "timestamp",
  "instructions"}``), then bare items (``{"type": "message", …}``) and ``{"record_type": "state"}``.
- **drift**: items shaped ``tool_call``/``tool_result`` with ``function.name`` and object
  ``arguments``, and records with no ``type`` but a ``role``.

What becomes a message: ``response_item`` items only (``event_msg`` repeats them, so it is read only
for spawn links). User text Codex injects (``<environment_context>``, AGENTS.md instructions,
``<turn_aborted>``, ``<subagent_notification>``…) is marked ``is_meta``; ``developer``/``system``
messages are instructions and are skipped. Reasoning becomes :class:`ThinkingBlock` (summary text
only; ``encrypted_content`` is dropped), which is never indexed. A compaction's replacement history
repeats earlier items and is skipped. A ``thread_rolled_back`` event (the user went back to an
earlier prompt to edit it: Esc Esc) takes its last ``num_turns`` turns out of the thread, as Codex
does: they are kept as a rewound branch (:mod:`rewinds`). Several ``session_meta`` records in one
file (a resumed or forked thread) keep the first one's identity; a user's fork (``/fork``) names the
thread it copied in ``forked_from_id`` (:mod:`discovery` leaves the copy out). Damaged lines are
counted by :func:`~causantic.transcripts.reader.read_records`. A command output of many megabytes
stays in the file (:mod:`longvalue`), like a Claude Code one, when it is plain text or the older
``{"output", "metadata"}`` JSON form (its text read from inside the value); other JSON text and an
agent's answer are decoded whole.

Spawned agents: a ``spawn_agent`` call's output (``{"agent_id": …}``) or a
``collab_agent_spawn_end`` event names the new thread; the result message then carries
``tool_use_result = {"agentId": <thread>, "isAsync": True}`` so :mod:`causantic.ingest.subagents`
links the child rollout (whose meta names this thread as ``parent_thread_id``) by its rules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from causantic.transcripts.longvalue import HEAD_CHARS, TAIL_CHARS, LongValue, Placeholders, string_windows
from causantic.transcripts.model import (
    Block,
    Message,
    SkipReport,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Transcript,
)
from causantic.transcripts.reader import (
    SkipReason,
    as_array,
    as_object,
    as_str,
    line_uuid,
    loads,
    parse_time,
    read_records,
)

__all__ = ["SPAWN_TOOL", "RolloutMeta", "call_arguments", "is_rollout_head", "peek_rollout_meta", "read_rollout"]

SPAWN_TOOL = "spawn_agent"
_ENVELOPES = frozenset({"response_item", "request_item"})
_IGNORED = frozenset(
    {"turn_context", "event_msg", "world_state", "inter_agent_communication_metadata", "compacted", "fork_reference"}
)
_CALLS = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call", "tool_call"}
)
_OUTPUTS = frozenset(
    {"function_call_output", "custom_tool_call_output", "tool_search_output", "tool_result", "function_result"}
)
_OTHER_ITEMS = frozenset({"ghost_snapshot", "agent_message", "image_generation_call", "compaction"})
_ITEM_KINDS = frozenset({"message", "reasoning"}) | _CALLS | _OUTPUTS | _OTHER_ITEMS
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<turn_aborted>",
    "<subagent_notification>",
    "<app-context>",
    "<collaboration_mode>",
    "<skill>",
    "<user_shell_command>",
    "<INSTRUCTIONS>",
)
_HEAD_BYTES = 1 << 20  # a 0.14x session_meta line embeds the tool catalogue: up to a few hundred kB


@dataclass(frozen=True, slots=True)
class RolloutMeta:
    """What a rollout's first ``session_meta`` says about its thread."""

    thread_id: str | None = None
    cwd: str | None = None
    parent_thread_id: str | None = None  # set for a spawned (sub-)agent's thread
    forked_from: str | None = None  # the thread a user fork (``/fork``) copied its conversation from
    nickname: str | None = None
    role: str | None = None


def is_rollout_head(record: dict[str, Any]) -> bool:
    """True when ``record`` (a file's first record) starts a Codex rollout, in any version."""
    kind = record.get("type")
    if kind == "session_meta" or (kind in _ENVELOPES | _IGNORED and type(record.get("payload")) is dict):
        return True
    return kind is None and isinstance(record.get("id"), str) and "instructions" in record


def peek_rollout_meta(path: Path) -> RolloutMeta:
    """The meta of a rollout from its first line, reading as little as possible."""
    try:
        with path.open("rb") as f:
            line = f.readline(_HEAD_BYTES)
    except OSError:
        return RolloutMeta()
    try:
        record: Any = loads(line)
    except (ValueError, RecursionError):
        return RolloutMeta()
    return _meta_of(record) if type(record) is dict else RolloutMeta()


def read_rollout(
    path: Path, *, agent_id: str | None = None, session_id: str | None = None
) -> tuple[Transcript | None, RolloutMeta, SkipReport]:
    """Parse one rollout. `agent_id` reads it as the sub-agent stream of session `session_id` (a
    spawned thread whose parent rollout is ingested with it). None when it holds no message.

    Raises :class:`TranscriptError` only when the file cannot be read at all.
    """
    report = SkipReport()
    builder = _Builder(agent_id, report)
    for index, (line_no, sub, record) in enumerate(read_records(path, report, _long_values)):
        builder.add(record, line_no, sub, first=index == 0)
    meta = builder.meta or RolloutMeta()
    if not builder.messages:
        return None, meta, report
    transcript = Transcript(
        path=path,
        session_id=session_id or meta.thread_id or path.stem,
        agent_id=agent_id,
        messages=tuple(builder.finished(session_id or meta.thread_id or path.stem)),
        cwd=(cwd := meta.cwd or builder.context_cwd),
        source="codex",
        later_cwds=tuple(c for c in builder.context_cwds if c != cwd),
    )
    return transcript, meta, report


# --- records → messages -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Builder:
    agent_id: str | None
    report: SkipReport
    meta: RolloutMeta | None = None
    context_cwd: str | None = None
    context_cwds: list[str] = field(default_factory=list[str])  # every turn's cwd, in order (Transcript.later_cwds)
    messages: list[Message] = field(default_factory=list[Message])
    call_names: dict[str, str] = field(default_factory=dict[str, str])  # call id → tool name
    open_calls: list[ToolCall] = field(default_factory=list[ToolCall])  # calls without a result yet
    spawned: dict[str, str] = field(default_factory=dict[str, str])  # spawn call id → new thread id

    def add(self, record: dict[str, Any], line_no: int, sub: int, *, first: bool) -> None:
        kind = record.get("type")
        payload = as_object(record.get("payload"))
        when = parse_time(record.get("timestamp")) or parse_time(record.get("created_at"))
        if kind == "session_meta" and payload is not None:
            if self.meta is None:
                self.meta = _meta_of(record)
            else:  # a resumed or forked thread repeats its meta: the first one names the thread
                self.report.add(SkipReason.NON_MESSAGE)
        elif kind in _ENVELOPES and payload is not None:
            self._item(payload, when, line_no, sub)
        elif kind in _IGNORED:
            self._event(kind, payload)
            self.report.add(SkipReason.NON_MESSAGE)
        elif first and is_rollout_head(record):  # legacy: the bare meta line
            self.meta = _meta_of(record)
        elif payload is None and (kind in _ITEM_KINDS or (kind is None and "role" in record)):
            self._item(record, when, line_no, sub)  # legacy and drifted items have no envelope
        elif "record_type" in record:
            self.report.add(SkipReason.NON_MESSAGE)
        else:
            self.report.add(SkipReason.UNKNOWN_RECORD)

    def _event(self, kind: object, payload: dict[str, Any] | None) -> None:
        if payload is None:
            return
        if kind == "turn_context":
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd.startswith("/") and cwd not in self.context_cwds:
                self.context_cwds.append(cwd)
            if self.context_cwd is None:
                self.context_cwd = cwd if isinstance(cwd, str) and cwd.startswith("/") else None
        elif kind == "event_msg" and payload.get("type") == "collab_agent_spawn_end":
            call, thread = as_str(payload.get("call_id")), as_str(payload.get("new_thread_id"))
            if call and thread:
                self.spawned[call] = thread
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            turns = payload.get("num_turns")
            if type(turns) is int and turns > 0:
                self._roll_back(turns)

    def _roll_back(self, turns: int) -> None:
        """Mark the last ``turns`` turns, from the prompt that opened the first of them on, as a
        rewound branch (:mod:`rewinds`): Codex drops them from the thread (the user went back to an
        earlier prompt, to edit it), and they are told apart from it."""
        prompts = [
            i
            for i, m in enumerate(self.messages)
            if m.role == "user" and not m.is_meta and m.rewound is None and any(type(b) is TextBlock for b in m.blocks)
        ]
        if prompts:
            start = prompts[-min(turns, len(prompts))]
            branch = self.messages[start].uuid
            self.messages[start:] = [m if m.rewound else replace(m, rewound=branch) for m in self.messages[start:]]

    def _item(self, item: dict[str, Any], when: datetime | None, line_no: int, sub: int) -> None:
        kind = item.get("type") or ("message" if "role" in item else None)
        # Identity by position: item ids are optional and repeat when a thread is resumed or forked,
        # while a rollout only ever grows, so a line keeps its number (and its turn its chunk ids).
        uuid = line_uuid(line_no, sub)
        if kind == "message":
            self._message(item, when, line_no, uuid)
        elif kind == "reasoning":
            self._reasoning(item, when, line_no, uuid)
        elif kind in _CALLS:
            call = _call_of(item, kind, uuid)
            self.call_names[call.id] = call.name
            self.open_calls.append(call)
            self._append(uuid, "assistant", when, line_no, (call,))
        elif kind in _OUTPUTS:
            self._output(item, when, line_no, uuid)
        elif kind in _OTHER_ITEMS:
            self.report.add(SkipReason.NON_MESSAGE)
        else:
            self.report.add(SkipReason.UNKNOWN_RECORD)

    def _message(self, item: dict[str, Any], when: datetime | None, line_no: int, uuid: str) -> None:
        role = item.get("role")
        if role not in ("user", "assistant"):  # developer/system: instructions, not conversation
            self.report.add(SkipReason.NON_MESSAGE)
            return
        content = item.get("content")
        if content is None:
            content = item.get("message")
        blocks = _content_blocks(content)
        texts = [b.text for b in blocks if type(b) is TextBlock]
        injected = role == "user" and bool(texts) and all(t.lstrip().startswith(_INJECTED_PREFIXES) for t in texts)
        self._append(uuid, role, when, line_no, tuple(blocks), is_meta=injected)

    def _reasoning(self, item: dict[str, Any], when: datetime | None, line_no: int, uuid: str) -> None:
        parts = (as_array(item.get("summary")) or []) + (as_array(item.get("content")) or [])
        texts = [as_str(part.get("text")) for value in parts if (part := as_object(value)) is not None]
        self._append(uuid, "assistant", when, line_no, tuple(ThinkingBlock(t) for t in texts if t.strip()))

    def _output(self, item: dict[str, Any], when: datetime | None, line_no: int, uuid: str) -> None:
        call_id = as_str(item.get("call_id"))
        if not call_id:  # drifted results name their tool only: answer the latest open call of it
            name = as_str(item.get("name"))
            call_id = next((c.id for c in reversed(self.open_calls) if c.name == name), f"{uuid}-call")
        self.open_calls = [c for c in self.open_calls if c.id != call_id]
        raw = next((item[k] for k in ("output", "result", "tools") if k in item), None)
        tool = self.call_names.get(call_id)
        if isinstance(raw, LongValue):
            long = _long_output(call_id, raw) if tool not in (SPAWN_TOOL, "wait_agent") else None
            if long is not None:
                failed = long.is_error or item.get("success") is False
                self._append(uuid, "user", when, line_no, (replace(long, is_error=failed),))
                return
            raw = "".join(raw.text.windows())
        text, failed = _output_text(raw)
        spawned = None
        if tool == SPAWN_TOOL:
            spawned = self.spawned.get(call_id) or _spawned_thread(text)
        if tool in (SPAWN_TOOL, "wait_agent"):
            text = _agents_said(text) or text
        result = {"agentId": spawned, "isAsync": True} if spawned else None
        failed = failed or item.get("success") is False
        self._append(uuid, "user", when, line_no, (ToolResult(call_id, text, failed),), tool_use_result=result)

    def _append(
        self,
        uuid: str,
        role: str,
        when: datetime | None,
        line_no: int,
        blocks: tuple[Block, ...],
        *,
        is_meta: bool = False,
        tool_use_result: Any = None,
    ) -> None:
        if not blocks:
            self.report.add(SkipReason.EMPTY_MESSAGE)
            return
        self.messages.append(
            Message(
                uuid=uuid,
                role="user" if role == "user" else "assistant",
                timestamp=when,
                blocks=blocks,
                session_id="",
                line_no=line_no,
                agent_id=self.agent_id,
                is_sidechain=self.agent_id is not None,
                is_meta=is_meta,
                tool_use_result=tool_use_result,
            )
        )

    def finished(self, session_id: str) -> list[Message]:
        """The messages with their session id, and spawn results completed by later events."""
        out: list[Message] = []
        for m in self.messages:
            result = m.tool_use_result
            if result is None and m.role == "user":
                ids = {b.tool_use_id for b in m.blocks if type(b) is ToolResult}
                thread = next((self.spawned[i] for i in ids if i in self.spawned), None)
                result = {"agentId": thread, "isAsync": True} if thread else None
            out.append(replace(m, session_id=session_id, tool_use_result=result))
        return out


def _meta_of(record: dict[str, Any]) -> RolloutMeta:
    payload = as_object(record.get("payload")) or record
    source = as_object(payload.get("source")) or {}
    spawn = as_object((as_object(source.get("subagent")) or {}).get("thread_spawn")) or {}
    cwd = as_str(payload.get("cwd"))
    return RolloutMeta(
        thread_id=as_str(payload.get("id")) or as_str(payload.get("session_id")) or None,
        cwd=cwd if cwd.startswith("/") or cwd[1:3] == ":\\" else None,
        parent_thread_id=as_str(payload.get("parent_thread_id")) or as_str(spawn.get("parent_thread_id")) or None,
        forked_from=as_str(payload.get("forked_from_id")) or None,
        nickname=as_str(payload.get("agent_nickname")) or as_str(spawn.get("agent_nickname")) or None,
        role=as_str(payload.get("agent_role")) or as_str(spawn.get("agent_role")) or None,
    )


def _content_blocks(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [TextBlock(content)] if content.strip() else []
    blocks: list[Block] = []
    for value in as_array(content) or []:
        part = as_object(value)
        if part is None:
            continue
        kind = part.get("type")
        text = as_str(part.get("text"))
        if kind in ("input_text", "output_text", "text", "refusal") and text.strip():
            blocks.append(TextBlock(text))
        elif kind in ("reasoning", "reasoning_text", "summary_text") and text.strip():
            blocks.append(ThinkingBlock(text))
        elif kind in ("input_image", "image"):
            blocks.append(TextBlock("[image]"))
    return blocks


def _call_of(item: dict[str, Any], kind: str, uuid: str) -> ToolCall:
    function = as_object(item.get("function")) or {}
    name = (
        as_str(item.get("name"))
        or as_str(function.get("name"))
        or {
            "local_shell_call": "shell",
            "web_search_call": "web_search",
            "tool_search_call": "tool_search",
        }.get(kind, kind)
    )
    call_id = as_str(item.get("call_id")) or as_str(item.get("id")) or f"{uuid}-call"
    for key in ("arguments", "parameters", "input", "action"):
        if key in item:
            return ToolCall(call_id, name, call_arguments(item[key], key))
    return ToolCall(call_id, name, {})


def call_arguments(raw: Any, key: str) -> dict[str, Any]:
    """A call's input as an object: JSON text is parsed; other text (an apply_patch body) is kept whole."""
    if isinstance(raw, str):
        try:
            parsed: Any = loads(raw)
        except (ValueError, RecursionError):
            parsed = None
        obj = as_object(parsed)
        return obj if obj is not None else {key: raw}
    obj = as_object(raw)
    return obj if obj is not None else ({} if raw is None else {key: raw})


def _long_values(record: dict[str, Any], holes: Placeholders) -> dict[str, Any]:
    """A rollout record's long values put back (see :mod:`longvalue`): a tool's output stays in the
    file; events (which repeat what items say, and are read only for spawn links and rollbacks) keep
    their heads; any other long value is decoded whole."""
    payload = as_object(record.get("payload"))
    kind = record.get("type")
    item = payload if kind in _ENVELOPES else record if payload is None else None
    if item is not None and item.get("type") in _OUTPUTS:
        next((key for key in ("output", "result", "tools") if key in item and holes.lazy(item, key)), None)
    if kind in _IGNORED and payload is not None:
        record["payload"] = holes.put_back(payload, "head")
    return cast("dict[str, Any]", holes.put_back(record))


def _long_output(call_id: str, output: LongValue) -> ToolResult | None:
    """The result of a command output of many megabytes left in its file, without the header Codex
    writes before it (as :func:`_command_output` reads it), or (older versions) the text its JSON
    wraps (:func:`_long_wrapped_output`); None when it is to be decoded whole: other JSON text (read
    by :func:`_output_text`), or a header the output's head cannot tell apart."""
    if output.blank:
        return None
    if output.head.startswith("{"):
        return _long_wrapped_output(call_id, output)
    text, failed = _command_output(output.head)
    if not output.head.endswith(text):  # a running command's note in place of a blank output
        return None
    skip = len(output.head) - len(text)
    return ToolResult(call_id, text, failed, replace(output.text, skip=skip), output.tail)


_WRAPPED = re.compile(r'\{\s*"output"\s*:\s*"')  # how an older version's JSON output opens


def _long_wrapped_output(call_id: str, output: LongValue) -> ToolResult | None:
    """An older version's command output of many megabytes, JSON text ``{"output": "<text>",
    "metadata": {"exit_code": …}}``, left in its file: the text read a window at a time from inside
    the value (:func:`~causantic.transcripts.longvalue.string_windows`), once here for its length,
    head and tail, and what follows it for the exit code; as :func:`_output_text` reads it decoded
    whole. None for any other JSON (decoded whole)."""
    opened = _WRAPPED.match(output.head)
    if opened is None:
        return None
    source = replace(output.text, skip=opened.end())
    rest: list[str] = []
    head, tail, chars = "", "", 0
    try:
        for window in string_windows(source.windows(), rest):
            chars += len(window)
            if len(head) < HEAD_CHARS:
                head += window[: HEAD_CHARS - len(head)]
            tail = (tail + window[-TAIL_CHARS:])[-TAIL_CHARS:]
        wrapper: Any = loads('{"output":""' + "".join(rest))
    except (ValueError, RecursionError):
        return None
    obj = as_object(wrapper)
    if obj is None or obj.get("output") != "":  # another "output" after it: the last one counts
        return None
    code = (as_object(obj.get("metadata")) or {}).get("exit_code")
    failed = isinstance(code, int) and code != 0
    return ToolResult(call_id, head, failed, replace(source, inner=chars), tail)


def _output_text(raw: Any) -> tuple[str, bool]:
    """A tool output's text and whether it failed. Shell outputs are JSON text ``{"output",
    "metadata": {"exit_code"}}``; newer ones are plain text (a command's, after a header: see
    :func:`_command_output`) or a list of content parts."""
    if isinstance(raw, str):
        try:
            parsed: Any = loads(raw) if raw.startswith("{") else None
        except (ValueError, RecursionError):
            parsed = None
        obj = as_object(parsed)
        if obj is not None and isinstance(obj.get("output"), str):
            code = (as_object(obj.get("metadata")) or {}).get("exit_code")
            return obj["output"], isinstance(code, int) and code != 0
        return _command_output(raw)
    parts = as_array(raw)
    if parts is not None:
        texts = [as_str(p.get("text")) if (p := as_object(v)) is not None else as_str(v) for v in parts]
        return "\n".join(t for t in texts if t), False
    obj = as_object(raw)
    if obj is not None:
        if isinstance(obj.get("content"), str):
            return obj["content"], obj.get("success") is False
        return json.dumps(obj, ensure_ascii=False), False
    return ("" if raw is None else str(raw)), False


# The header Codex puts before a command's output (exec_command, write_stdin, shell_command):
# ``Chunk ID: e63726`` / ``Wall time: 0.0000 seconds`` / ``Process exited with code 0`` (or ``Exit
# code: 0``, or ``Process running with session ID 27523``) / ``Original token count: 9`` /
# ``Output:``. Bookkeeping for the model, not what the command said: only the exit code is kept.
_HEADER_LINE = re.compile(
    r"(?:Chunk ID: \S+|Wall time: [\d.]+ seconds|Process exited with code (?P<code>-?\d+)"
    r"|Exit code: (?P<code2>-?\d+)|Process running with session ID (?P<running>\S+)|Original token count: \d+"
    r"|Total output lines: \d+)\n"
)


def _command_output(text: str) -> tuple[str, bool]:
    """A command's output without the header Codex writes before it, and whether it exited non-zero;
    text without that header is returned whole."""
    index, code, running = 0, None, None
    while (line := _HEADER_LINE.match(text, index)) is not None:
        found = line.group("code") or line.group("code2")
        code = int(found) if found is not None else code
        running = line.group("running") or running
        index = line.end()
    if index == 0 or not text.startswith("Output:", index):
        return text, False
    output = text[index + len("Output:") :].removeprefix("\n")
    if running and not output.strip():
        output = f"(still running as session {running})"
    return output, code not in (None, 0)


def _agents_said(output: str) -> str | None:
    """A spawn_agent or wait_agent output in words: ``started Hubble (019e-child-1)``,
    ``019e-child-1 completed: Here is the poem``; None for any other output."""
    try:
        parsed: Any = loads(output) if output.startswith("{") else None
    except (ValueError, RecursionError):
        return None
    obj = as_object(parsed) or {}
    if isinstance(obj.get("agent_id"), str) and set(obj) <= {"agent_id", "nickname"}:
        nickname = as_str(obj.get("nickname"))
        return f"started {nickname} ({obj['agent_id']})" if nickname else f"started {obj['agent_id']}"
    statuses = as_object(obj.get("status"))
    if statuses is None:
        return None
    said: list[str] = []
    for agent, value in statuses.items():
        state = as_object(value)
        said += [f"{agent} {kind}: {as_str(text)}".rstrip(": ") for kind, text in (state or {}).items()] or [agent]
    return "; ".join(said) + ("; timed out" if obj.get("timed_out") is True else "")


def _spawned_thread(output: str) -> str | None:
    try:
        parsed: Any = loads(output)
    except (ValueError, RecursionError):
        return None
    obj = as_object(parsed)
    return (as_str(obj.get("agent_id")) or None) if obj is not None else None
