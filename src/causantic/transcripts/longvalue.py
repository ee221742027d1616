"""A JSON string value of many megabytes, left in its file and decoded a window at a time.

Parsing a 50 MB pasted line whole gives one Python string of 50 million characters, stored at four
bytes a character as soon as it holds one emoji: 200 MB for what the file holds in 50. Here a line
longer than :data:`LONG_LINE_BYTES` is parsed without its long string values: each value longer than
:data:`LONG_VALUE_BYTES` is found in the raw bytes, replaced by a short placeholder, and the rest of
the record is parsed as usual. The value itself becomes a :class:`LongText`: where it lies in the
file, how many characters it has, and a checksum; :meth:`LongText.windows` reads and decodes it
again, window by window, when it is rendered. Each window is its own string, four bytes a character
only if it holds an astral character itself, and is dropped once used.

Windows are cut only between whole escapes and whole UTF-8 characters, and never between the two
halves of a surrogate pair (``\\ud83d\\ude00``), so the windows joined are exactly the value
``json.loads`` gives. While the line is read, every window is decoded once (a damaged value makes the
line fall back to the ordinary path, which counts it as broken), and its characters are counted.

What this module leaves to others: which values may stay in the file (the reader keeps message text
and tool results that way; any other long value is decoded whole, or cut to its head where only that
is read), and how a long text is cleaned and chunked (:mod:`causantic.ingest.longtext`).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from causantic.errors import TranscriptError

LONG_LINE_BYTES = 2 << 20  # a line at least this long has its long string values left in the file
LONG_VALUE_BYTES = 1 << 20  # a string value at least this long (in the file) is left there
WINDOW_BYTES = 1 << 20  # how much of a long value is decoded at a time
HEAD_CHARS = 131_072  # characters of a long value decoded at once (what prompts and titles read)
TAIL_CHARS = 65_536  # characters of its end kept too (where Claude Code appends reminders to a tool result)

# A JSON string token: unrolled, possessive, so a megabyte of plain text is one C-level run.
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_BACKSLASH = 0x5C
_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")


@dataclass(frozen=True, slots=True)
class LongText:
    """A long JSON string value of a transcript line, where its escaped bytes lie in the file.

    ``start``/``end`` delimit the value's content (between its quotes); ``chars`` is the length
    of the decoded text, ``crc`` a checksum of the bytes, so a file rewritten since it was read is
    noticed instead of ingested as something else.
    """

    path: Path
    start: int
    end: int
    chars: int
    crc: int

    def windows(self, window: int | None = None) -> Iterator[str]:
        """The decoded text, in order, a window of about ``window`` (:data:`WINDOW_BYTES`) bytes at a time.

        Raises :class:`TranscriptError` when the file no longer holds the value it held."""
        crc, chars, carry, position = 0, 0, b"", self.start
        try:
            with self.path.open("rb") as handle:
                handle.seek(position)
                while position < self.end:
                    want = min(max(window or WINDOW_BYTES, 64), self.end - position)
                    read = handle.read(want)
                    if len(read) != want:
                        raise ValueError("the file is shorter")
                    position += want
                    block = carry + read
                    cut = len(block) if position >= self.end else safe_cut(block, 0, len(block) - 1)
                    raw, carry = block[:cut], block[cut:]
                    crc = zlib.crc32(raw, crc)
                    text = decode_window(raw)
                    chars += len(text)
                    yield text
        except (OSError, ValueError) as e:
            raise self._changed() from e
        if crc != self.crc or chars != self.chars:
            raise self._changed()

    def _changed(self) -> TranscriptError:
        return TranscriptError(
            f"{self.path} changed while it was read (a long message is no longer where it was). Ingest it again."
        )


def decode_window(raw: bytes | memoryview) -> str:
    """The text of a run of JSON string content (no quotes around it), as the reader decodes a line:
    orjson first, the standard library for what orjson refuses (a lone surrogate); ValueError when
    it is not valid string content."""
    quoted = b'"' + bytes(raw) + b'"'
    try:
        value = orjson.loads(quoted)
    except orjson.JSONDecodeError:
        value = json.loads(quoted.decode("utf-8"))
        if type(value) is str:
            value = replace_lone_surrogates(value)
    if type(value) is not str:  # unreachable for valid content; a guard against "a" "b" tricks
        raise ValueError("not one JSON string")
    return value


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # in a decoded str, only a lone half of a pair is left


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (half of an emoji cut in two, which the standard library
    decodes from ``\\ud83d``) replaced by U+FFFD, one character for one: no UTF-8 text may hold it."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def safe_cut(raw: bytes | memoryview, start: int, target: int) -> int:
    """The last place at or before ``target`` (and after ``start``) where ``raw[start:]``, string
    content beginning at an escape boundary, may be cut: not inside an escape, a UTF-8 character or
    a surrogate pair; ``start`` when there is none (valid content always has one when
    ``target - start >= 16``)."""
    q = target
    while q > start and 0x80 <= raw[q] < 0xC0:  # a UTF-8 continuation byte: inside a character
        q -= 1
    # The last backslash in the 6 bytes before q: if it opens an escape reaching past q, cut before it.
    for b in range(q - 1, max(start, q - 6) - 1, -1):
        if raw[b] == _BACKSLASH:
            if _opens_escape(raw, start, b) and b + (6 if raw[b + 1] == 0x75 else 2) > q:
                q = b
            break
    # A high surrogate right before q: its low half may follow, so cut before it too.
    if q - 6 >= start and _HIGH_SURROGATE.fullmatch(bytes(raw[q - 6 : q])) and _opens_escape(raw, start, q - 6):
        q -= 6
    return q


def _opens_escape(raw: bytes | memoryview, start: int, b: int) -> bool:
    """Whether the backslash at ``b`` opens an escape (an odd run of backslashes ends there; the
    run cannot reach before ``start``, an escape boundary)."""
    run = bytes(raw[start : b + 1])
    return (len(run) - len(run.rstrip(b"\\"))) % 2 == 1


def raw_windows(raw: memoryview, window: int | None = None) -> Iterator[memoryview]:
    """``raw`` (string content) in windows of about ``window`` (:data:`WINDOW_BYTES`) bytes, each
    cut by :func:`safe_cut`."""
    window = window or WINDOW_BYTES
    start, end = 0, len(raw)
    while start < end:
        cut = end if end - start <= window else safe_cut(raw, start, start + window)
        if cut <= start:  # no place to cut: not valid content (a run of stray bytes), which decoding reports
            cut = start + window
        yield raw[start:cut]
        start = cut


@dataclass(frozen=True, slots=True)
class LongValue:
    """What a placeholder of a parsed long line stands for."""

    text: LongText
    head: str  # its first :data:`HEAD_CHARS` characters
    blank: bool  # only whitespace
    tail: str = ""  # its last :data:`TAIL_CHARS` characters


def parse_long_line(data: bytes, start: int, end: int, path: Path) -> tuple[object, dict[str, LongValue]] | None:
    """The line ``data[start:end]`` of file ``path`` parsed with each long string value replaced by a
    placeholder string: (value, placeholder → what it stands for). None when the line holds no long
    value or is not valid (the ordinary path then reads it, and counts it when broken)."""
    found = [m.span() for m in _STRING.finditer(data, start, end) if m.end() - m.start() > LONG_VALUE_BYTES]
    if not found:
        return None
    marker = "\x00causantic-long-value-"  # NUL: no transcript text holds it; the reader checks each is used once
    view = memoryview(data)
    pieces: list[bytes] = []
    values: dict[str, LongValue] = {}
    previous = start
    for n, (a, b) in enumerate(found):
        value = _checked(view[a + 1 : b - 1], path, a + 1)
        if value is None:
            return None
        key = f"{marker}{n}"
        values[key] = value
        pieces += (data[previous:a], orjson.dumps(key))
        previous = b
    pieces.append(data[previous:end])
    try:
        return orjson.loads(b"".join(pieces)), values
    except orjson.JSONDecodeError:
        return None


def _checked(raw: memoryview, path: Path, start: int) -> LongValue | None:
    """Decode every window of ``raw`` once: what the value is, None when it is not valid string content."""
    crc, chars, head, tail, blank = 0, 0, "", "", True
    try:
        for piece in raw_windows(raw):
            crc = zlib.crc32(piece, crc)
            text = decode_window(piece)
            chars += len(text)
            if len(head) < HEAD_CHARS:
                head += text[: HEAD_CHARS - len(head)]
            tail = (tail + text[-TAIL_CHARS:])[-TAIL_CHARS:]
            blank = blank and (not text or text.isspace())
            del text  # not held while the next window is decoded (up to 4 bytes a character)
    except ValueError:
        return None
    return LongValue(LongText(path, start, start + len(raw), chars, crc), head, blank, tail)
