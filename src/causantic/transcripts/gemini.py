"""Reading one Gemini CLI session (``~/.gemini/tmp/<project>/chats/session-*.json``).

A session is one JSON document: ``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``
(Entire checkpoints keep the same document, pretty-printed, as ``full.jsonl``). A file of one JSON
record per line holding the same fields (a header with ``sessionId``, then message records) is read
too. Messages:

- ``user``: ``content`` is text or a list of parts (``{"text"}``; other parts are skipped);
- ``gemini`` (also ``model``): ``content`` text; ``thoughts`` (``{subject, description}``) become
  :class:`ThinkingBlock` (never indexed); each of ``toolCalls`` (``{id, name, args, result, status}``)
  becomes a tool call, and its ``result`` (``functionResponse.response.output`` or ``.error``) a tool
  result in a following user message, as Claude Code records them;
- ``info``, ``warning``, ``error``: CLI notices, skipped; other kinds are counted as unknown.

Since April 2026 (gemini-cli ``feat(core): migrate chat recording to JSONL streaming``) a session is
``session-<time>-<id8>.jsonl``, an append-only log replayed as Gemini CLI replays it: the first line
is the session's header; a message is written again in full each time it changes (its tokens, its
tool calls and their results), so the last version of an id wins, in the place of its first;
``{"$rewindTo": id}`` takes that message and every later one out of the conversation (the user
rewound it): they are kept as a rewound branch (:mod:`rewinds`);
``{"$set": {...}}`` updates the header (``$set.messages``, the model's context after a compression,
is not the conversation and is ignored). A sub-agent's session is ``chats/<parent session id>/<agent
id>.jsonl`` (header ``kind: "subagent"``): it joins its parent's session (:mod:`discovery`), and the
parent's call that ran it (``invoke_agent``) names it in its record's ``agentId``.

A tool output of many megabytes stays in the file, as a Claude Code one does (:mod:`longvalue`; a
session document is read in pieces like a long line), and so does ``resultDisplay`` when it is the
result; beside a response it keeps its head.

Gemini CLI records no working directory, only ``projectHash`` = sha256 of it. Newer versions name
the project folder instead and keep its path in ``<folder>/.project_root``, which is read when present.
Otherwise the session's own text often names the folder: a tool call's absolute path, or an error
naming the workspace. Each absolute path in it, and each folder above one, is hashed, and the one
whose hash is the ``projectHash`` is the cwd: proven, not guessed (computermode ``79/d52455f160``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from causantic.errors import TranscriptError
from causantic.transcripts.longvalue import WINDOW_BYTES, LineScanner, LongValue, Placeholders
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
    loads,
    parse_time,
    read_bytes,
    read_records,
)

__all__ = ["GeminiHeader", "GeminiSession", "looks_like_gemini", "peek_gemini_header", "read_gemini"]

_NOTICES = frozenset({"info", "warning", "error"})
# An absolute path in text: POSIX (``/Users/me/app/README.md``) or Windows (``C:\\Users\\me\\app``).
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~/-])/[^\s\"'`<>|;,(){}\[\]]+|\b[A-Za-z]:\\[^\s\"'`<>|;,(){}\[\]]+")
# Context Gemini CLI puts in a user message (its environment, a hook's additionalContext); its own
# history view leaves such text out (packages/cli/src/utils/sessionUtils.ts).
_ADDED_CONTEXT = re.compile(r"<(session_context|hook_context)>.*?</\1>", re.DOTALL)
_HEADER_BYTES = 1 << 16  # a JSON-lines session's header line is a few hundred bytes
_HASHED_MAX = 20_000  # folders hashed per session at most: a session quoting thousands of paths stops there


@dataclass(frozen=True, slots=True)
class GeminiSession:
    transcript: Transcript | None  # None when the session holds no message
    session_id: str
    project_hash: str | None
    cwd: str | None  # from ``.project_root``, when the CLI wrote one


@dataclass(frozen=True, slots=True)
class GeminiHeader:
    """What a JSON-lines session's first line says: its id, and whether a sub-agent ran it."""

    session_id: str | None = None
    subagent: bool = False


def looks_like_gemini(head: bytes) -> bool:
    """True when a file's first bytes are those of a Gemini CLI session document. Some versions
    write the keys sorted, so ``sessionId`` and ``projectHash`` can come after all the messages."""
    return b'"projectHash"' in head or (
        b'"messages"' in head and any(k in head for k in (b'"sessionId"', b'"lastUpdated"', b'"startTime"'))
    )


def peek_gemini_header(path: Path) -> GeminiHeader:
    """The header of a JSON-lines session from its first line; empty for a session document."""
    try:
        with path.open("rb") as f:
            line = f.readline(_HEADER_BYTES)
    except OSError:
        return GeminiHeader()
    try:
        record: Any = loads(line)
    except (ValueError, RecursionError):
        return GeminiHeader()
    header = as_object(record) or {}
    return GeminiHeader(as_str(header.get("sessionId")) or None, header.get("kind") == "subagent")


def read_gemini(
    path: Path, *, agent_id: str | None = None, session_id: str | None = None
) -> tuple[GeminiSession, SkipReport]:
    """Parse one session file; problems inside it are counted, never raised. `agent_id` reads it as
    the sub-agent stream of session `session_id` (a sub-agent's file read with its parent's).

    Raises :class:`TranscriptError` only when the file cannot be read at all.
    """
    report = SkipReport()
    header, records = _records(path, report)
    own_id = as_str(header.get("sessionId")) or path.stem
    session_id = session_id or own_id
    project_hash = as_str(header.get("projectHash")) or None
    messages: list[Message] = []
    for line_no, record, branch in records:
        found = _messages(record, line_no, session_id, agent_id, report)
        messages += [replace(m, rewound=branch) for m in found] if branch else found
    transcript = None
    cwd = _project_root(path)
    if cwd is None and project_hash and messages:
        cwd = _folder_of_hash(project_hash.lower(), iter([header, *(record for _, record, _ in records)]))
    if messages:
        transcript = Transcript(path, session_id, agent_id, tuple(messages), cwd=cwd, source="gemini")
    return GeminiSession(transcript, session_id, project_hash, cwd), report


def _records(path: Path, report: SkipReport) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any], str | None]]]:
    """(session header, [(position, message record, the rewound branch it is on or None)]) from a
    document or from JSON lines, in the order of their first lines. Neither is held whole: a string
    value of many megabytes (a tool's output) stays in the file (see :func:`_long_values`)."""
    if _first_line_is_a_record(path):
        lines = read_records(path, report, _long_values)
        if len(lines) == 1 and not report.total and isinstance(lines[0][2].get("messages"), list):
            return _of_document(lines[0][2], report)  # a document written on one line
        return _of_lines(lines, report)
    kept, values, damage = _document(path)
    try:
        if damage:  # a long value cut short or damaged: no valid document, and its bytes not held
            raise ValueError(damage)
        parsed: Any = loads(kept)
    except (ValueError, RecursionError) as error:
        text = kept.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text.startswith(b"{") and text[1:].lstrip(b" \t\r").startswith(b"\n"):
            # A pretty-printed document caught while Gemini CLI rewrites it: one cut document, not
            # a hundred damaged lines; the next ingest reads it whole.
            cut = isinstance(error, json.JSONDecodeError) and "\n" not in error.doc[error.pos :].rstrip()
            report.add(SkipReason.TRUNCATED_LAST_LINE if cut or damage == "cut" else SkipReason.INVALID_JSON)
            return {}, []
        parsed = None
    whole = as_object(parsed)
    if whole is not None and isinstance(whole.get("messages"), list):
        holes = Placeholders(values)
        try:
            whole = _long_values(whole, holes)
        except ValueError:
            holes.used.clear()
        if holes.complete:
            return _of_document(whole, report)
        whole = as_object(loads(read_bytes(path)))  # a string of it looks like a placeholder: read whole
        if whole is not None and isinstance(whole.get("messages"), list):
            return _of_document(whole, report)
    return _of_lines(read_records(path, report, _long_values), report)


def _first_line_is_a_record(path: Path) -> bool:
    """Whether the file's first line is a whole JSON object: JSON lines (or a document written on
    one line); a pretty-printed document opens with a line holding only its brace."""
    try:
        with path.open("rb") as f:
            line = f.readline(_HEADER_BYTES)
    except OSError:
        return False
    try:
        return type(loads(line)) is dict
    except (ValueError, RecursionError):
        return False


def _document(path: Path) -> tuple[bytes, dict[str, LongValue], str]:
    """A session document's bytes, each string value of many megabytes in it left in the file (a
    placeholder in its place, see :class:`LineScanner`), read a piece at a time, and ``""``; when such
    a value is cut short by the file's end (``"cut"``: a document being rewritten) or damaged
    (``"damaged"``), the bytes before it."""
    scanner = LineScanner(path, 0)
    try:
        with path.open("rb") as handle:
            left = os.fstat(handle.fileno()).st_size  # as the file stood when opened
            while left > 0 and (piece := handle.read(min(WINDOW_BYTES, left))):
                scanner.feed(piece)
                left -= len(piece)
    except OSError as e:
        raise TranscriptError(
            f"Cannot read transcript file {path}: {e.strerror or e}. Check that it exists and is readable."
        ) from e
    scanned = scanner.finish()
    if scanned is not None:
        return *scanned, ""
    return *scanner.before_damage(), "damaged" if scanner.broken else "cut"


def _of_document(
    whole: dict[str, Any], report: SkipReport
) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any], str | None]]]:
    items = whole["messages"]
    records: list[tuple[int, dict[str, Any], str | None]] = [
        (i, obj, None) for i, value in enumerate(items, 1) if (obj := as_object(value)) is not None
    ]
    if len(records) < len(items):
        report.add(SkipReason.NOT_AN_OBJECT, len(items) - len(records))
    return whole, records


def _of_lines(
    lines: list[tuple[int, int, dict[str, Any]]], report: SkipReport
) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any], str | None]]]:
    """A JSON-lines session replayed as Gemini CLI replays it (see the module docstring)."""
    header: dict[str, Any] = {}
    latest: dict[str, tuple[int, dict[str, Any]]] = {}  # message id → (its first line, its last version)
    rewound: list[tuple[int, dict[str, Any], str | None]] = []  # what a $rewindTo went back past
    for line_no, _, record in lines:
        rewind, update = record.get("$rewindTo"), as_object(record.get("$set"))
        if isinstance(rewind, str):  # as Gemini CLI replays it: an unknown id rewinds to the start
            ids = list(latest)
            gone = ids[ids.index(rewind) if rewind in latest else 0 :]
            rewound += [(*latest.pop(key), gone[0][:8]) for key in gone]
            report.add(SkipReason.NON_MESSAGE)
        elif update is not None:
            header |= {key: value for key, value in update.items() if key != "messages"}
            report.add(SkipReason.NON_MESSAGE)
        elif "type" in record:
            key = as_str(record.get("id")) or f"line-{line_no}"
            if key in latest:  # the message written again as it changed: this version replaces it
                latest[key] = (latest[key][0], record)
                report.add(SkipReason.DUPLICATE_RECORD)
            else:
                latest[key] = (line_no, record)
        elif not header and "sessionId" in record:
            header = record
        else:
            report.add(SkipReason.NON_MESSAGE)
    kept: list[tuple[int, dict[str, Any], str | None]] = [(line, record, None) for line, record in latest.values()]
    return header, sorted(kept + rewound, key=lambda r: r[0])


def _messages(
    record: dict[str, Any], position: int, session_id: str, agent_id: str | None, report: SkipReport
) -> list[Message]:
    kind = record.get("type")
    uuid = as_str(record.get("id")) or f"message-{position}"
    when = parse_time(record.get("timestamp"))

    def message(role: str, blocks: list[Block], suffix: str = "", result: Any = None) -> Message:
        return Message(
            uuid + suffix,
            "user" if role == "user" else "assistant",
            when,
            tuple(blocks),
            session_id,
            position,
            agent_id=agent_id,
            is_sidechain=agent_id is not None,
            tool_use_result=result,
        )

    if kind in _NOTICES:
        report.add(SkipReason.NON_MESSAGE)
        return []
    if kind == "user":
        # What the user typed, as Gemini CLI shows it: ``displayContent`` when set (``content`` then
        # holds the files an @reference read in), without the context Gemini CLI or a hook adds.
        typed = record.get("displayContent") or record.get("content")
        blocks: list[Block] = [TextBlock(t) for b in _content(typed) if (t := _ADDED_CONTEXT.sub("", b.text).strip())]
        if not blocks:
            report.add(SkipReason.NON_MESSAGE if _content(typed) else SkipReason.EMPTY_MESSAGE)
            return []
        return [message("user", blocks)]
    if kind not in ("gemini", "model"):
        report.add(SkipReason.UNKNOWN_RECORD)
        return []
    blocks = [
        ThinkingBlock(text)
        for t in as_array(record.get("thoughts")) or []
        if (thought := as_object(t)) is not None and (text := _thought(thought))
    ]
    blocks += _content(record.get("content"))
    results: list[tuple[ToolResult, str]] = []  # each call's result, and the agent its call ran
    for value in as_array(record.get("toolCalls")) or []:
        call = as_object(value)
        if call is None:
            continue
        call_id = as_str(call.get("id")) or f"{uuid}-call-{len(results)}"
        blocks.append(ToolCall(call_id, as_str(call.get("name")), as_object(call.get("args")) or {}))
        output, failed = _result_text(call), call.get("status") == "error"
        if isinstance(output, LongValue):  # an output of many megabytes, left in the file
            result = ToolResult(call_id, output.head, failed, output.text, output.tail)
        else:
            result = ToolResult(call_id, output, failed)
        results.append((result, as_str(call.get("agentId"))))
    if not blocks:
        report.add(SkipReason.EMPTY_MESSAGE)
        return []
    out = [message("assistant", blocks)]
    # The results follow in one user message, as Claude Code records them; but the result of a call
    # that ran a sub-agent (invoke_agent) is a message of its own, naming the agent, whose file joins
    # this session (:mod:`causantic.ingest.subagents` links it to the call by that name).
    groups: list[tuple[list[Block], str]] = []
    for result, agent in results:
        if agent or not groups or groups[-1][1]:
            groups.append(([result], agent))
        else:
            groups[-1][0].append(result)
    for n, (said, agent) in enumerate(groups):
        out.append(message("user", said, f"-results-{n}" if n else "-results", {"agentId": agent} if agent else None))
    return out


def _content(content: Any) -> list[TextBlock]:
    """The text of a message's content: a string, a part (``{"text"}``) or a list of either."""
    parts = as_array(content)
    if parts is None:
        parts = [content]
    texts = [value if isinstance(value, str) else as_str((as_object(value) or {}).get("text")) for value in parts]
    return [TextBlock(t) for t in texts if t.strip()]


def _thought(thought: dict[str, Any]) -> str:
    subject, description = as_str(thought.get("subject")), as_str(thought.get("description"))
    return f"{subject}: {description}" if subject and description else subject or description


def _result_text(call: dict[str, Any]) -> str | LongValue:
    """A call's result: the text of its responses (each one's output, error or content, else the
    response as JSON), else its ``resultDisplay``; one text of many megabytes left in the file is
    returned as such (:func:`_long_values`)."""
    parts: list[str | LongValue] = []
    for response in _responses(call):
        key = _response_key(response)
        parts.append(response[key] if key is not None else json.dumps(response, ensure_ascii=False))
    if not parts and isinstance(call.get("resultDisplay"), str | LongValue):
        parts.append(call["resultDisplay"])
    if len(parts) == 1 and isinstance(parts[0], LongValue):
        return parts[0]
    return "\n".join(p if isinstance(p, str) else "".join(p.text.windows()) for p in parts)


def _responses(call: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The ``functionResponse.response`` objects of a call's result."""
    for value in as_array(call.get("result")) or []:
        item = as_object(value) or {}
        response = as_object((as_object(item.get("functionResponse")) or {}).get("response"))
        if response is not None:
            yield response


def _response_key(response: dict[str, Any]) -> str | None:
    """The key of a response's text: its output, error or content, the first that is a non-empty string."""
    return next(
        (
            k
            for k in ("output", "error", "content")
            if isinstance(v := response.get(k), LongValue) or (isinstance(v, str) and v)
        ),
        None,
    )


def _long_values(record: dict[str, Any], holes: Placeholders) -> dict[str, Any]:
    """A session's (or a message record's) long values put back (see :mod:`longvalue`): a tool's
    output stays in the file, and so does its ``resultDisplay`` when it is the result (no response
    holds text); a ``resultDisplay`` beside a response keeps its head (it repeats the output, and is
    read only for the folders it names); any other long value is decoded whole."""
    messages = as_array(record.get("messages"))
    for value in messages if messages is not None else [record]:
        for call_value in as_array((as_object(value) or {}).get("toolCalls")) or []:
            call = as_object(call_value)
            if call is None:
                continue
            responses = list(_responses(call))
            for response in responses:
                key = _response_key(response)
                if key is not None:
                    holes.lazy(response, key)
            if responses:
                call["resultDisplay"] = holes.put_back(call.get("resultDisplay"), "head")
            else:
                holes.lazy(call, "resultDisplay")
    return cast("dict[str, Any]", holes.put_back(record))


def _folder_of_hash(project_hash: str, records: Iterator[dict[str, Any]]) -> str | None:
    """The folder whose sha256 is ``project_hash``, among the absolute paths the records' texts name
    and the folders above them; None when none is."""
    tried: set[str] = set()
    for text in _strings(list(records)):
        if "/" not in text and "\\" not in text:
            continue
        for found in _ABSOLUTE_PATH.finditer(text):
            path = found.group().rstrip(".:")
            sep = "\\" if path[1:3] == ":\\" else "/"
            parts = path.rstrip(sep).split(sep)
            for end in range(len(parts), 1, -1):
                folder = sep.join(parts[:end])
                if folder in tried:
                    break  # it and the folders above it were hashed for an earlier path
                if len(tried) >= _HASHED_MAX:
                    return None
                tried.add(folder)
                if hashlib.sha256(folder.encode("utf-8")).hexdigest() == project_hash:
                    return folder
    return None


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, depth first."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, LongValue):  # a long output, a window at a time
            yield from item.text.windows()
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _project_root(path: Path) -> str | None:
    folder = path.parent.parent if path.parent.name == "chats" else path.parent
    try:
        text = (folder / ".project_root").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text if text.startswith("/") else None
