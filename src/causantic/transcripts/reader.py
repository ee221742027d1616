"""Reading one Claude Code JSONL file into typed transcripts; bad lines are skipped and counted.

This module owns the byte-and-record level of the format: splitting lines, recovering several JSON
records written on one line, telling message records from the many other record kinds, parsing
content blocks, merging the records Claude Code writes for one API message, and splitting a file
into conversation streams. Finding the files of a session is :mod:`discovery`'s job, and grouping
messages into turns is :mod:`turns`'.

Stream rules (one :class:`Transcript` per stream, in order of first appearance in the file):

- Main stream: records that are not sidechains, one stream per ``sessionId``. One correction: a
  user prompt that is the last message of its session id and whose answer (the next assistant
  record, pointing at it through ``parentUuid``) carries another session id moves to the answer's
  session. Claude Code writes the "Implement the following plan" prompt of plan mode's
  clear-context option under the old session id (entireio ``8c/fa910f8ef9/5/full.jsonl``).
- Sub-agent streams: records of a file read with ``agent_id=`` (a sub-agent file), and
  ``isSidechain: true`` records of other files. The stream id is the record's ``agentId``, else the
  file's ``agent_id``, else (old inline sidechains, which have no ``agentId``) the synthetic id
  ``"sidechain-" + <first uuid of the run>[:8]``. A sidechain record joins the run of its
  ``parentUuid``; a sidechain user record without a parent starts a new run; any other record
  continues the run right before it, or starts one. A sub-agent stream keeps one session id: the
  ``session_id=`` it is read with, else the first one it shows. A resumed session can re-stamp an
  agent's later records, and splitting there would separate the agent's prompt from its answer
  (kfischer ``agent-a2b48bc.jsonl``). Records with an ``agentId`` but no ``isSidechain`` flag in a
  main file stay in the main stream.

Within a stream, assistant records sharing ``message.id`` become one :class:`Message` at the first
record's position, without exact-duplicate blocks; a repeated ``uuid`` is dropped. The order is
file order, not timestamp order (timestamps are not monotonic in resumed sessions).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

import orjson

from causantic.errors import TranscriptError
from causantic.transcripts._system_text import is_injected
from causantic.transcripts.longvalue import (
    LONG_LINE_BYTES,
    WINDOW_BYTES,
    LineScanner,
    LongRule,
    LongValue,
    Placeholders,
    replace_lone_surrogates,
)
from causantic.transcripts.model import (
    AgentProgress,
    Block,
    Message,
    SkipReport,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Transcript,
)
from causantic.transcripts.rewinds import mark_claude_rewinds

__all__ = [
    "BROKEN_LINE_REASONS",
    "DEEP_VALUE",
    "MAX_DEPTH",
    "SkipReason",
    "as_array",
    "as_object",
    "as_str",
    "parse_time",
    "read_bytes",
    "read_file",
    "read_records",
]


class SkipReason(StrEnum):
    """Why a line or record was passed over; the keys of :class:`SkipReport` counts."""

    INVALID_JSON = "invalid json"
    INVALID_UTF8 = "invalid utf-8"
    TRUNCATED_LAST_LINE = "truncated last line"  # usually a session still being written
    NOT_AN_OBJECT = "not a json object"
    MALFORMED_MESSAGE = "malformed message"  # a user/assistant record without a usable message
    EMPTY_MESSAGE = "empty message"  # a message with no block we keep (e.g. only redacted thinking)
    DUPLICATE_RECORD = "duplicate record"  # same uuid seen before in the stream
    NON_MESSAGE = "non-message record"  # summary, system, snapshots, progress, attachment, ...: normal
    UNKNOWN_RECORD = "unknown record type"  # Codex/Gemini record kinds no reader knows yet: skipped
    INVALID_AGENT_META = "invalid agent meta file"  # an agent-<id>.meta.json that is not a JSON object
    OTHER_FORMAT = "file in another format"  # JSON lines, none of them a Claude Code record: once per file
    DEEP_VALUE = "value nested too deep, cut"  # a record kept with its values below MAX_DEPTH cut


# Reasons that mean a damaged line rather than an ignored kind of record. A malformed message is
# a whole, valid JSON line of a shape the reader cannot use: counted with the ignored records, so
# the "lines skipped" figure is the number of damaged lines and nothing else.
BROKEN_LINE_REASONS = frozenset(
    {
        SkipReason.INVALID_JSON,
        SkipReason.INVALID_UTF8,
        SkipReason.TRUNCATED_LAST_LINE,
        SkipReason.NOT_AN_OBJECT,
    }
)

_BOM = b"\xef\xbb\xbf"
_NEWLINE = 0x0A
_WHITESPACE = re.compile(r"[ \t\r\n]*")
_BLANK_BYTES = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what bytes.isspace() accepts
_OBJECT_LINE = re.compile(rb"^(?:\xef\xbb\xbf)?[ \t]*\{", re.MULTILINE)  # a line that starts a JSON object
_DECODER = json.JSONDecoder()
# The levels of nesting a record keeps (itself the first): a container deeper is cut, replaced by
# DEEP_VALUE. orjson 3.9.15 on refuses JSON nested deeper than 1024 levels and older versions read
# it; the standard library reads about 1000 levels and writes fewer (a tool input rendered as JSON).
# So that every version reads a line alike and what is kept can be written again, every record is
# cut here: nested that deep, a value is a tool's payload, never words anyone wrote.
MAX_DEPTH = 256
DEEP_VALUE = f"[nested deeper than {MAX_DEPTH} levels: cut]"
_DEEP_JSON = json.dumps(DEEP_VALUE)
_JSON_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')  # a string, or a bracket
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # \ud83d: half of a pair, or a lone one
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_MAIN, _AGENT = "main", "agent"  # stream kinds: streams are keyed by (kind, session or agent id)
# Record types Claude Code writes (SOURCES.md); new ones keep coming, but each of its files holds a
# message, or a record with one of these keys or types.
_CLAUDE_CODE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "progress",
        "attachment",
        "file-history-snapshot",
        "queue-operation",
        "last-prompt",
        "permission-mode",
        "mode",
        "ai-title",
        "custom-title",
        "pr-link",
        "worktree-state",
        "agent-name",
    }
)
_CLAUDE_CODE_KEYS = ("sessionId", "uuid", "leafUuid", "agentId")  # agentId: a workflow journal.jsonl


def read_file(
    path: Path,
    *,
    agent_id: str | None = None,
    session_id: str | None = None,
    known_agents: frozenset[str] = frozenset(),
) -> tuple[list[Transcript], SkipReport]:
    """Parse one transcript file into its conversation streams.

    `agent_id` says the file is a sub-agent file (``agent-<id>.jsonl``) of that agent: its records
    form sub-agent streams even when they lack ``isSidechain``/``agentId``. `session_id`, when
    given, is the session every sub-agent stream of the file belongs to, whatever its records say
    (discovery knows it from the ``<session>/subagents/`` folder). Content problems are never
    raised; they are counted in the returned :class:`SkipReport`. Streams without any message are
    not returned, so a file holding no Claude Code message records yields ``[]``. Sub-agent messages
    that newer versions copy into ``agent_progress`` records become that agent's stream, unless the
    agent is in `known_agents` (it has its own file, read separately).

    Raises :class:`TranscriptError` only when the file cannot be read at all.
    """
    report = SkipReport()
    records = read_records(path, report, _claude_long_values, _kept)
    if not records and report.total and not _damaged_json_lines(path):
        # Not one line is a JSON object (a text file, an indented JSON document): a file in another
        # format, not a damaged transcript, so its lines are not counted as damaged ones.
        report.counts.clear()
        _note_other_format(report, path)
    return _Assembler(path, agent_id, session_id, report, known_agents).run(records), report


def _damaged_json_lines(path: Path) -> bool:
    """Whether a file none of whose lines is a JSON object is still JSON lines, each one damaged: most
    of its lines start an object (records cut short, a session half written), and the whole file is
    not one JSON document written over several lines. A README or notes file quoting a JSON snippet
    or two is text, not 300 damaged lines. Read a piece at a time (a file of gigabytes with no record
    in it is no reason to hold it), but for a document whose first megabyte of lines is valid JSON
    so far (:func:`_one_document`)."""
    starts = filled = 0
    with path.open("rb") as handle:
        new_line, blank = True, True
        while piece := handle.readline(WINDOW_BYTES):
            if new_line:
                starts += _OBJECT_LINE.match(piece) is not None
                blank = True
            blank = blank and not piece.strip()
            new_line = piece.endswith(b"\n")
            filled += new_line and not blank
        filled += not new_line and not blank
    if not starts or 2 * starts < filled:
        return False
    return not _one_document(path)


_DOCUMENT_PROBE = 1 << 20  # the bytes of a file parsed to tell a JSON document from damaged JSON lines


def _one_document(path: Path) -> bool:
    """Whether the file at ``path`` is one JSON document. Its first :data:`_DOCUMENT_PROBE` bytes (up to
    the last line's end in them, else a whole character) are parsed first: an error before their end
    settles it without the rest (damaged JSON lines fail in their first line); only a file valid
    that far is read whole."""
    with path.open("rb") as handle:
        head = handle.read(_DOCUMENT_PROBE + 1)
    if len(head) > _DOCUMENT_PROBE:
        end = head.rfind(b"\n", 0, _DOCUMENT_PROBE) + 1
        if end == 0:  # one long line: cut before an unfinished UTF-8 character
            end = _DOCUMENT_PROBE
            while end and 0x80 <= head[end - 1] < 0xC0:
                end -= 1
            end -= end > 0 and head[end - 1] >= 0xC0
        start = len(_BOM) if head.startswith(_BOM) else 0
        try:
            orjson.loads(memoryview(head)[start:end])
        except orjson.JSONDecodeError as e:
            if e.pos < end - start - 16:  # not where the cut ended a value early: the document is not valid
                return False
        head = read_bytes(path)
    try:
        orjson.loads(head.removeprefix(_BOM))
    except orjson.JSONDecodeError:
        return False
    return True


def _note_other_format(report: SkipReport, path: Path) -> None:
    """Count a file in no format the reader knows once, and name it for the ingest's note."""
    report.add(SkipReason.OTHER_FORMAT)
    report.other_format.append(path)


def line_uuid(line_no: int, sub: int) -> str:
    """The id of a record that has none, from where it stands: its line, and its place on the line
    when one line holds several (``sub``). A transcript only grows, so the id stays the same."""
    return f"line-{line_no}" if sub == 0 else f"line-{line_no}.{sub}"


def read_bytes(path: Path) -> bytes:
    """A transcript file's bytes; :class:`TranscriptError` (saying what to check) when unreadable."""
    try:
        return path.read_bytes()
    except OSError as e:
        raise TranscriptError(
            f"Cannot read transcript file {path}: {e.strerror or e}. Check that it exists and is readable."
        ) from e


# --- lines → records ------------------------------------------------------------------------------


def read_records(
    path: Path,
    report: SkipReport,
    long_values: LongRule | None = None,
    shape: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> list[tuple[int, int, dict[str, Any]]]:
    """(line number, index on the line, record) for every JSON object of the file at ``path``, read a
    line at a time: the file's bytes are never held whole.

    The fast path hands each line's bytes to ``orjson.loads`` (about 3× ``json.loads`` on the corpus:
    ``benchmarks/json_parse.py``). A line it refuses (damaged, two records run together, invalid
    UTF-8, or JSON orjson is stricter about, such as NaN) takes the slow path, which decodes the
    text itself and keeps every complete value the standard library reads. orjson reads an integer
    beyond 64 bits as a float (its digits past the 17th lost); transcripts hold such numbers only
    inside tool input, where they are rare, so the fast path is kept for every line.

    The file is read as it stood when opened: lines appended while it is read wait for the next
    ingest, and a line being written then (cut by that end) is its truncated last line.
    ``long_values``: how the file's format puts a string value of many megabytes back into its record
    (see :mod:`longvalue`); with it, a long line is read in pieces and such values stay in the file,
    even when the line is damaged (:func:`_damaged_long_line`); without it a long line is read whole.
    ``shape``: what of each record to keep, applied as it is read (a record's parts nothing reads
    are not held while the rest of the file is read). Raises :class:`TranscriptError` when the file
    cannot be read.
    """
    try:
        with path.open("rb") as handle:
            return _decode(handle, os.fstat(handle.fileno()).st_size, report, path, long_values, shape)
    except OSError as e:
        raise TranscriptError(
            f"Cannot read transcript file {path}: {e.strerror or e}. Check that it exists and is readable."
        ) from e


def _decode(
    handle: BinaryIO,
    size: int,
    report: SkipReport,
    path: Path,
    long_values: LongRule | None,
    shape: Callable[[dict[str, Any]], dict[str, Any]] | None,
) -> list[tuple[int, int, dict[str, Any]]]:
    """The records of ``handle``'s first ``size`` bytes, a line at a time (:func:`read_records`); a
    line of :data:`LONG_LINE_BYTES` or more is read on in pieces, and with ``long_values`` its long
    string values stay in the file at ``path``."""
    offset = len(_BOM) if handle.read(len(_BOM)) == _BOM else 0
    handle.seek(offset)
    limit = LONG_LINE_BYTES
    loads = orjson.loads
    out: list[tuple[int, int, dict[str, Any]]] = []
    append = out.append
    if shape is not None:

        def append(item: tuple[int, int, dict[str, Any]]) -> None:
            out.append((item[0], item[1], shape(item[2])))

    line_no = 0
    while offset < size:
        start = offset
        line = handle.readline(min(limit, size - offset))
        if not line:  # the file is shorter than it was when opened
            break
        offset += len(line)
        line_no += 1
        ended = line[-1] == _NEWLINE
        if not ended and len(line) >= limit:  # a long line: read on in pieces
            scanner = LineScanner(path, start) if long_values is not None else None
            pieces = [line]
            while not ended and offset < size:
                if scanner is not None:
                    scanner.feed(pieces.pop())
                piece = handle.readline(min(WINDOW_BYTES, size - offset))
                if not piece:
                    break
                offset += len(piece)
                ended = piece[-1] == _NEWLINE
                pieces.append(piece)
            line = b"".join(pieces)  # the whole line, or (read by the scanner) its last piece
            del pieces
            if scanner is not None and long_values is not None:
                scanner.feed(line)
                rest = _scanned_line(scanner, line_no, not ended, long_values, append, report)
                del scanner
                if rest is None:
                    continue
                if not rest:  # read it again whole: only the ordinary path can say what it holds
                    handle.seek(start)
                    rest = handle.read(offset - start)
                    handle.seek(offset)
                line = rest
        if _BLANK_BYTES.fullmatch(line):
            continue
        try:
            value = loads(line)
        except orjson.JSONDecodeError:
            _slow_line(memoryview(line)[: len(line) - ended], line_no, not ended, append, report)
            continue
        if type(value) is dict:
            # _within_depth, written out: its call cost more than the count (a tenth of reading the line)
            if len(line) - len(line.translate(None, b"[{")) > MAX_DEPTH and _cut_deep(cast("dict[str, Any]", value)):
                report.add(SkipReason.DEEP_VALUE)
            append((line_no, 0, cast("dict[str, Any]", value)))
        else:
            report.add(SkipReason.NOT_AN_OBJECT)
    return out


def _within_depth(record: dict[str, Any], source: bytes | str, report: SkipReport) -> dict[str, Any]:
    """`record`, decoded from `source`, with each container nested deeper than :data:`MAX_DEPTH`
    replaced by :data:`DEEP_VALUE`, counted once when there was one. Only a source holding more
    brackets than that is walked: counting them costs a fraction of reading the line."""
    if isinstance(source, bytes):  # its length less that without them: about twice as fast as two counts
        brackets = len(source) - len(source.translate(None, b"[{"))
    else:
        brackets = source.count("[") + source.count("{")
    if brackets > MAX_DEPTH and _cut_deep(record):
        report.add(SkipReason.DEEP_VALUE)
    return record


def _cut_deep(record: dict[str, Any]) -> bool:
    """Replace, in place, each container of `record` nested deeper than :data:`MAX_DEPTH` (the record
    itself is the first level) by :data:`DEEP_VALUE`; whether one was. A walk, not a recursion."""
    cut = False
    stack: list[tuple[Any, int]] = [(record, 1)]
    while stack:
        node, depth = stack.pop()
        for key, child in node.items() if type(node) is dict else enumerate(node):
            if type(child) is dict or type(child) is list:
                if depth >= MAX_DEPTH:
                    node[key] = DEEP_VALUE  # a value replaced, no key added: the walk goes on
                    cut = True
                else:
                    stack.append((child, depth + 1))
    return cut


def _read_value(text: str, start: int) -> tuple[Any, int, bool]:
    """The JSON value at `start` of `text`, the index after it, and whether it was read cut
    (:func:`_cut_text`): nested deeper than the standard library reads. Raises ValueError."""
    try:
        value, stop = _DECODER.raw_decode(text, start)
        return value, stop, False
    except RecursionError:
        cut = _cut_text(text, start)
        if cut is None:
            raise ValueError("a value nested too deep that does not end on its line") from None
        return _DECODER.decode(cut[0]), cut[1], True


def _cut_text(text: str, start: int) -> tuple[str, int] | None:
    """The JSON text of the container opening at `start` in `text` with each container nested in it
    deeper than :data:`MAX_DEPTH` replaced by :data:`DEEP_VALUE`, and the index after its end (what
    :func:`_cut_deep` makes of a value the standard library reads without running out of recursion);
    None when it does not end on the line."""
    parts: list[str] = []
    depth, kept = 0, start
    for token in _JSON_STRUCTURE.finditer(text, start):
        mark = token.group()
        if mark[0] == '"':
            if depth == 0:  # a string, not a container, opens the value
                return None
        elif mark in "[{":
            depth += 1
            if depth == MAX_DEPTH + 1:
                parts.append(text[kept : token.start()])
        else:
            depth -= 1
            if depth == MAX_DEPTH:
                parts.append(_DEEP_JSON)
                kept = token.end()
            elif depth <= 0:
                parts.append(text[kept : token.end()])
                return ("".join(parts), token.end()) if depth == 0 else None
    return None


def loads(text: str | bytes) -> Any:
    """``json.loads``, each lone surrogate in the strings it decodes replaced by U+FFFD.

    The standard library decodes ``\\ud83d`` without its other half (a tool output cut inside an
    emoji, as JavaScript's ``JSON.stringify`` writes it) to a code point no UTF-8 text may hold, and
    storing it failed the whole file ("UnicodeEncodeError: surrogates not allowed")."""
    return without_lone_surrogates(json.loads(text), text)


def without_lone_surrogates(value: Any, source: str | bytes) -> Any:
    """``value``, decoded from the JSON text ``source``, with each lone surrogate replaced by U+FFFD
    (only searched for when ``source`` escapes one)."""
    if isinstance(source, str):
        escaped = _SURROGATE_ESCAPE.search(source) is not None
    else:
        escaped = _SURROGATE_ESCAPE_BYTES.search(source) is not None
    return _replaced(value) if escaped else value


def _replaced(value: Any) -> Any:
    if type(value) is str:
        return replace_lone_surrogates(value)
    if type(value) is dict:
        return {_replaced(k): _replaced(v) for k, v in cast("dict[str, Any]", value).items()}
    if type(value) is list:
        return [_replaced(v) for v in value]
    return value


def _scanned_line(
    scanner: LineScanner,
    line_no: int,
    is_last: bool,
    long_values: LongRule,
    append: Callable[[tuple[int, int, dict[str, Any]]], None],
    report: SkipReport,
) -> bytes | None:
    """Read the records of a long line :class:`LineScanner` was fed, its long values left in the
    file: None when that is done (the line's record kept, or a damaged line's whole records, read by
    :func:`_damaged_long_line`); else the bytes the ordinary path reads: the line itself when it
    holds no long value, or none when only the line read whole can tell (a string of its record
    looks like a placeholder)."""
    scanned = scanner.finish()
    if scanned is not None and not scanned[1]:  # no long value in it: what was kept is the line
        return scanned[0]
    cut = scanned is None  # damaged inside a long value
    kept, values = scanner.before_damage() if scanned is None else scanned
    record = None if cut else _long_line_record(kept, values, long_values, report)
    if record is False:
        return b""
    if record is not None:
        append((line_no, 0, record))
    else:
        _damaged_long_line(kept, values, line_no, is_last, cut, long_values, append, report)
    return None


def _long_line_record(
    kept: bytes, values: dict[str, LongValue], long_values: LongRule, report: SkipReport
) -> dict[str, Any] | Literal[False] | None:
    """The record of a long line from what :class:`LineScanner` kept of it, its long values put back
    by the format's rule; None when it is no valid JSON object (:func:`_damaged_long_line` reads
    it), False when the rule did not put back every long value once (a string of the record looks
    like a placeholder: the ordinary path then reads the line whole)."""
    try:
        parsed = orjson.loads(kept)
    except orjson.JSONDecodeError:
        return None
    if type(parsed) is not dict:
        return None
    cut = SkipReport()  # counted once the record is kept: else the ordinary path reads and counts it
    holes = Placeholders(values)
    try:
        record = long_values(_within_depth(cast("dict[str, Any]", parsed), kept, cut), holes)
    except ValueError:
        return False
    if not holes.complete:
        return False
    report.merge(cut)
    return record


def _damaged_long_line(
    kept: bytes,
    values: dict[str, LongValue],
    line_no: int,
    is_last: bool,
    cut: bool,
    long_values: LongRule,
    append: Callable[[tuple[int, int, dict[str, Any]]], None],
    report: SkipReport,
) -> None:
    """A long line that is not one valid record (two records run together, a damaged byte, a line cut
    short), read as the ordinary path reads such a line (:func:`_slow_line`), from what
    :class:`LineScanner` kept of it: its long values stay in the file, placeholders in their place,
    put back into each whole record by the format's rule. ``cut``: the line is damaged inside a long
    value (``kept`` ends at its opening quote), so the record holding it is counted as broken."""
    holes = Placeholders(values)

    def put_back(item: tuple[int, int, dict[str, Any]]) -> None:
        try:
            append((item[0], item[1], long_values(item[2], holes)))
        except ValueError:  # a placeholder twice: a record no transcript writes
            report.add(SkipReason.INVALID_JSON)

    if cut:
        _recover_line(str(kept, "utf-8", errors="replace"), line_no, is_last, put_back, report, cut=True)
    else:
        _slow_line(memoryview(kept), line_no, is_last, put_back, report)


def _claude_long_values(record: dict[str, Any], holes: Placeholders) -> dict[str, Any]:
    """A Claude Code record's long values put back: its message texts and tool outputs stay in the
    file; the record's ``toolUseResult`` (Claude Code's copy of the output, its ``stdout`` or file
    ``content``) keeps only the head of such a value: sub-agent and team linking read its short
    fields (an agent id, a sender), and nothing reads its copy of the output; any other is whole."""
    message = as_object(record.get("message"))
    if message is not None and record.get("type") in ("user", "assistant"):
        content = message.get("content")
        if type(content) is str:
            holes.lazy(message, "content")
        elif (items := as_array(content)) is not None:
            for item in items:
                block = as_object(item)
                if block is not None and block.get("type") == "text":
                    holes.lazy(block, "text")
                elif block is not None and block.get("type") == "tool_result":
                    if not holes.lazy(block, "content") and (part := _only_text_part(block.get("content"))):
                        holes.lazy(part, "text")
    if "toolUseResult" in record:
        record["toolUseResult"] = holes.put_back(record["toolUseResult"], "head")
    return cast("dict[str, Any]", holes.put_back(record))


# What ingest reads of a message's ``toolUseResult`` (:mod:`causantic.ingest.subagents` and
# :mod:`causantic.ingest.teams`); the rest (a copy of the output, a whole edited file) is not kept.
_LINKING_KEYS = ("agentId", "name", "runId", "transcriptDir", "isAsync", "status", "routing")
# What the assembler reads of a record that is neither a message nor an agent's progress.
_OTHER_KEYS = ("type", "isSidechain", *_CLAUDE_CODE_KEYS)


def _kept(record: dict[str, Any]) -> dict[str, Any]:
    """What :class:`_Assembler` reads of a record, kept while the rest of the file is read: half of a
    session's records is often Claude Code's copies of outputs and files, and snapshots."""
    kind = record.get("type")
    if kind == "user" or kind == "assistant":
        result = record.get("toolUseResult")
        if result is not None:
            linking = {k: result[k] for k in _LINKING_KEYS if k in result} if type(result) is dict else None
            record["toolUseResult"] = linking
        return record
    if kind == "progress":
        return record
    return {key: record[key] for key in _OTHER_KEYS if key in record}


def _only_text_part(content: Any) -> dict[str, Any] | None:
    """The one block of a tool result's content list when it is all the result's text (a text
    block, whatever its type says, as :func:`_flatten_result` reads it), else None."""
    items = as_array(content)
    part = as_object(items[0]) if items is not None and len(items) == 1 else None
    if part is None or part.get("type") in ("image", "document", "tool_reference") or "text" not in part:
        return None
    return part


def _slow_line(
    raw: memoryview,
    line_no: int,
    is_last: bool,
    append: Callable[[tuple[int, int, dict[str, Any]]], None],
    report: SkipReport,
) -> None:
    """A line orjson refused: decode it (a stray invalid byte costs that character, not the record)
    and keep what the standard library can read of it."""
    try:
        text = str(raw, "utf-8")
    except UnicodeDecodeError as e:
        cut_text = _before_cut_character(bytes(raw), e)
        if cut_text is not None:  # the line was cut inside a character: a cut record, not an encoding problem
            _recover_line(cut_text, line_no, is_last, append, report, cut=True)
            return
        text = str(raw, "utf-8", errors="replace")
    _recover_line(text, line_no, is_last, append, report)


def _before_cut_character(raw: bytes, error: UnicodeDecodeError) -> str | None:
    """The text of `raw` before an incomplete UTF-8 sequence at its very end, else None."""
    if error.reason != "unexpected end of data" or error.end != len(raw):
        return None
    try:
        return raw[: error.start].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _recover_line(
    text: str,
    line_no: int,
    is_last: bool,
    append: Callable[[tuple[int, int, dict[str, Any]]], None],
    report: SkipReport,
    *,
    cut: bool = False,
) -> None:
    """Slow path for a line that is not exactly one JSON value: keep every complete value, and
    count an undecodable rest once (`cut`: the line is known to end in a broken record).

    Claude Code 2.1.7-2.1.12 sometimes wrote two records with no newline between them.
    """
    index, end, sub = 0, len(text), 0
    while True:
        gap = _WHITESPACE.match(text, index)
        index = gap.end() if gap else index
        if index >= end and not cut:
            return
        try:
            if index >= end:
                raise ValueError("the line ends inside a character")
            value, stop, deep = _read_value(text, index)
        except ValueError:
            report.add(SkipReason.TRUNCATED_LAST_LINE if is_last else SkipReason.INVALID_JSON)
            return
        source, index = text[index:stop], stop
        if type(value) is dict:
            if deep:
                report.add(SkipReason.DEEP_VALUE)
            else:  # cut before its strings are walked for lone surrogates, a recursion
                value = _within_depth(cast("dict[str, Any]", value), source, report)
            append((line_no, sub, without_lone_surrogates(value, source)))
            sub += 1
        else:
            report.add(SkipReason.NOT_AN_OBJECT)


# --- records → transcripts ------------------------------------------------------------------------


def _is_claude_code(record: dict[str, Any]) -> bool:
    """Whether a record is one Claude Code writes (any kind, message or not)."""
    return record.get("type") in _CLAUDE_CODE_TYPES or any(key in record for key in _CLAUDE_CODE_KEYS)


@dataclass(slots=True)
class _Pending:
    """A message being assembled from one or more records."""

    uuid: str
    role: str
    timestamp: datetime | None
    line_no: int
    is_sidechain: bool
    is_meta_flag: bool
    tool_use_result: Any
    blocks: list[Block]
    parent_uuid: str | None = None


@dataclass(slots=True)
class _Stream:
    session_id: str
    agent_id: str | None
    first_line: int
    cwd: str | None = None
    later_cwds: list[str] = field(default_factory=list[str])  # Transcript.later_cwds
    pending: list[_Pending] = field(default_factory=list[_Pending])
    by_message_id: dict[str, _Pending] = field(default_factory=dict[str, _Pending])
    uuids: set[str] = field(default_factory=set[str])
    progress: list[AgentProgress] = field(default_factory=list[AgentProgress])
    progress_keys: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])


class _Assembler:
    """Turns decoded records of one file into transcripts (see the module docstring for the rules)."""

    def __init__(
        self,
        path: Path,
        agent_id: str | None,
        session_id: str | None,
        report: SkipReport,
        known_agents: frozenset[str] = frozenset(),
    ) -> None:
        self.known_agents = known_agents  # agents with their own file: progress copies are not needed
        self.path = path
        self.file_agent_id = agent_id
        self.file_session_id = session_id
        self.report = report

    def run(self, records: list[tuple[int, int, dict[str, Any]]]) -> list[Transcript]:
        messages: list[tuple[int, int, dict[str, Any]]] = []
        progress: list[tuple[int, dict[str, Any]]] = []
        skip = self.report.add
        for line_no, sub, rec in records:
            kind = rec.get("type")
            if kind == "user" or kind == "assistant":
                message = as_object(rec.get("message"))
                if message is not None and isinstance(message.get("content"), str | list | LongValue):
                    messages.append((line_no, sub, rec))
                else:
                    skip(SkipReason.MALFORMED_MESSAGE)
            elif kind == "progress" and _is_agent_progress(rec):
                progress.append((line_no, rec))
                carried = _carried_message(rec)
                if carried is not None and carried["agentId"] not in self.known_agents:
                    messages.append((line_no, sub, carried))
            else:
                skip(SkipReason.NON_MESSAGE)
        if not messages:
            if records and not any(_is_claude_code(rec) for _, _, rec in records):
                # Another agent's transcript (Cursor, Copilot CLI, Kiro...): said once, not as N ignored records.
                _note_other_format(self.report, self.path)
            return []

        keys = self._stream_keys(messages)
        streams: dict[tuple[str, str], _Stream] = {}
        for (line_no, sub, rec), (kind, stream_id, session_id) in zip(messages, keys, strict=True):
            stream = streams.get((kind, stream_id))
            if stream is None:
                agent = None if kind == _MAIN else stream_id
                stream = streams[(kind, stream_id)] = _Stream(session_id, agent, line_no)
            self._add_message(stream, line_no, sub, rec)
        for line_no, rec in progress:
            self._add_progress(streams, line_no, rec)

        line_of = {
            uuid: line_no
            for line_no, _, rec in records
            if isinstance(uuid := rec.get("uuid"), str) and rec.get("isSidechain") is not True
        }
        transcripts: list[Transcript] = []
        for stream in sorted(streams.values(), key=lambda s: s.first_line):
            built = tuple(self._finish(stream, p) for p in stream.pending if p.blocks)
            if stream.agent_id is None:
                built = mark_claude_rewinds(built, line_of)
            empty = len(stream.pending) - len(built)
            if empty:
                skip(SkipReason.EMPTY_MESSAGE, empty)
            if built:
                transcripts.append(
                    Transcript(
                        path=self.path,
                        session_id=stream.session_id,
                        agent_id=stream.agent_id,
                        messages=built,
                        cwd=stream.cwd,
                        progress=tuple(stream.progress),
                        later_cwds=tuple(stream.later_cwds),
                    )
                )
        return transcripts

    # -- stream assignment --

    def _stream_keys(self, messages: list[tuple[int, int, dict[str, Any]]]) -> list[tuple[str, str, str]]:
        """(kind, stream id, session id) per message record."""
        default_session = next(
            (s for _, _, r in messages if isinstance(s := r.get("sessionId"), str) and s), self.path.stem
        )
        keys: list[tuple[str, str, str]] = []
        run_of_uuid: dict[str, str] = {}  # inline sidechain record uuid → its run's synthetic id
        previous_run: str | None = None
        agent_sessions: dict[str, str] = {}
        last_main_session = default_session
        for line_no, _, rec in messages:
            session = rec.get("sessionId")
            if not isinstance(session, str) or not session:
                session = None
            agent = rec.get("agentId")
            agent = agent if isinstance(agent, str) and agent else None
            if self.file_agent_id is not None or rec.get("isSidechain") is True:
                if agent is None:
                    agent = self.file_agent_id
                if agent is None:
                    agent = self._sidechain_run(rec, line_no, run_of_uuid, previous_run)
                    previous_run = agent
                else:
                    previous_run = None
                agent_session = agent_sessions.setdefault(agent, self.file_session_id or session or last_main_session)
                keys.append((_AGENT, agent, agent_session))
            else:
                previous_run = None
                last_main_session = session or last_main_session
                keys.append((_MAIN, last_main_session, last_main_session))
        _move_handed_over_prompts(messages, keys)
        return keys

    @staticmethod
    def _sidechain_run(rec: dict[str, Any], line_no: int, run_of_uuid: dict[str, str], previous_run: str | None) -> str:
        parent = rec.get("parentUuid")
        run = run_of_uuid.get(parent) if isinstance(parent, str) else None
        if run is None:
            starts_chain = not parent and rec.get("type") == "user"
            if previous_run is not None and not starts_chain:
                run = previous_run
            else:
                uuid = rec.get("uuid")
                run = "sidechain-" + (uuid[:8] if isinstance(uuid, str) and uuid else f"L{line_no}")
        uuid = rec.get("uuid")
        if isinstance(uuid, str):
            run_of_uuid.setdefault(uuid, run)
        return run

    # -- messages --

    def _add_message(self, stream: _Stream, line_no: int, sub: int, rec: dict[str, Any]) -> None:
        uuid = rec.get("uuid")
        if isinstance(uuid, str) and uuid:
            if uuid in stream.uuids:
                self.report.add(SkipReason.DUPLICATE_RECORD)
                return
            stream.uuids.add(uuid)
        else:
            uuid = line_uuid(line_no, sub)
        cwd = rec.get("cwd")
        if isinstance(cwd, str) and cwd:
            if stream.cwd is None:
                stream.cwd = cwd
            elif cwd != stream.cwd and cwd not in stream.later_cwds:
                stream.later_cwds.append(cwd)
        message = rec["message"]
        role = rec["type"]
        blocks = parse_blocks(message["content"])
        message_id = message.get("id") if role == "assistant" else None
        if isinstance(message_id, str) and message_id:
            earlier = stream.by_message_id.get(message_id)
            if earlier is not None:
                for block in blocks:
                    if block not in earlier.blocks:
                        earlier.blocks.append(block)
                return
        pending = _Pending(
            uuid=uuid,
            role=role,
            timestamp=parse_time(rec.get("timestamp")),
            line_no=line_no,
            is_sidechain=rec.get("isSidechain") is True,
            is_meta_flag=role == "user"
            and (
                rec.get("isMeta") is True
                or rec.get("isCompactSummary") is True
                or rec.get("isVisibleInTranscriptOnly") is True
            ),
            tool_use_result=rec.get("toolUseResult"),
            blocks=blocks,
            parent_uuid=parent if isinstance(parent := rec.get("parentUuid"), str) and parent else None,
        )
        stream.pending.append(pending)
        if isinstance(message_id, str) and message_id:
            stream.by_message_id[message_id] = pending

    def _finish(self, stream: _Stream, p: _Pending) -> Message:
        blocks = tuple(p.blocks)
        return Message(
            uuid=p.uuid,
            role="user" if p.role == "user" else "assistant",
            timestamp=p.timestamp,
            blocks=blocks,
            session_id=stream.session_id,
            line_no=p.line_no,
            agent_id=stream.agent_id,
            is_sidechain=p.is_sidechain,
            is_meta=p.role == "user" and (p.is_meta_flag or _all_injected(blocks)),
            tool_use_result=p.tool_use_result,
            parent_uuid=p.parent_uuid,
        )

    # -- progress --

    def _add_progress(self, streams: dict[tuple[str, str], _Stream], line_no: int, rec: dict[str, Any]) -> None:
        own = rec.get("agentId")
        own = own if isinstance(own, str) and own else None
        if self.file_agent_id is not None or (rec.get("isSidechain") is True and own):
            stream = streams.get((_AGENT, own or self.file_agent_id or ""))
        else:
            session = rec.get("sessionId")
            if isinstance(session, str) and session:
                stream = streams.get((_MAIN, session))
            else:
                stream = next((s for k, s in streams.items() if k[0] == _MAIN), None)
        if stream is None:
            self.report.add(SkipReason.NON_MESSAGE)
            return
        data = rec["data"]
        key = (data["agentId"], rec["parentToolUseID"])
        if key in stream.progress_keys:
            return
        stream.progress_keys.add(key)
        stream.progress.append(AgentProgress(key[0], key[1], parse_time(rec.get("timestamp"))))


def _carried_message(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The sub-agent message an agent_progress record carries (Claude Code 2.1.x), as a sidechain
    message record of that agent; None when it carries none."""
    inner = as_object(rec["data"].get("message"))
    if inner is None or inner.get("type") not in ("user", "assistant"):
        return None
    message = as_object(inner.get("message"))
    if message is None or not isinstance(message.get("content"), str | list):
        return None
    return {
        "type": inner["type"],
        "message": message,
        "uuid": inner.get("uuid"),
        "timestamp": inner.get("timestamp") or rec.get("timestamp"),
        "sessionId": rec.get("sessionId"),
        "cwd": rec.get("cwd"),
        "isSidechain": True,
        "agentId": rec["data"]["agentId"],
    }


def _is_agent_progress(rec: dict[str, Any]) -> bool:
    data = as_object(rec.get("data"))
    return (
        data is not None
        and data.get("type") == "agent_progress"
        and isinstance(data.get("agentId"), str)
        and bool(data["agentId"])
        and isinstance(rec.get("parentToolUseID"), str)
    )


def _move_handed_over_prompts(
    messages: list[tuple[int, int, dict[str, Any]]], keys: list[tuple[str, str, str]]
) -> None:
    """Apply the plan-mode hand-over correction described in the module docstring, in place."""
    main = [i for i, k in enumerate(keys) if k[0] == _MAIN]
    if len({keys[i][2] for i in main}) < 2:
        return
    last_of_session = {keys[i][2]: i for i in main}
    for here, after in zip(main, main[1:], strict=False):
        rec, nxt = messages[here][2], messages[after][2]
        session, next_session = keys[here][2], keys[after][2]
        if (
            session != next_session
            and last_of_session[session] == here
            and rec.get("type") == "user"
            and nxt.get("type") == "assistant"
            and isinstance(rec.get("uuid"), str)
            and nxt.get("parentUuid") == rec.get("uuid")
        ):
            keys[here] = (_MAIN, next_session, next_session)


# --- content ----------------------------------------------------------------------------------------


def parse_blocks(content: str | list[Any] | LongValue) -> list[Block]:
    """Typed blocks of `message.content`; unknown block kinds are dropped."""
    if isinstance(content, str):
        return [TextBlock(content)] if content.strip() else []
    if isinstance(content, LongValue):
        return [] if content.blank else [TextBlock(content.head, content.text)]
    blocks: list[Block] = []
    for value in content:
        item = as_object(value)
        if item is None:
            if isinstance(value, str) and value.strip():
                blocks.append(TextBlock(value))
            continue
        kind = item.get("type")
        if kind == "text":
            text = item.get("text")
            if isinstance(text, str) and text.strip():
                blocks.append(TextBlock(text))
            elif isinstance(text, LongValue) and not text.blank:
                blocks.append(TextBlock(text.head, text.text))
        elif kind == "tool_use":
            raw_input = item.get("input")
            tool_input = as_object(raw_input)
            if tool_input is None:
                tool_input = {} if raw_input is None else {"input": raw_input}
            blocks.append(ToolCall(as_str(item.get("id")), as_str(item.get("name")), tool_input))
        elif kind == "tool_result":
            call_id, failed, output = as_str(item.get("tool_use_id")), item.get("is_error") is True, item.get("content")
            if (part := _only_text_part(output)) is not None and isinstance(part["text"], LongValue):
                output = part["text"]
            if isinstance(output, LongValue):  # an output of many megabytes, left in the file
                blocks.append(ToolResult(call_id, output.head, failed, output.text, output.tail))
            else:
                blocks.append(ToolResult(call_id, _flatten_result(output), failed))
        elif kind == "thinking":
            text = item.get("thinking")
            if not isinstance(text, str):
                text = item.get("text")
            if isinstance(text, str) and text.strip():
                blocks.append(ThinkingBlock(text))
        elif kind == "image":
            blocks.append(TextBlock("[image]"))
        elif kind == "document":
            blocks.append(TextBlock("[document]"))
        # redacted_thinking, fallback, server tool blocks and future kinds carry nothing to index.
    return blocks


def _flatten_result(content: Any) -> str:
    """Text of a tool_result's content: a string, or a list of blocks (images become "[image]")."""
    if isinstance(content, str):
        return content
    values = as_array(content)
    if values is not None:
        parts: list[str] = []
        for value in values:
            if isinstance(value, str):
                parts.append(value)
            elif (item := as_object(value)) is not None:
                kind = item.get("type")
                if kind == "image":
                    parts.append("[image]")
                elif kind == "document":
                    parts.append("[document]")
                elif kind == "tool_reference":
                    parts.append(f"[tool: {as_str(item.get('tool_name'))}]")
                elif isinstance(text := item.get("text"), str):
                    parts.append(text)
        return "\n".join(parts)
    item = as_object(content)
    if item is not None and isinstance(text := item.get("text"), str):
        return text
    return ""


def _all_injected(blocks: tuple[Block, ...]) -> bool:
    """True for a user message whose text is all harness-injected and that carries no tool result."""
    texts = 0
    for block in blocks:
        if type(block) is TextBlock:
            if not is_injected(block.text):
                return False
            texts += 1
        elif type(block) is ToolResult:
            return False
    return texts > 0


def as_object(value: Any) -> dict[str, Any] | None:
    """`value` when it is a JSON object, else None."""
    return cast("dict[str, Any]", value) if type(value) is dict else None


def as_array(value: Any) -> list[Any] | None:
    """`value` when it is a JSON array, else None."""
    return value if isinstance(value, list) else None


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def parse_time(value: Any) -> datetime | None:
    """ISO-8601 text → timezone-aware UTC datetime (naive values are taken as UTC), else None."""
    if type(value) is not str:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
