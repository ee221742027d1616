"""Reading the session files of GitHub Copilot CLI, Cursor's agent, Factory Droid and Pi.

Each is one JSON-lines file per session, told apart by its first line (:func:`source_of_line`):

- **Copilot CLI** (``~/.copilot/session-state/<session id>/events.jsonl``): an event log, each line
  ``{type, data, id, timestamp, parentId}``. ``session.start`` names the session and its ``cwd``;
  ``user.message`` is a prompt (``content`` as typed; ``transformedContent`` adds what Copilot
  injects), ``assistant.message`` a reply (``content``, ``reasoningText`` as thinking,
  ``toolRequests`` as calls), ``tool.execution_complete`` a call's result. Hooks, turn marks and
  the rest are not conversation. A sub-agent's events (its ``task`` call's work) share the log,
  told apart by the envelope's ``agentId`` (Copilot CLI 1.0.39 on) or, before, by
  ``data.parentToolCallId`` (the ``task`` call that started it); ``subagent.started`` names the
  agent (``agentName``, ``agentDescription``) and its call (``toolCallId``). Each sub-agent is read
  as a sub-agent stream of the session, as Claude Code's are (github/copilot-sdk
  ``nodejs/src/generated/session-events.ts``, ``docs/features/custom-agents.md``).
- **Cursor** (``~/.cursor/projects/<folder>/agent-transcripts/<id>.jsonl``): lines ``{role,
  message: {content}}`` with ``text`` and ``tool_use`` blocks and nothing else: no ids, no times,
  no working directory, no tool results. A prompt is what its ``<user_query>`` element holds (the
  ``<external_links>`` pages and ``<attached_files>`` Cursor adds are left out); a reply's text
  that is one bold line (``**Planning the fix**``) is a reasoning summary, kept as thinking. With
  no times recorded, every message takes the file's modification time, and the folder's name stands
  for the project (:func:`causantic.transcripts.projects.folder_project`). Before the JSON lines
  (until early 2026) Cursor wrote the same transcripts as text, ``<id>.txt`` (a real one: Lorlah/Return-It
  ``.cursor/previous-session.md`` at 16fbf5d3): blocks opened by a line ``user:`` or
  ``assistant:``; a prompt in ``<user_query>``; in a reply,
  ``[Thinking] …``, the reply's words, ``[Tool call] <name>`` with its arguments on the lines below
  (``  key: value``, a long value running on over unindented lines) and ``[Tool result] <name>``
  (with no output in the files seen). :func:`cursor_text_records` reads them into the records of
  the JSON lines. What is read as what, since nothing else marks where a part ends: the
  ``[Thinking]`` paragraph (up to a blank line) is the reasoning; the lines after it, up to the
  next call, are the reply's words, a reasoning summary's body paragraph included (it cannot be told
  from the reply); an argument runs to the next argument or marker. A ``.txt`` beside an
  ``<id>.jsonl`` of the same session is not read: the JSON lines hold it.
- **Factory Droid** (``~/.factory/sessions/<folder>/<id>.jsonl``): ``session_start`` (id, ``cwd``,
  title), then ``message`` records holding Anthropic-shaped messages (``text``, ``thinking``,
  ``tool_use``, ``tool_result``). ``<system-reminder>`` blocks are Droid's, not the user's; a
  message with ``visibility: "user_only"`` is a notice to the user (a usage limit), not a prompt.
- **Pi** (``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``): a ``session`` header (id,
  ``cwd``), then entries linked by ``id``/``parentId`` into a tree: a ``message`` entry holds a
  ``user``, ``assistant`` (``text``, ``thinking``, ``toolCall``), ``toolResult`` or
  ``bashExecution`` message. The conversation is the path from the last entry back to the root; the
  entries off it are branches the user went back from (``/tree``), kept as rewound branches
  (:mod:`rewinds`). A fork (``/fork``, ``pi --fork``) is a new session whose header names the file
  of the session it came from (``parentSession``) and whose entries open with a copy of that
  session's, under the same entry ids (pi-mono ``SessionManager.createBranchedSession`` and
  ``forkFrom``): :func:`peek_pi_header` reads that link, and :mod:`discovery` leaves the copy out
  when it reads the fork with its parent.

Damaged lines are skipped and counted (:func:`~causantic.transcripts.reader.read_records`), unknown
records counted, never fatal. Kiro and OpenCode keep their sessions in databases and are not read.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from causantic.sources import Source
from causantic.transcripts._system_text import is_injected
from causantic.transcripts.codex import call_arguments
from causantic.transcripts.model import (
    AgentMeta,
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
    parse_blocks,
    parse_time,
    read_bytes,
    read_records,
)

__all__ = [
    "OTHER_SOURCES",
    "PiHeader",
    "cursor_text_records",
    "is_cursor_text",
    "peek_pi_header",
    "read_other",
    "source_of_line",
]

OTHER_SOURCES: tuple[Source, ...] = ("copilot", "cursor", "droid", "pi")
_FIRST_LINES: tuple[tuple[re.Pattern[bytes], Source], ...] = (
    (re.compile(rb'^\{\s*"type"\s*:\s*"session\.start"\s*,\s*"data"\s*:'), "copilot"),
    (re.compile(rb'^\{\s*"role"\s*:\s*"(?:user|assistant)"\s*,\s*"message"\s*:\s*\{'), "cursor"),
    (re.compile(rb'^\{\s*"type"\s*:\s*"session_start"\s*,\s*"id"\s*:'), "droid"),
    (re.compile(rb'^\{\s*"type"\s*:\s*"session"\s*,\s*"version"\s*:\s*\d+\s*,\s*"id"\s*:'), "pi"),
)
_PI_HEADER_BYTES = 64 * 1024  # a Pi header holds ids, a time, a cwd and a path: well under this
_CURSOR_ROLE = re.compile(rb"^(user|assistant):[ \t]*\r?$")
_CURSOR_MARK = re.compile(r"^\[(Thinking|Tool call|Tool result)\](?: (.*))?$")
_CURSOR_ARGUMENT = re.compile(r"^  ([A-Za-z_][\w-]*): ?(.*)$")
_USER_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_SUMMARY_HEADER = re.compile(r"\*\*[^*\n]{1,200}\*\*")


def source_of_line(line: bytes) -> Source | None:
    """The agent whose session file opens with `line` (its first bytes), among :data:`OTHER_SOURCES`."""
    return next((source for pattern, source in _FIRST_LINES if pattern.match(line)), None)


@dataclass(frozen=True, slots=True)
class PiHeader:
    """What a Pi session's header says about it: its id, and for a fork the session it came from."""

    session_id: str = ""
    parent_id: str = ""  # the id of the session named by ``parentSession`` (its file's ``<time>_<id>``)
    parent_path: Path | None = None  # that file, as the header names it


def peek_pi_header(path: Path) -> PiHeader:
    """The header of a Pi session file (its first line), reading only that line."""
    try:
        with path.open("rb") as f:
            record: Any = orjson.loads(f.readline(_PI_HEADER_BYTES))
    except (OSError, orjson.JSONDecodeError):
        return PiHeader()
    header = as_object(record) or {}
    parent = as_str(header.get("parentSession"))
    return PiHeader(
        as_str(header.get("id")),
        Path(parent).stem.rsplit("_", 1)[-1] if parent else "",
        Path(parent) if parent else None,
    )


def is_cursor_text(head: bytes) -> bool:
    """Whether a file's first bytes open a Cursor text transcript (its first line ``user:``)."""
    line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    return _CURSOR_ROLE.match(line) is not None


def cursor_text_records(data: bytes) -> list[tuple[int, int, dict[str, Any]]]:
    """A Cursor text transcript as the records of its JSON-lines form, each with the line its block
    opens on: ``{role, message: {content: [text, thinking, tool_use, tool_result blocks]}}``."""
    lines = data.decode("utf-8", "replace").splitlines()
    starts = [n for n, line in enumerate(lines) if _CURSOR_ROLE.match(line.encode())]
    records: list[tuple[int, int, dict[str, Any]]] = []
    for k, start in enumerate(starts):
        body = lines[start + 1 : starts[k + 1] if k + 1 < len(starts) else len(lines)]
        role = lines[start].strip()[:-1]
        if role == "user":
            content: list[dict[str, Any]] = [{"type": "text", "text": "\n".join(body).strip()}]
        else:
            content = _cursor_reply(body)
        records.append((start + 1, 0, {"role": role, "message": {"content": content}}))
    return records


def _cursor_reply(lines: list[str]) -> list[dict[str, Any]]:
    """A text reply's parts (rules in the module docstring), as JSON-lines content blocks."""
    parts: list[dict[str, Any]] = []
    kind, argument = "text", ""
    for line in lines:
        mark = _CURSOR_MARK.match(line)
        if mark is not None:
            kind, name = mark.group(1), (mark.group(2) or "").strip()
            if kind == "Thinking":
                parts.append({"type": "thinking", "thinking": name})
            elif kind == "Tool call":
                parts.append({"type": "tool_use", "name": name, "input": {}})
                argument = ""
            continue
        part = parts[-1] if parts else None
        if kind == "Tool result":
            continue  # a call's output (none in the files seen): not kept, as the JSON lines keep none
        if kind == "Thinking" and part is not None and line.strip():
            part["thinking"] += "\n" + line
        elif kind == "Tool call" and part is not None and (found := _CURSOR_ARGUMENT.match(line)):
            argument = found.group(1)
            part["input"][argument] = found.group(2)
        elif kind == "Tool call" and part is not None and argument:
            part["input"][argument] += "\n" + line
        else:  # the reply's words; after a [Thinking] paragraph, what follows its blank line
            kind = "text"
            if part is not None and part["type"] == "text":
                part["text"] += "\n" + line
            elif line.strip():
                parts.append({"type": "text", "text": line})
    kept: list[dict[str, Any]] = []
    for part in parts:
        if part["type"] == "text":
            part["text"] = part["text"].strip()
        elif part["type"] == "thinking":
            thought = part["thinking"].strip()
            part["thinking"] = thought.strip("*") if _SUMMARY_HEADER.fullmatch(thought) else thought
        else:
            part["input"] = {key: value.rstrip() for key, value in part["input"].items()}
        if part.get("text", part.get("thinking", True)):
            kept.append(part)
    return kept


def read_other(path: Path, source: Source) -> tuple[Transcript | None, list[Transcript], SkipReport]:
    """One session file of `source` (one of :data:`OTHER_SOURCES`): its main stream (None when it
    holds no message of it) and its sub-agents' streams (Copilot CLI's, in the order they began).

    Raises :class:`TranscriptError` only when the file cannot be read at all.
    """
    report = SkipReport()
    builder = _Builder(report)
    text = source == "cursor" and path.suffix == ".txt"  # a text transcript: small, read whole
    records = cursor_text_records(read_bytes(path)) if text else read_records(path, report)
    if source == "pi":
        records = _pi_marked(records)
    add = {"copilot": builder.copilot, "cursor": builder.cursor, "droid": builder.droid, "pi": builder.pi}[source]
    for line_no, sub, record in records:
        add(record, line_no, sub)
    if not builder.messages:
        return None, [], report
    session = builder.session_id or (path.parent.name if path.name == "events.jsonl" else "") or _stem_id(path)
    if source == "cursor":  # no times recorded: the file's
        when = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        builder.messages = [replace(m, timestamp=when) for m in builder.messages]
    streams: dict[str | None, list[Message]] = {None: []}
    for m in builder.messages:
        streams.setdefault(m.agent_id, []).append(replace(m, session_id=session))
    main = tuple(streams.pop(None))
    transcript = Transcript(path, session, None, main, cwd=builder.cwd, source=source) if main else None
    subagents = [
        Transcript(path, session, agent, tuple(found), builder.cwd, meta=builder.agents.get(agent), source=source)
        for agent, found in streams.items()
    ]
    return transcript, subagents, report


# The parts of a session file's path, counted from its end, whose hash names a session whose file
# name is no id (:func:`_stem_id`).
ID_PATH_PARTS = 4


def _stem_id(path: Path) -> str:
    """A session id from the file name: Pi's ``<time>_<id>``, a Cursor or Droid ``<id>``. An Entire
    checkpoint's ``full.jsonl`` takes the id its ``metadata.json`` records, so the same session
    read from the agent's folder and from a checkpoint is one session, wherever the copy lives.
    Any other name that is no id is made unique by the end of its path, its last
    :data:`ID_PATH_PARTS` parts (a checkpoint's shard, id and number): not the whole path, which
    changes when the agent's folder moves (a new machine, a restored backup) and with it the id."""
    stem = path.stem.rsplit("_", 1)[-1]
    if re.fullmatch(r"[0-9a-fA-F-]{16,}", stem):
        return stem
    if recorded := _checkpoint_session_id(path.with_name("metadata.json")):
        return recorded
    tail = "/".join(path.parts[-ID_PATH_PARTS:])
    return f"{path.stem}-{hashlib.sha1(tail.encode()).hexdigest()[:12]}"


def _checkpoint_session_id(metadata: Path) -> str:
    """The ``session_id`` an Entire checkpoint's metadata names, or "" when there is none to read."""
    try:
        recorded = as_object(orjson.loads(metadata.read_bytes()))
    except (OSError, orjson.JSONDecodeError):
        return ""
    return as_str(recorded.get("session_id")) if recorded else ""


def _pi_marked(records: list[tuple[int, int, dict[str, Any]]]) -> list[tuple[int, int, dict[str, Any]]]:
    """Pi's entries with those off the path from the last entry to the root marked ``_rewound``
    (the branch's first entry id), as the user left them (rules in the module docstring)."""
    parent_of = {
        entry: as_str(r.get("parentId")) for _, _, r in records if (entry := as_str(r.get("id"))) and "parentId" in r
    }
    last = next((as_str(r.get("id")) for _, _, r in reversed(records) if as_str(r.get("id")) in parent_of), "")
    path: set[str] = set()
    while last and last not in path:
        path.add(last)
        last = parent_of.get(last, "")
    marked: list[tuple[int, int, dict[str, Any]]] = []
    branch_of: dict[str, str] = {}
    for line_no, sub, record in records:
        entry = as_str(record.get("id"))
        if path and entry in parent_of and entry not in path:
            branch_of[entry] = branch_of.get(parent_of[entry]) or entry[:8]
            record = {**record, "_rewound": branch_of[entry]}
        marked.append((line_no, sub, record))
    return marked


@dataclass(slots=True)
class _Builder:
    report: SkipReport
    session_id: str = ""
    cwd: str | None = None
    messages: list[Message] = field(default_factory=list[Message])
    agents: dict[str | None, AgentMeta] = field(default_factory=dict[str | None, AgentMeta])  # sub-agent → meta
    aliases: dict[str, str] = field(default_factory=dict[str, str])  # Copilot CLI: agentId → its task call

    def append(
        self,
        uuid: str,
        role: str,
        when: datetime | None,
        line_no: int,
        blocks: list[Block],
        *,
        is_meta: bool = False,
        rewound: str | None = None,
        agent: str | None = None,
    ) -> None:
        if not blocks:
            self.report.add(SkipReason.EMPTY_MESSAGE)
            return
        self.messages.append(
            Message(
                uuid=uuid,
                role="user" if role == "user" else "assistant",
                timestamp=when,
                blocks=tuple(blocks),
                session_id="",
                line_no=line_no,
                is_meta=is_meta,
                rewound=rewound,
                agent_id=agent,
                is_sidechain=agent is not None,
            )
        )

    def header(self, session_id: str, cwd: Any) -> None:
        self.session_id = self.session_id or session_id
        if self.cwd is None and isinstance(cwd, str) and (cwd.startswith("/") or _drive(cwd)):
            self.cwd = cwd

    # -- Copilot CLI --

    def copilot_agent(self, agent_id: str, call_id: str) -> str | None:
        """The sub-agent stream an event belongs to (None: the main agent's): the ``task`` call that
        started the agent, which older events name (``parentToolCallId``), else the ``agentId``
        newer ones carry, known as that call once an event has named both."""
        if agent_id and call_id:
            self.aliases.setdefault(agent_id, call_id)
        return call_id or self.aliases.get(agent_id) or agent_id or None

    def copilot(self, record: dict[str, Any], line_no: int, sub: int) -> None:
        kind, data = record.get("type"), as_object(record.get("data")) or {}
        uuid = as_str(record.get("id")) or line_uuid(line_no, sub)
        when = parse_time(record.get("timestamp"))
        agent = self.copilot_agent(as_str(record.get("agentId")), as_str(data.get("parentToolCallId")))
        if kind == "session.start":
            self.header(as_str(data.get("sessionId")), (as_object(data.get("context")) or {}).get("cwd"))
        elif kind == "subagent.started":
            spawn = as_str(data.get("toolCallId"))
            described = as_str(data.get("agentDescription")) or as_str(data.get("agentDisplayName"))
            named = self.copilot_agent(as_str(record.get("agentId")), spawn) or spawn
            self.agents[named] = AgentMeta(as_str(data.get("agentName")) or None, described or None, spawn)
            self.report.add(SkipReason.NON_MESSAGE)
        elif kind == "user.message":
            text = as_str(data.get("content"))
            self.append(uuid, "user", when, line_no, [TextBlock(text)] if text.strip() else [], agent=agent)
        elif kind == "assistant.message":
            blocks: list[Block] = []
            if (reasoning := as_str(data.get("reasoningText"))).strip():
                blocks.append(ThinkingBlock(reasoning))
            if (text := as_str(data.get("content"))).strip():
                blocks.append(TextBlock(text))
            for value in as_array(data.get("toolRequests")) or []:
                call = as_object(value) or {}
                name, call_id = as_str(call.get("name")), as_str(call.get("toolCallId"))
                blocks.append(ToolCall(call_id, name, call_arguments(call.get("arguments"), "arguments")))
            self.append(uuid, "assistant", when, line_no, blocks, agent=agent)
        elif kind == "tool.execution_complete":
            result = as_object(data.get("result")) or {}
            error = as_object(data.get("error")) or {}
            text = as_str(result.get("content")) or as_str(error.get("message"))
            failed = data.get("success") is False
            outcome = ToolResult(as_str(data.get("toolCallId")), text, failed)
            self.append(uuid, "user", when, line_no, [outcome], agent=agent)
        else:
            self.report.add(SkipReason.NON_MESSAGE)

    # -- Cursor --

    def cursor(self, record: dict[str, Any], line_no: int, sub: int) -> None:
        role = record.get("role")
        content = (as_object(record.get("message")) or {}).get("content")
        if role not in ("user", "assistant") or not isinstance(content, list | str):
            self.report.add(SkipReason.MALFORMED_MESSAGE)
            return
        uuid = line_uuid(line_no, sub)
        blocks: list[Block] = []
        for n, block in enumerate(parse_blocks(content)):
            if type(block) is ToolCall:
                blocks.append(replace(block, id=block.id or f"{uuid}-call{n}"))
            elif type(block) is not TextBlock:
                blocks.append(block)
            elif role == "user":
                queries = _USER_QUERY.findall(block.text)
                blocks += [TextBlock(q) for q in queries if q] if queries or "<" in block.text[:1] else [block]
            else:
                summary = _SUMMARY_HEADER.fullmatch(block.text.strip())
                blocks.append(ThinkingBlock(block.text.strip().strip("*")) if summary else block)
        self.append(uuid, str(role), None, line_no, blocks)

    # -- Factory Droid and Pi: a header record, then ``message`` records --

    def message_of(self, record: dict[str, Any], header_type: str) -> dict[str, Any] | None:
        """Droid's and Pi's records alike: the session header (``type`` ``header_type``) is read,
        a ``message`` record's message returned, anything else counted as skipped."""
        kind = record.get("type")
        if kind == header_type:
            self.header(as_str(record.get("id")), record.get("cwd"))
            return None
        message = as_object(record.get("message"))
        if kind != "message" or message is None:
            self.report.add(SkipReason.NON_MESSAGE if kind != "message" else SkipReason.MALFORMED_MESSAGE)
            return None
        return message

    # -- Factory Droid --

    def droid(self, record: dict[str, Any], line_no: int, sub: int) -> None:
        message = self.message_of(record, "session_start")
        if message is None:
            return
        role = message.get("role")
        content = message.get("content")
        if role not in ("user", "assistant") or not isinstance(content, list | str):
            self.report.add(SkipReason.MALFORMED_MESSAGE)
            return
        blocks = [b for b in parse_blocks(content) if not (type(b) is TextBlock and is_injected(b.text))]
        notice = role == "user" and message.get("visibility") == "user_only"
        uuid = as_str(record.get("id")) or line_uuid(line_no, sub)
        self.append(uuid, str(role), parse_time(record.get("timestamp")), line_no, blocks, is_meta=notice)

    # -- Pi --

    def pi(self, record: dict[str, Any], line_no: int, sub: int) -> None:
        message = self.message_of(record, "session")
        if message is None:
            return
        uuid = as_str(record.get("id")) or line_uuid(line_no, sub)
        when = parse_time(record.get("timestamp"))
        rewound = as_str(record.get("_rewound")) or None
        role = message.get("role")
        content = message.get("content")
        if role == "toolResult":
            text = "\n".join(
                as_str(part.get("text")) if (part := as_object(v)) is not None else as_str(v)
                for v in as_array(content) or [content]
            )
            result = ToolResult(as_str(message.get("toolCallId")), text, message.get("isError") is True)
            self.append(uuid, "user", when, line_no, [result], rewound=rewound)
        elif role == "bashExecution":  # the user ran a command with `!`: what it printed is context
            text = f"$ {as_str(message.get('command'))}\n{as_str(message.get('output'))}".strip()
            self.append(uuid, "user", when, line_no, [TextBlock(text)], is_meta=True, rewound=rewound)
        elif role in ("user", "assistant") and isinstance(content, list | str):
            blocks = parse_blocks(content) if isinstance(content, str) else _pi_blocks(content)
            self.append(uuid, str(role), when, line_no, blocks, rewound=rewound)
        else:
            self.report.add(SkipReason.NON_MESSAGE)


def _pi_blocks(content: list[Any]) -> list[Block]:
    """Pi's content blocks: ``text``, ``thinking``, ``image``, and ``toolCall`` (``arguments``)."""
    blocks: list[Block] = []
    for value in content:
        item = as_object(value) or {}
        if item.get("type") == "toolCall":
            arguments = item.get("arguments")
            blocks.append(
                ToolCall(
                    as_str(item.get("id")), as_str(item.get("name")), as_object(arguments) or {"arguments": arguments}
                )
            )
        else:
            blocks += parse_blocks([item])
    return blocks


def _drive(value: Any) -> bool:
    return isinstance(value, str) and value[1:3] in (":\\", ":/")
