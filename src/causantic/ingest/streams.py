"""One agent stream turned into chunk records, and where things happened among those chunks.

A :class:`PlannedStream` is a transcript (the main agent's, or one sub-agent's) rendered, chunked
and given record ids. Edge rules never look at turn indices across streams (each sub-agent file
restarts them at 0); they ask a stream which of *its own* chunks holds a tool call, a tool result,
a message, a file line or a moment, and get an index into that stream's records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from operator import attrgetter

from causantic.ingest.chunker import ChunkDraft, chunk_id, content_hash, iter_chunks
from causantic.ingest.longtext import PARALLEL_CLEAN_CHARS
from causantic.ingest.redact import Redactor
from causantic.ingest.render import Section, render_turn
from causantic.ingest.tokens import approx_tokens
from causantic.store.fts import identifier_terms
from causantic.store.records import ChunkRecord, iso, parse_iso
from causantic.transcripts.model import Transcript
from causantic.transcripts.turns import assemble_turns

MAIN_AGENT = "main"


@dataclass(frozen=True, slots=True)
class RenderSettings:
    max_tokens: int
    long_line_chars: int
    tool_result_max_chars: int
    tool_input_max_chars: int
    redactor: Redactor


@dataclass(slots=True)
class PlannedStream:
    """A stream's chunks, in order, with the drafts they were made from."""

    transcript: Transcript
    agent: str  # "main", a teammate's name, or a sub-agent's type
    agent_id: str | None  # None for the main stream
    prompts: dict[int, str]  # turn index → the head of its prompt (see RenderedTurn.prompt)
    drafts: list[ChunkDraft]
    records: list[ChunkRecord]
    anchors: dict[int, str] = field(default_factory=dict)  # turn index → its anchor (see chunk_id)
    _by_message: dict[str, int] = field(default_factory=dict)  # message uuid → first chunk showing it
    _position: dict[str, int] = field(default_factory=dict)  # message uuid → index in the transcript

    def __post_init__(self) -> None:
        for index, draft in enumerate(self.drafts):
            for section in draft.sections:
                self._by_message.setdefault(section.message_uuid, index)
        self._position = {m.uuid: i for i, m in enumerate(self.transcript.messages)}

    # ---- where something happened ----------------------------------------------------------

    def chunk_with_call(self, call_id: str) -> int | None:
        """The chunk showing the tool call ``call_id``."""
        return next((i for i, d in enumerate(self.drafts) if any(s.tool_call_id == call_id for s in d.sections)), None)

    def chunk_with_result(self, call_id: str) -> int | None:
        """The chunk showing the result of tool call ``call_id``."""
        return next(
            (i for i, d in enumerate(self.drafts) if any(s.tool_result_id == call_id for s in d.sections)), None
        )

    def chunk_with_message(self, uuid: str) -> int | None:
        """The chunk showing message ``uuid``; for a message that is not shown (harness-injected
        text such as a task notification), the first chunk after it, else the last one before it."""
        if uuid in self._by_message:
            return self._by_message[uuid]
        position = self._position.get(uuid)
        if position is None:
            return None
        messages, shown = self.transcript.messages, self._by_message
        after = (shown[m.uuid] for m in messages[position + 1 :] if m.uuid in shown)
        before = (shown[m.uuid] for m in reversed(messages[:position]) if m.uuid in shown)
        return next(after, next(before, None))

    def chunk_before_line(self, line_no: int) -> int | None:
        """The chunk showing the last message that starts before file line ``line_no``."""
        shown = [
            self._by_message[m.uuid]
            for m in self.transcript.messages
            if m.line_no < line_no and m.uuid in self._by_message
        ]
        return max(shown) if shown else None

    def chunk_after_line(self, line_no: int) -> int | None:
        """The chunk showing the first message that starts after file line ``line_no``."""
        shown = [
            self._by_message[m.uuid]
            for m in self.transcript.messages
            if m.line_no > line_no and m.uuid in self._by_message
        ]
        return min(shown) if shown else None

    def chunk_at(self, moment: datetime, window: timedelta) -> int | None:
        """The chunk in progress at ``moment``: the latest one that started at or before it and ended
        no more than ``window`` before it. Ties go to the later chunk in stream order."""
        best: tuple[datetime, int] | None = None
        for index, record in enumerate(self.records):
            start, end = parse_iso(record.start_time), parse_iso(record.end_time)
            if start <= moment and moment - end <= window and (best is None or start >= best[0]):
                best = (start, index)
        return best[1] if best else None

    def first_chunk_from(self, moment: datetime, window: timedelta) -> int | None:
        """The first chunk that starts at or after ``moment``, at most ``window`` later. Ties go to
        the earlier chunk in stream order."""
        best: tuple[datetime, int] | None = None
        for index, record in enumerate(self.records):
            start = parse_iso(record.start_time)
            if moment <= start <= moment + window and (best is None or start < best[0]):
                best = (start, index)
        return best[1] if best else None

    @property
    def started(self) -> datetime:
        return parse_iso(self.records[0].start_time)

    @property
    def ended(self) -> datetime:
        return parse_iso(self.records[-1].end_time)


def plan_stream(
    transcript: Transcript,
    agent: str,
    team_name: str | None,
    session_id: str,
    settings: RenderSettings,
    fallback_time: datetime,
    emit: Callable[[ChunkRecord], None] | None = None,
) -> PlannedStream:
    """Render, chunk and identify one stream. A chunk's id is stable across re-reads (see chunk_id).

    With ``emit``, each record is handed to it as it is made (the writer saves it) and the stream
    keeps it without its text (see :func:`written`): a pasted text of megabytes is then never held
    as chunks, only as the little the edge rules read."""
    prompts: dict[int, str] = {}
    anchors: dict[int, str] = {}
    drafts: list[ChunkDraft] = []
    records: list[ChunkRecord] = []
    agent_key = transcript.agent_id or MAIN_AGENT
    last_time = fallback_time
    # The slices of one long message share its time: format each time once, not per chunk.
    stamps: dict[datetime, str] = {}
    sections: dict[tuple[str, datetime | None, str | None, str | None], Section] = {}  # bare sections, shared
    for assembled in assemble_turns(transcript):
        # Rendered and chunked one turn at a time: a turn's rendered text (a pasted bundle: many
        # megabytes) is dropped once its chunks are made, not held until the stream is done.
        turn = render_turn(
            assembled,
            tool_result_max_chars=settings.tool_result_max_chars,
            tool_input_max_chars=settings.tool_input_max_chars,
            redact=settings.redactor,
        )
        prompts[turn.turn_index] = turn.prompt
        anchors[turn.turn_index] = turn.anchor
        # A huge pasted text's chunks (tens of thousands) get their search terms from the store as
        # it writes them, in the process that makes their features beside the writes (past the same
        # 8M characters as the text's cleaning in two processes): made here, they would add some 2 s
        # to a 50 MB line's ingest.
        deferred = any(s.long is not None and len(s.long) >= PARALLEL_CLEAN_CHARS for s in turn.sections)
        for draft in iter_chunks(turn, settings.max_tokens, settings.long_line_chars):
            times = [s.timestamp for s in draft.sections if s.timestamp is not None]
            start = min(times) if times else last_time
            end = max(times) if times else start
            last_time = end
            for moment in (start, end):
                if moment not in stamps:
                    stamps[moment] = iso(moment)
            record = ChunkRecord(
                id=chunk_id(session_id, agent_key, turn.anchor, draft.part),
                session_id=session_id,
                agent=agent,
                agent_id=transcript.agent_id,
                team_name=team_name,
                turn_index=turn.turn_index,
                part=draft.part,
                start_time=stamps[start],
                end_time=stamps[end],
                content=draft.text,
                search_terms=None if deferred else identifier_terms(draft.text),
                content_hash=content_hash(draft.text),
                approx_tokens=approx_tokens(draft.text),
                tool_use_count=sum(1 for s in draft.sections if s.tool_call_id),
                code_block_count=draft.text.count("```") // 2,
                has_thinking=turn.has_thinking and draft.part == 0,
                message_uuids=_message_uuids(draft.sections),
                source=transcript.source,
            )
            if emit is None:
                drafts.append(draft)
                records.append(record)
                continue
            emit(record)
            records.append(written(record))
            drafts.append(_without_text(draft, sections))
    return PlannedStream(transcript, agent, transcript.agent_id, prompts, drafts, records, anchors)


def _message_uuids(sections: Sequence[Section]) -> tuple[str, ...]:
    """The messages a chunk's text came from, in order (a section opening with another message's
    line, the compaction line, names that message too)."""
    return tuple(dict.fromkeys(u for s in sections for u in (s.opened_by, s.message_uuid) if u))


def written(record: ChunkRecord) -> ChunkRecord:
    """A record already saved, as the plan keeps it: where it sits, its times and messages (what
    edges and superseded parts are worked out from), without its text, terms and hash."""
    values = list(_RECORD_VALUES(record))
    for index in _TEXT_FIELDS:
        values[index] = ""
    return ChunkRecord(*values)


# written() copies a record field by field in C: dataclasses.replace() cost half a second per 36,000
# chunks (a 48 MB line), for fields it looks up one by one.
_RECORD_FIELDS = tuple(f.name for f in fields(ChunkRecord))
_RECORD_VALUES = attrgetter(*_RECORD_FIELDS)
_TEXT_FIELDS = tuple(_RECORD_FIELDS.index(name) for name in ("content", "search_terms", "content_hash"))


def _without_text(
    draft: ChunkDraft, shared: dict[tuple[str, datetime | None, str | None, str | None], Section]
) -> ChunkDraft:
    """``draft`` with its sections' text dropped; equal sections (the slices of one long message)
    become one object."""
    bare: list[Section] = []
    for s in draft.sections:
        key = (s.message_uuid, s.timestamp, s.tool_call_id, s.tool_result_id)
        section = shared.get(key)
        if section is None:
            section = shared[key] = Section("", *key)
        bare.append(section)
    return ChunkDraft(draft.turn_index, draft.part, "", tuple(bare))
