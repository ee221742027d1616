"""Turn-based, code-block-aware chunking.

A chunk never spans two turns, so every chunk belongs to one prompt and the causal graph stays a
clean sequence. A turn longer than ``max_tokens`` is split between sections (prompt, assistant
text, tool lines); a section that alone is too long is split between paragraphs, never inside a
fenced code block unless that block alone is over the limit, in which case it is split by lines.

Tokens are approximated as characters / 3.5 (the budget unit everywhere in Causantic). The default
``chunking.maxTokens`` of 400 (≈ 1,400 characters) keeps a chunk within two 256-word-piece windows
of the default embedding model, which embeds every window, so no part of a chunk is invisible to
vector search; small chunks also let retrieval spend a token budget on the relevant turns only.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from causantic.config import ChunkingConfig
from causantic.ingest.longtext import WindowedText
from causantic.ingest.render import RenderedTurn, Section
from causantic.ingest.tokens import CHARS_PER_TOKEN

_SPACES = re.compile(r"\s*")
_FENCES = ("```", "~~~")
LONG_LINE_CHARS = ChunkingConfig.model_fields["long_line_chars"].default
_LONG_LINE = "[long line"
_LONG_LINE_MARKER = re.compile(r"\[long line (\d+)/\d+ of ([\d,]+) characters\] ")
_MARKER_RESERVE = 64  # room for the marker inside a slice, so a slice still fits in a chunk


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk before it is tied to a session: text plus the sections it came from."""

    turn_index: int
    part: int
    text: str
    sections: tuple[Section, ...]


def iter_chunks(turn: RenderedTurn, max_tokens: int, long_line_chars: int = LONG_LINE_CHARS) -> Iterator[ChunkDraft]:
    """A turn's chunk drafts, one at a time: a turn holding a pasted text of megabytes is cut as its
    drafts are taken, so a caller that writes each draft away holds a few of them, not all."""
    max_chars = int(max_tokens * CHARS_PER_TOKEN)
    current: list[Section] = []
    size = 0
    part = 0
    for piece in _pieces(turn.sections, max_chars, long_line_chars):
        added = len(piece.text) + (2 if current else 0)
        if current and size + added > max_chars:
            yield _draft(turn, part, current)
            part += 1
            current, size = [], 0
            added = len(piece.text)
        current.append(piece)
        size += added
    if current:
        yield _draft(turn, part, current)


def _pieces(sections: Iterable[Section], max_chars: int, long_line_chars: int) -> Iterator[Section]:
    """The sections, one too long for a chunk (or a pasted text of megabytes) split, lazily."""
    for section in sections:
        text = section.text if section.long is None else section.long  # a pasted text of megabytes
        if len(text) <= max_chars and section.long is None:
            yield section
        else:
            yield from (_replace_text(section, part) for part in _split(text, max_chars, long_line_chars))


Text = str | WindowedText  # what is split: a string, or a pasted text of megabytes held as windows


def split_text(text: Text, max_chars: int, long_line_chars: int = LONG_LINE_CHARS) -> list[str]:
    """Split at paragraph breaks outside code fences; split an oversized fence by lines.

    Paragraphs and lines are found as index spans of ``text`` and only the pieces are copied out,
    so splitting a 50 MB pasted line holds the text once plus its pieces, not several copies.
    """
    return list(_split(text, max_chars, long_line_chars))


def _split(text: Text, max_chars: int, long_line_chars: int) -> Iterator[str]:
    """:func:`split_text`, a piece at a time (a text held as windows frees them as it is cut)."""
    pieces = (
        piece
        for start, end in _paragraphs_and_fences(text)
        for piece in (
            [_cut(text, start, end)]
            if end - start <= max_chars
            else _cut_long_lines(text, start, end, max_chars, long_line_chars)
        )
    )
    return _pack(pieces, "\n\n", max_chars)


def _cut(text: Text, start: int, end: int) -> str:
    """``text[start:end]``. Pieces are cut in order, so a text held as windows frees those before
    ``start``: a pasted text and all its pieces are never held at once (it is used up)."""
    if isinstance(text, WindowedText):
        text.drop_before(start)
    return text[start:end]


def _lines(text: Text, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The (start, end) spans of the lines of ``text[start:end]``, without their newlines."""
    while True:
        stop = text.find("\n", start, end)
        if stop < 0:
            yield start, end
            return
        yield start, stop
        start = stop + 1


def _paragraphs_and_fences(text: Text) -> list[tuple[int, int]]:
    """Spans of paragraphs, with each fenced code block (and its fences) kept as one unit.

    A block is a run of whole lines, so its text is ``text[start:end]`` exactly.
    """
    blocks: list[tuple[int, int]] = []
    first: int | None = None  # where the current block starts
    last = 0  # where its last line ends
    in_fence = False
    for start, end in _lines(text, 0, len(text)):
        if isinstance(text, WindowedText):
            first_char = text.first_non_space(start, end)
        else:
            first_char = _SPACES.match(text, start, end).end()  # type: ignore[union-attr]  # always matches
        if text.startswith(_FENCES, first_char, end):
            if not in_fence and first is not None:
                blocks.append((first, last))
                first = None
            first = start if first is None else first
            last = end
            if in_fence:
                blocks.append((first, last))
                first = None
            in_fence = not in_fence
            continue
        if not in_fence and first_char == end:
            if first is not None:
                blocks.append((first, last))
                first = None
            continue
        first = start if first is None else first
        last = end
    if first is not None:
        blocks.append((first, last))
    return blocks


def _cut_long_lines(text: Text, start: int, end: int, max_chars: int, long_line_chars: int) -> Iterator[str]:
    """The lines of ``text[start:end]``, packed, a line longer than ``max_chars`` (minified code,
    base64) cut into slices.

    Slices are taken by index, so a line of any length is cut in linear time. A line longer than
    ``long_line_chars`` is kept whole for keyword search, each slice opening with a marker that
    :func:`long_lines_summarised` turns into a short summary, so a pasted bundle costs two embeddings
    instead of thousands.
    """
    return _pack(
        (piece for a, b in _lines(text, start, end) for piece in _line_pieces(text, a, b, max_chars, long_line_chars)),
        "\n",
        max_chars,
    )


def _line_pieces(text: Text, start: int, end: int, max_chars: int, long_line_chars: int) -> Iterator[str]:
    length = end - start
    if length <= max_chars:
        yield _cut(text, start, end)
    elif length <= long_line_chars or max_chars < 2 * _MARKER_RESERVE:
        yield from (_cut(text, i, min(i + max_chars, end)) for i in range(start, end, max_chars))
    else:
        parts = math.ceil(length / (max_chars - _MARKER_RESERVE))
        step = math.ceil(length / parts)
        for n, i in enumerate(range(start, end, step), start=1):
            yield f"{_LONG_LINE} {n}/{parts} of {length:,} characters] {_cut(text, i, min(i + step, end))}"


def long_lines_summarised(content: str) -> str:
    """What the embedding model sees for a chunk: its text, with a long-line slice summarised.

    The first slice keeps its head (what the line is); later slices all map to the same summary,
    which the indexer embeds once.
    """
    if _LONG_LINE not in content:
        return content
    match = _LONG_LINE_MARKER.search(content)
    if match is None:
        return content
    summary = f"{content[: match.start()]}{_LONG_LINE} of {match.group(2)} characters]"
    return f"{summary} {content[match.end() : match.end() + 300]}" if match.group(1) == "1" else summary


def _pack(pieces: Iterable[str], sep: str, max_chars: int) -> Iterator[str]:
    """Join consecutive pieces with ``sep`` while the run stays within ``max_chars``."""
    current = ""
    for piece in pieces:
        joined = f"{current}{sep}{piece}" if current else piece
        if current and len(joined) > max_chars:
            yield current
            current = piece
        else:
            current = joined
    if current:
        yield current


def _replace_text(section: Section, text: str) -> Section:
    return Section(
        text,
        section.message_uuid,
        section.timestamp,
        section.tool_call_id,
        section.tool_result_id,
        opened_by=section.opened_by,
    )


def _draft(turn: RenderedTurn, part: int, sections: list[Section]) -> ChunkDraft:
    return ChunkDraft(turn.turn_index, part, "\n\n".join(s.text for s in sections), tuple(sections))


def chunk_id(session_id: str, agent_key: str, anchor: str, part: int) -> str:
    """Stable identity of a turn's part: the same turn keeps its id when a session grows."""
    digest = hashlib.sha256(f"{session_id}\x1f{agent_key}\x1f{anchor}\x1f{part}".encode()).hexdigest()
    return digest[:24]


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
