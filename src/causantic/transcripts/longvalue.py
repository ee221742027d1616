"""A JSON string value of many megabytes, left in its file and decoded a window at a time.

Parsing a 50 MB pasted line whole gives one Python string of 50 million characters, stored at four
bytes a character as soon as it holds one emoji: 200 MB for what the file holds in 50. Here a line
longer than :data:`LONG_LINE_BYTES` is read in pieces (:class:`LineScanner`) and parsed without its
long string values: each value longer than :data:`LONG_VALUE_BYTES` is checked and counted window by
window as its bytes go past, a short placeholder takes its place, and the rest of the record is
parsed as usual. Neither the line nor the value is ever held whole. The value becomes a
:class:`LongText`: where it lies in the file, how many characters it has, and a checksum;
:meth:`LongText.windows` reads and decodes it again, window by window, when it is rendered. Each
window is its own string, four bytes a character only if it holds an astral character itself, and
is dropped once used. A JSON document (a Gemini CLI session) is read the same way, as one line.

Windows are cut only between whole escapes and whole UTF-8 characters, and never between the two
halves of a surrogate pair (``\\ud83d\\ude00``), so the windows joined are exactly the value
``json.loads`` gives. While the line is read, every window is decoded once, and its characters are
counted; a damaged value ends what is kept of the line at its opening quote
(:meth:`LineScanner.before_damage`: the reader keeps the whole records before it and counts the
broken one), and a byte that is no UTF-8 reads as U+FFFD, as in a line decoded whole.

What this module leaves to others: which values may stay in the file (each format's reader says, with
a :data:`LongRule`: message text and tool outputs; any other long value is decoded whole, or cut to
its head where only that is read), and how a long text is cleaned and chunked
(:mod:`causantic.ingest.longtext`).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

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
    of the decoded value, ``crc`` a checksum of the bytes, so a file rewritten since it was read is
    noticed instead of ingested as something else. The text is the value without its first ``skip``
    characters (a header its reader leaves out, as Codex's before a command's output).
    """

    path: Path
    start: int
    end: int
    chars: int
    crc: int
    skip: int = 0
    lenient: bool = False  # it holds a byte that is no UTF-8, read as U+FFFD (:func:`decode_window`)
    # When not -1: the text is a JSON string's content held in the value, from its first ``skip``
    # characters on (an output Codex wrapped in JSON: ``{"output": "<the text>", "metadata": …}``),
    # decoded (:func:`string_windows`); this many characters long.
    inner: int = -1

    @property
    def length(self) -> int:
        """The text's length in characters."""
        return self.inner if self.inner >= 0 else self.chars - self.skip

    def windows(self, window: int | None = None) -> Iterator[str]:
        """The text, in order, a window of about ``window`` (:data:`WINDOW_BYTES`) bytes at a time.

        Raises :class:`TranscriptError` when the file no longer holds the value it held."""
        source = self._value_windows(window)
        if self.inner < 0:
            return source
        return _checked_string(string_windows(source), self)

    def _value_windows(self, window: int | None) -> Iterator[str]:
        """The value's text after its first ``skip`` characters, a window at a time."""
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
                    text = decode_window(raw, self.lenient)
                    chars += len(text)
                    if chars > self.skip:
                        yield text[max(0, self.skip - chars + len(text)) :]
        except (OSError, ValueError) as e:
            raise self._changed() from e
        if crc != self.crc or chars != self.chars:
            raise self._changed()

    def _changed(self) -> TranscriptError:
        return TranscriptError(
            f"{self.path} changed while it was read (a long message is no longer where it was). Ingest it again."
        )


def _checked_string(windows: Iterator[str], text: LongText) -> Iterator[str]:
    """``windows`` (an inner string's, :func:`string_windows`), which must be ``text.inner`` characters
    long; :class:`TranscriptError` when the file no longer holds them (or holds no such string)."""
    chars = 0
    try:
        for piece in windows:
            chars += len(piece)
            yield piece
    except ValueError as e:
        raise text._changed() from e
    if chars != text.inner:
        raise text._changed()


def string_windows(source: Iterator[str], rest: list[str] | None = None) -> Iterator[str]:
    """The content of a JSON string, decoded window by window from ``source``: the text of its
    escaped content, in pieces, from after its opening quote (an output Codex wrapped in JSON, as
    ``{"output": "<text>", …}``, is such a string inside the value). What follows its closing quote
    (up to :data:`TAIL_CHARS` characters) is appended to ``rest``; ``source`` is read to its end (a
    :class:`LongText` checks the file as it goes). ValueError when the content is no valid string
    content or the string is never closed."""
    carry, closed, kept = b"", False, 0
    for text in source:
        if closed:
            if rest is not None and kept < TAIL_CHARS:
                rest.append(text[: TAIL_CHARS - kept])
                kept += len(rest[-1])
            continue
        data = carry + text.encode("utf-8")
        match = _CONTENT.match(data)
        end = match.end() if match else 0
        if end < len(data) and data[end] == _QUOTE:
            closed = True
            if end:
                yield decode_window(data[:end])
            after = data[end + 1 :].decode("utf-8")
            if rest is not None:
                rest.append(after[:TAIL_CHARS])
                kept = len(rest[-1])
            continue
        cut = safe_cut(data, 0, len(data) - 1) if len(data) > 16 else 0
        carry = data[cut:]
        if cut:
            yield decode_window(data[:cut])
    if not closed:
        raise ValueError("the string is never closed")


def decode_window(raw: bytes | memoryview, lenient: bool = False) -> str:
    """The text of a run of JSON string content (no quotes around it), as the reader decodes a line:
    orjson first, the standard library for what orjson refuses (a lone surrogate); ValueError when
    it is not valid string content. ``lenient``: a byte that is no UTF-8 reads as U+FFFD, as the
    reader decodes a line holding one (a stray byte costs its character, not the record)."""
    quoted = b'"' + bytes(raw) + b'"'
    try:
        value = orjson.loads(quoted)
    except orjson.JSONDecodeError:
        value = json.loads(quoted.decode("utf-8", "replace" if lenient else "strict"))
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


def safe_cut(raw: bytes | bytearray | memoryview, start: int, target: int) -> int:
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


def _opens_escape(raw: bytes | bytearray | memoryview, start: int, b: int) -> bool:
    """Whether the backslash at ``b`` opens an escape (an odd run of backslashes ends there; the
    run cannot reach before ``start``, an escape boundary)."""
    run = bytes(raw[start : b + 1])
    return (len(run) - len(run.rstrip(b"\\"))) % 2 == 1


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
    scanner = LineScanner(path, start)
    scanner.feed(data[start:end])
    scanned = scanner.finish()
    if scanned is None or not scanned[1]:
        return None
    try:
        return orjson.loads(scanned[0]), scanned[1]
    except orjson.JSONDecodeError:
        return None


# The rest of a JSON string's content from where it stands: up to its closing quote, or to a
# backslash ending the piece (an escape the next piece completes), or to the piece's end.
_CONTENT = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+', re.DOTALL)
_QUOTE = 0x22


class LineScanner:
    """One line (or a whole JSON document) read a piece at a time, in order, holding only what is
    not a long string value: each string value longer than :data:`LONG_VALUE_BYTES` (in the file) is
    checked and counted window by window as its bytes go past and left in the file (a
    :class:`LongValue`), and a placeholder stands for it in the bytes kept.

    JSON strings hold no raw newline, so where a line ends does not depend on strings: the reader
    splits lines and feeds a long one here. Memory: the bytes kept, a window, and a long value's
    head and tail."""

    def __init__(self, path: Path, offset: int) -> None:
        self.path = path
        self.position = offset  # where in the file the next byte fed lies
        self.kept = bytearray()
        self.values: dict[str, LongValue] = {}
        self.in_string = False
        self.short: bytearray | None = None  # the open string's content while it is short
        self.check: _Check | None = None  # the open string's check once it is long
        self.opened = 0  # where the open string's content starts in the file
        self.carry = b""  # a backslash that ended the last piece, inside a string
        self.broken = False  # a long value that is no valid string content

    def feed(self, piece: bytes) -> None:
        """The line's next bytes."""
        if self.broken:
            return
        data = self.carry + piece if self.carry else piece
        base = self.position - len(self.carry)
        self.position += len(piece)
        self.carry = b""
        i, n = 0, len(data)
        while i < n:
            if not self.in_string:
                j = data.find(b'"', i)
                if j < 0:
                    self.kept += data[i:]
                    return
                self.kept += data[i:j]
                self.in_string, self.short, self.check, self.opened = True, bytearray(), None, base + j + 1
                i = j + 1
                continue
            match = _CONTENT.match(data, i)
            k = match.end() if match else i
            self._content(data[i:k])
            if k < n and data[k] == _QUOTE:
                self._close(base + k)
                i = k + 1
            else:  # the piece ends inside the string, perhaps right after a backslash
                self.carry = data[k:]
                return

    def _content(self, raw: bytes) -> None:
        if self.short is not None:
            self.short += raw
            if len(self.short) + 2 > LONG_VALUE_BYTES:  # the token, quotes and all, is a long value
                self.check = _Check()
                self.check.feed(self.short)
                self.short = None
        elif self.check is not None:
            self.check.feed(raw)
        if self.check is not None and self.check.broken:
            self.broken = True

    def _close(self, end: int) -> None:
        if self.short is not None:
            self.kept += b'"' + self.short + b'"'
        elif self.check is not None:
            value = self.check.finish(self.path, self.opened, end)
            if value is None:
                self.broken = True
                return
            key = f"{_MARKER}{len(self.values)}"
            self.values[key] = value
            self.kept += orjson.dumps(key)
        self.in_string, self.short, self.check = False, None, None

    def finish(self) -> tuple[bytes, dict[str, LongValue]] | None:
        """(the bytes kept, placeholder → long value): without long values, the line itself. None when
        a long value is no valid string content or is left open (a line cut inside it): only the
        line read whole can say what it holds."""
        if self.broken or self.check is not None:
            return None
        if self.short is not None:  # a short string left open: the line, as it is, is damaged
            self.kept += b'"' + self.short + self.carry
        return bytes(self.kept), self.values

    def before_damage(self) -> tuple[bytes, dict[str, LongValue]]:
        """When :meth:`finish` found the line damaged inside a long value (no valid string content,
        or cut inside it): the bytes kept up to that value's opening quote, with the long values
        before it. The record holding the value is damaged; the records before it on the line are
        whole, and read from these bytes without the line ever being held whole."""
        return bytes(self.kept), self.values


_MARKER = "\x00causantic-long-value-"  # NUL: no transcript text holds it; the reader checks each is used once


class _Check:
    """A long value's content checked window by window as it is read: its checksum, its length in
    characters, its head and tail, whether it is blank."""

    def __init__(self) -> None:
        self.crc, self.chars, self.head, self.tail, self.blank = 0, 0, "", "", True
        self.pending = bytearray()
        self.broken = False
        self.lenient = False  # a window held a byte that is no UTF-8

    def feed(self, raw: bytes | bytearray) -> None:
        self.pending += raw
        window = WINDOW_BYTES
        while len(self.pending) > window and not self.broken:
            cut = safe_cut(self.pending, 0, window)
            if cut <= 0:  # no place to cut: not valid content (a run of stray bytes), which decoding reports
                cut = window
            self._window(bytes(self.pending[:cut]))
            del self.pending[:cut]

    def _window(self, piece: bytes) -> None:
        try:
            text = decode_window(piece, self.lenient)
        except UnicodeDecodeError:  # a stray byte: read as U+FFFD, this window and the next ones
            self.lenient = True
            self._window(piece)
            return
        except ValueError:
            self.broken = True
            return
        self.crc = zlib.crc32(piece, self.crc)
        self.chars += len(text)
        if len(self.head) < HEAD_CHARS:
            self.head += text[: HEAD_CHARS - len(self.head)]
        self.tail = (self.tail + text[-TAIL_CHARS:])[-TAIL_CHARS:]
        self.blank = self.blank and (not text or text.isspace())

    def finish(self, path: Path, start: int, end: int) -> LongValue | None:
        if self.pending:
            self._window(bytes(self.pending))
            self.pending.clear()
        if self.broken:
            return None
        text = LongText(path, start, end, self.chars, self.crc, lenient=self.lenient)
        return LongValue(text, self.head, self.blank, self.tail)


class Placeholders:
    """The long values of a line, put back into its parsed record where its format's reader says:
    as the :class:`LongValue` where the reader keeps such a text in the file, as its head where only
    that is read, else as the whole string. Each placeholder must be put back exactly once (a string
    of the record that looks like one makes the line go the ordinary way)."""

    def __init__(self, values: dict[str, LongValue]) -> None:
        self.values = values
        self.used: set[str] = set()

    def put_back(self, value: Any, keep: Literal["whole", "lazy", "head"] = "whole") -> Any:
        """``value`` with every placeholder in it put back: as the LongValue (``keep`` "lazy", for
        the value itself), as its head ("head", inside too), else as the whole string. ValueError
        for a placeholder seen twice."""
        if type(value) is str and value in self.values:
            if value in self.used:
                raise ValueError("a placeholder twice")
            self.used.add(value)
            long = self.values[value]
            return long if keep == "lazy" else long.head if keep == "head" else "".join(long.text.windows())
        inner: Literal["whole", "head"] = "head" if keep == "head" else "whole"
        if type(value) is dict:
            return {k: self.put_back(v, inner) for k, v in cast("dict[str, Any]", value).items()}
        if type(value) is list:
            return [self.put_back(v, inner) for v in value]
        return value

    def lazy(self, container: dict[str, Any], key: str) -> bool:
        """Put ``container[key]`` back as its LongValue when it is a placeholder; whether it was."""
        value = container.get(key)
        if type(value) is str and value in self.values:
            container[key] = self.put_back(value, "lazy")
            return True
        return False

    @property
    def complete(self) -> bool:
        """Whether every placeholder was put back."""
        return len(self.used) == len(self.values)


# How a format's reader puts a line's long values back into its record (see :class:`Placeholders`).
LongRule = Callable[[dict[str, Any], Placeholders], dict[str, Any]]
