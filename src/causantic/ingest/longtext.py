"""A pasted text of many megabytes cleaned and redacted window by window, with bounded copies.

Rendering a message's text removes what the harness injected (user text only) and redacts
secrets: ``redact(without_injected(text))``. On the whole of a 50 MB pasted line, each step that
changes something makes a full copy, and the redactor's splicing holds the pieces beside the
result: four or five copies at once, each at four bytes a character once the text holds one emoji.
Here the text is cut into windows of about :data:`WINDOW_CHARS` characters, each cleaned and
redacted alone, and the results are kept as a :class:`WindowedText`: UTF-8 windows, about a byte a
character, never one string. The text comes as a string or, for a message of many megabytes on one
transcript line, straight from its file (:class:`~causantic.transcripts.longvalue.LongText`), read a
window at a time, so no more than a few windows of it are held at once; the chunker then cuts the
windows into chunks in order, freeing each once cut.

A cut is made only where it changes nothing. It is placed after a space, and accepted only when
cleaning the :data:`REACH` characters either side of it together gives the same text as cleaning
each side alone. A secret crossing the cut, with the words that give it away ("the secret key is
…", ``password =``), is then either redacted in both or in neither: redacted whole it becomes one
placeholder, and no two halves can put the same placeholder back together. So every secret and
injected element up to :data:`REACH` characters long is treated as in the whole text; when no cut
passes the check within a few tries (text full of secrets), the text is cleaned whole, as before.
Longer matches (a "token" of 16,000 characters, a user pattern without bounds) may be cut in two.

The windows of a text past :data:`PARALLEL_CLEAN_CHARS` are cleaned in two processes at once: this
one finds the cuts and cleans some windows, a helper process the others (redaction is most of a
huge line's ingest time, and the machine has a second core); they are joined in order, so the
result is the same text.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import BrokenExecutor, Future
from typing import TYPE_CHECKING

from causantic.transcripts import (
    OPENING_CHARS,
    injected_elements_removed,
    opens_plainly,
    opens_unclosed_element,
    without_injected,
)
from causantic.transcripts.longvalue import LongText

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

WINDOW_CHARS = 1 << 20  # about how much of the text is cleaned at a time
REACH = 16_384  # characters either side of a cut checked together: longer than any secret's match
_TRIES = 32  # cut positions tried for one window before the text is cleaned whole


class WindowedText:
    """A text of many megabytes held as UTF-8 windows: about a byte a character whatever it holds,
    where one Python string would take four as soon as it holds one emoji. Read by slices (each
    decodes only the windows it touches) and by the few searches the chunker makes."""

    __slots__ = ("_cached", "_length", "_parts", "_starts")

    def __init__(self, text: str = "") -> None:
        self._parts: list[bytes] = []
        self._starts: list[int] = []  # character offset of each window
        self._length = 0
        self._cached: tuple[int, str] = (-1, "")
        self.append(text)

    def append(self, text: str) -> None:
        if text:
            self._parts.append(text.encode("utf-8", "surrogatepass"))  # a lone surrogate is text too
            self._starts.append(self._length)
            self._length += len(text)

    def __len__(self) -> int:
        return self._length

    def _window(self, index: int) -> str:
        if self._cached[0] != index:
            self._cached = (index, self._parts[index].decode("utf-8", "surrogatepass"))
        return self._cached[1]

    def __getitem__(self, key: slice) -> str:
        start, stop, _ = key.indices(self._length)
        out: list[str] = []
        index = bisect_right(self._starts, start) - 1
        while start < stop:
            base, window = self._starts[index], self._window(index)
            out.append(window[start - base : stop - base])
            start, index = base + len(window), index + 1
        return "".join(out)

    def drop_before(self, position: int) -> None:
        """Free the windows that end at or before ``position``: a reader that is done with them (the
        chunker, cutting the text in order) keeps only the pieces it made. Reading there is an error."""
        index = bisect_right(self._starts, position) - 1
        for i in range(index):
            self._parts[i] = b""
        if self._cached[0] < index:
            self._cached = (-1, "")

    def startswith(self, prefixes: tuple[str, ...], start: int, end: int) -> bool:
        """As ``str.startswith``: whether ``self[start:end]`` opens with one of ``prefixes``."""
        head = self[start : min(end, start + max(map(len, prefixes)))]
        return head.startswith(prefixes)

    def find(self, char: str, start: int, end: int) -> int:
        """Where ``char`` (one character) first occurs in ``[start, end)``, else -1."""
        index = bisect_right(self._starts, start) - 1
        while start < end and index < len(self._parts):
            base, window = self._starts[index], self._window(index)
            found = window.find(char, start - base, end - base)
            if found >= 0:
                return base + found
            start, index = base + len(window), index + 1
        return -1

    def first_non_space(self, start: int, end: int) -> int:
        """Where the first character that is not whitespace lies in ``[start, end)``, else ``end``."""
        index = bisect_right(self._starts, start) - 1
        while start < end and index < len(self._parts):
            base, window = self._starts[index], self._window(index)
            part = window[start - base : end - base]
            rest = part.lstrip()
            if rest:
                return start + len(part) - len(rest)
            start, index = base + len(window), index + 1
        return end


def cleaned_long_text(
    source: str | LongText,
    redact: Callable[[str], str],
    *,
    injected: bool,
    window: int = WINDOW_CHARS,
    reach: int = REACH,
) -> WindowedText:
    """``redact(without_injected(text))`` (``injected``: a user's text, where the harness injects), or
    ``redact(text.strip())``, computed ``window`` characters at a time (see the module docstring).

    ``source`` is the text, or a text left in its transcript file, read a window at a time; either
    way only a few windows of it are held at once, and the result is held as UTF-8."""
    length = source.length if isinstance(source, LongText) else len(source)
    if length < 2 * window or (injected and not opens_plainly(_head(source))):
        return _whole(source, redact, injected)

    def clean(part: str) -> str:
        return _cleaned(part, redact, injected)

    text = _Buffer(source.windows() if isinstance(source, LongText) else iter((source,)))
    result = _Joined(injected)
    with _Cleaners(redact, injected, parallel=length >= PARALLEL_CLEAN_CHARS) as cleaners:
        start = 0
        while start < length:
            end = _clean_cut(text, length, start + window, reach, clean)
            if end is None:
                return _whole(source, redact, injected)
            cleaners.put(text.get(start, end))
            text.release(end)
            start = end
            if not all(map(result.add, cleaners.ready())):
                return _whole(source, redact, injected)
        if not all(map(result.add, cleaners.rest())):
            return _whole(source, redact, injected)
    return result.done()


def _cleaned(part: str, redact: Callable[[str], str], injected: bool) -> str:
    return redact(injected_elements_removed(part) if injected else part)


class _Joined:
    """The cleaned windows, in order, joined as the whole text's cleaning would give them: blank
    windows at the start and the end go, the first and the last are stripped."""

    def __init__(self, injected: bool) -> None:
        self._out = WindowedText()
        self._held: list[str] = []  # the last window with words and the blank ones after it
        self._injected = injected

    def add(self, cleaned: str) -> bool:
        """Takes the next window; False when the text must be cleaned whole (see below)."""
        if not self._held:  # nothing with words yet: blank windows at the start go, the first is stripped
            if cleaned and not cleaned.isspace():
                self._held = [cleaned.lstrip()]
                # Cut output of the harness (an element opened and not closed in the window): the whole decides.
                return not (self._injected and opens_unclosed_element(self._held[0]))
        elif cleaned and not cleaned.isspace():
            for part in self._held:
                self._out.append(part)
            self._held = [cleaned]
        else:
            self._held.append(cleaned)
        return True

    def done(self) -> WindowedText:
        if self._held:
            self._out.append(self._held[0].rstrip())  # blank windows at the end go
        return self._out


# Past this many characters, the windows are cleaned in two processes, this one and a helper (each
# cleans some 12 MB a second of corpus text); below it, starting the helper costs more than it saves.
PARALLEL_CLEAN_CHARS = 8_000_000
_AHEAD = 2  # windows the helper may hold; beyond them this process cleans the next window itself


class _Cleaners:
    """Windows cleaned, and given back, in the order they are put: by the helper process while it
    holds fewer than :data:`_AHEAD`, else here, so both work and neither waits long. A helper that
    dies (killed) loses nothing: what it held is cleaned here, and so is the rest of the text."""

    def __init__(self, redact: Callable[[str], str], injected: bool, *, parallel: bool) -> None:
        self._redact, self._injected = redact, injected
        self._pool: ProcessPoolExecutor | None = None
        if parallel and (os.cpu_count() or 1) >= 2:
            from causantic.processes import helper_process  # multiprocessing: only a huge text needs it

            self._pool = helper_process(_start_helper, (redact, injected))
        self._helping = self._pool is not None  # False once the helper died
        self._queue: deque[tuple[str, Future[str] | None]] = deque()  # (window, its cleaning) or (cleaned, None)
        self._held = 0  # windows the helper holds

    def __enter__(self) -> _Cleaners:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:  # an error here: the helper stops without finishing what it holds
            self._pool.shutdown(wait=True, cancel_futures=True)

    def put(self, window: str) -> None:
        if self._pool is not None and self._helping and self._held < _AHEAD:
            try:
                self._queue.append((window, self._pool.submit(_clean_in_helper, window)))
                self._held += 1
                return
            except BrokenExecutor:
                self._helping = False
        self._queue.append((_cleaned(window, self._redact, self._injected), None))

    def ready(self) -> Iterator[str]:
        """The cleaned windows at the head of the queue, as far as they are done."""
        while self._queue and (self._queue[0][1] is None or self._queue[0][1].done()):
            yield self._take()

    def rest(self) -> Iterator[str]:
        """Every cleaned window still in the queue, waiting for the helper as needed."""
        while self._queue:
            yield self._take()

    def _take(self) -> str:
        window, cleaning = self._queue.popleft()
        if cleaning is None:
            return window
        self._held -= 1
        try:
            return cleaning.result()
        except BrokenExecutor:  # the helper died: cleaned here instead, and from now on
            self._helping = False
            return _cleaned(window, self._redact, self._injected)


_helper: tuple[Callable[[str], str], bool] | None = None  # in the helper process: how to clean


def _start_helper(redact: Callable[[str], str], injected: bool) -> None:
    global _helper
    _helper = (redact, injected)


def _clean_in_helper(window: str) -> str:
    assert _helper is not None, "the helper process is started with _start_helper"
    return _cleaned(window, *_helper)


def _head(source: str | LongText) -> str:
    return source[:OPENING_CHARS] if isinstance(source, str) else next(source.windows(), "")[:OPENING_CHARS]


def _whole(source: str | LongText, redact: Callable[[str], str], injected: bool) -> WindowedText:
    text = source if isinstance(source, str) else "".join(source.windows())
    body = without_injected(text) if injected else text.strip()
    return WindowedText(redact(body) if body else "")


class _Buffer:
    """The part of a text being cleaned, from the start of the current window on, filled from the
    text's pieces as far as it is read."""

    def __init__(self, pieces: Iterator[str]) -> None:
        self._pieces = pieces
        self._text = ""
        self._base = 0  # where ``_text`` starts in the whole text
        self._keep = 0  # nothing before this is read again

    def _cover(self, end: int) -> None:
        while self._base + len(self._text) < end:
            piece = next(self._pieces, None)
            if piece is None:
                return
            # The part already cleaned goes only now: a text given whole is never copied.
            self._text = self._text[self._keep - self._base :] + piece
            self._base = self._keep

    def release(self, position: int) -> None:
        self._keep = position

    def get(self, start: int, end: int) -> str:
        self._cover(end)
        return self._text[start - self._base : end - self._base]

    def find(self, char: str, start: int, end: int) -> int:
        self._cover(end)
        found = self._text.find(char, start - self._base, end - self._base)
        return found + self._base if found >= 0 else -1


def _clean_cut(text: _Buffer, length: int, target: int, reach: int, clean: Callable[[str], str]) -> int | None:
    """Where the window ending near ``target`` ends: the end of the text when it is near, else the
    first cut after a space from ``target`` on whose ``reach`` either side passes the check; None
    when none of :data:`_TRIES` does."""
    at = target
    for _ in range(_TRIES):
        if at + reach >= length:
            return length
        space = text.find(" ", at, at + reach)
        cut = space + 1 if space >= 0 else at
        left, right = text.get(max(0, cut - reach), cut), text.get(cut, cut + reach)
        if clean(left + right) == clean(left) + clean(right):
            return cut
        at = cut + reach // 4
    return None
