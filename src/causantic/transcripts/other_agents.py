"""Reading the session files of GitHub Copilot CLI, Cursor's agent, Factory Droid and Pi.

Each is one JSON-lines file per session, told apart by its first line (:func:`source_of_line`):

- **Copilot CLI** (``~/.copilot/session-state/<session id>/events.jsonl``): an event log, each line
  ``{type, data, id, timestamp, parentId}``. ``session.start`` names the session and its ``cwd``;
  ``user.message`` is a prompt (``content`` as typed; ``transformedContent`` adds what Copilot
  injects), ``assistant.message`` a reply (``content``, ``reasoningText`` as thinking,
  ``toolRequests`` as calls), ``tool.execution_complete`` a call's result. Hooks, turn marks and
  the rest are not conversation.
- **Cursor** (``~/.cursor/projects/<folder>/agent-transcripts/<id>.jsonl``): lines ``{role,
  message: {content}}`` with ``text`` and ``tool_use`` blocks and nothing else: no ids, no times,
  no working directory, no tool results. A prompt is what its ``<user_query>`` element holds (the
  ``<external_links>`` pages and ``<attached_files>`` Cursor adds are left out); a reply's text
  that is one bold line (``**Planning the fix**``) is a reasoning summary, kept as thinking. With
  no times recorded, every message takes the file's modification time, and the folder stands for
  the project.
- **Factory Droid** (``~/.factory/sessions/<folder>/<id>.jsonl``): ``session_start`` (id, ``cwd``,
  title), then ``message`` records holding Anthropic-shaped messages (``text``, ``thinking``,
  ``tool_use``, ``tool_result``). ``<system-reminder>`` blocks are Droid's, not the user's; a
  message with ``visibility: "user_only"`` is a notice to the user (a usage limit), not a prompt.
- **Pi** (``~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl``): a ``session`` header (id,
  ``cwd``), then entries linked by ``id``/``parentId`` into a tree: a ``message`` entry holds a
  ``user``, ``assistant`` (``text``, ``thinking``, ``toolCall``), ``toolResult`` or
  ``bashExecution`` message. The conversation is the path from the last entry back to the root; the
  entries off it are branches the user went back from (``/tree``), kept as rewound branches
  (:mod:`rewinds`).

Damaged lines are skipped and counted (:func:`~causantic.transcripts.reader.decode_lines`), unknown
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
    decode_lines,
    line_uuid,
    parse_blocks,
    parse_time,
    read_bytes,
)

__all__ = ["OTHER_SOURCES", "read_other", "session_folder", "source_of_line"]

OTHER_SOURCES: tuple[Source, ...] = ("copilot", "cursor", "droid", "pi")
_FIRST_LINES: tuple[tuple[re.Pattern[bytes], Source], ...] = (
    (re.compile(rb'^\{\s*"type"\s*:\s*"session\.start"\s*,\s*"data"\s*:'), "copilot"),
    (re.compile(rb'^\{\s*"role"\s*:\s*"(?:user|assistant)"\s*,\s*"message"\s*:\s*\{'), "cursor"),
    (re.compile(rb'^\{\s*"type"\s*:\s*"session_start"\s*,\s*"id"\s*:'), "droid"),
    (re.compile(rb'^\{\s*"type"\s*:\s*"session"\s*,\s*"version"\s*:\s*\d+\s*,\s*"id"\s*:'), "pi"),
)
_USER_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_SUMMARY_HEADER = re.compile(r"\*\*[^*\n]{1,200}\*\*")


def source_of_line(line: bytes) -> Source | None:
    """The agent whose session file opens with `line` (its first bytes), among :data:`OTHER_SOURCES`."""
    return next((source for pattern, source in _FIRST_LINES if pattern.match(line)), None)


def session_folder(path: Path, source: Source) -> Path:
    """The folder that stands for a session's project when none of its records names one: a Cursor
    transcript's project folder (``<folder>/agent-transcripts/[<id>/]<id>.jsonl``), else the file's
    folder."""
    if source == "cursor":
        return next((p.parent for p in path.parents if p.name == "agent-transcripts"), path.parent)
    return path.parent


def read_other(path: Path, source: Source) -> tuple[Transcript | None, SkipReport]:
    """One session file of `source` (one of :data:`OTHER_SOURCES`); None when it holds no message.

    Raises :class:`TranscriptError` only when the file cannot be read at all.
    """
    data = read_bytes(path)
    report = SkipReport()
    builder = _Builder(report)
    records = decode_lines(data, report)
    if source == "pi":
        records = _pi_marked(records)
    add = {"copilot": builder.copilot, "cursor": builder.cursor, "droid": builder.droid, "pi": builder.pi}[source]
    for line_no, sub, record in records:
        add(record, line_no, sub)
    if not builder.messages:
        return None, report
    session = builder.session_id or (path.parent.name if path.name == "events.jsonl" else "") or _stem_id(path)
    if source == "cursor":  # no times recorded: the file's
        when = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        builder.messages = [replace(m, timestamp=when) for m in builder.messages]
    messages = tuple(replace(m, session_id=session) for m in builder.messages)
    return Transcript(path, session, None, messages, cwd=builder.cwd, source=source), report


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
            )
        )

    def header(self, session_id: str, cwd: Any) -> None:
        self.session_id = self.session_id or session_id
        if self.cwd is None and isinstance(cwd, str) and (cwd.startswith("/") or _drive(cwd)):
            self.cwd = cwd

    # -- Copilot CLI --

    def copilot(self, record: dict[str, Any], line_no: int, sub: int) -> None:
        kind, data = record.get("type"), as_object(record.get("data")) or {}
        uuid = as_str(record.get("id")) or line_uuid(line_no, sub)
        when = parse_time(record.get("timestamp"))
        if kind == "session.start":
            self.header(as_str(data.get("sessionId")), (as_object(data.get("context")) or {}).get("cwd"))
        elif kind == "user.message":
            text = as_str(data.get("content"))
            self.append(uuid, "user", when, line_no, [TextBlock(text)] if text.strip() else [])
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
            self.append(uuid, "assistant", when, line_no, blocks)
        elif kind == "tool.execution_complete":
            result = as_object(data.get("result")) or {}
            error = as_object(data.get("error")) or {}
            text = as_str(result.get("content")) or as_str(error.get("message"))
            failed = data.get("success") is False
            self.append(uuid, "user", when, line_no, [ToolResult(as_str(data.get("toolCallId")), text, failed)])
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
