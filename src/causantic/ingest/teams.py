"""Agent teams: telling teammates from ordinary sub-agents, naming them, and the team edges.

**Detection.** A session is a team session when its main stream calls ``TeamCreate`` or
``SendMessage``, or spawns an agent (``Task``/``Agent``) with a ``team_name`` or a ``name``. The
team's name comes from ``TeamCreate``, else from a spawning call's ``team_name``; a team spawned
with names only has no team name.

**Teammates.** A sub-agent stream is a teammate when the call that started it carries a
``team_name`` or ``name``, when its own ``SendMessage`` results name it as the sender, or when it
was opened by a ``<teammate-message>`` (a teammate gets a new file per incoming message context;
all files of one teammate share its name). Names are resolved in this order: the spawning call's
``name`` > the call's result (``toolUseResult.name``) > ``SendMessage`` routing metadata (the
sender of the stream's own messages) > ``<teammate-message teammate_id=…>`` tags whose text only
that stream wrote. A teammate left unnamed keeps its agent id. Other sub-agents stay ordinary and
get brief/debrief edges (:mod:`subagents`).

**Edges** (chunk ids only; a teammate's files each restart turn numbering, so turn indices are
never compared across streams):

- ``team-spawn`` (lead → teammate): the chunk holding the spawning call → the teammate's first
  chunk; and the chunk holding a lead's ``SendMessage`` → the teammate chunk that received it.
- ``team-report`` (teammate → lead): the teammate's last chunk → the lead chunk holding the call's
  result, when the call waited for the teammate; and a teammate's message → the lead chunk that
  received it.
- ``peer-message`` (teammate → teammate): a message between two teammates.

A message is a ``SendMessage`` call on the sending side and a ``<teammate-message>`` tag in a
prompt on the receiving side. Pairs are found by content first — same sender and recipient, the
tag's ``summary`` equal to the call's, or the same text — then by time: the closest receipt at or
after the send, within ``graph.timeGapMinutes``. An unpaired send points at the recipient's first
chunk that starts within that window after it; an unpaired receipt comes from the sender's chunk
that contains the message's opening words, else from the sender's chunk in progress when it
arrived (within the window). Every tie goes to the earlier stream, then the earlier chunk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from causantic.ingest.streams import MAIN_AGENT, PlannedStream
from causantic.ingest.subagents import Link, Spawn, brief_debrief, first_prompt
from causantic.store.records import EdgeRecord, parse_iso
from causantic.transcripts.model import TextBlock, ToolCall, ToolResult, Transcript

LEAD = "team-lead"  # how teammates name the lead in messages
_LEAD_ALIASES = frozenset({LEAD, "lead", "leader", "team-leader", MAIN_AGENT})
_NOT_AGENTS = frozenset({"system", "user"})
_TAG = re.compile(r"<teammate-message\s*([^>]*)>(.*?)</teammate-message>", re.DOTALL)
_ATTRIBUTE = re.compile(r'([\w-]+)="([^"]*)"')
_SENDER_IN_TEXT = re.compile(r'"sender"\s*:\s*"([^"]+)"')
_OPENING_CHARS = 60  # how much of a message's opening words must be found in the sending chunk
_OPENING_MIN_CHARS = 12


@dataclass(frozen=True, slots=True)
class Team:
    name: str | None  # from TeamCreate or a spawning call's team_name; None for a name-only team
    members: dict[str, str]  # teammate stream's agent id → teammate name


@dataclass(frozen=True, slots=True)
class _Send:
    stream: int  # index into the streams passed to team_edges
    call_id: str
    at: datetime | None
    sender: str
    recipients: frozenset[str]  # empty: broadcast
    summary: str
    body: str


@dataclass(frozen=True, slots=True)
class _Receipt:
    stream: int
    uuid: str
    at: datetime | None
    sender: str
    summary: str
    body: str


# ---- detection ------------------------------------------------------------------------------------


def detect_team(
    main: Transcript | None, subs: Sequence[Transcript], spawns: Sequence[Spawn], links: dict[str, Link]
) -> Team | None:
    """The team of a session, or None when the main stream shows no team tool call."""
    if main is None:
        return None
    team_name: str | None = None
    signal = False
    for call in _calls(main):
        if call.name == "TeamCreate":
            signal = True
            team_name = team_name or _str(call.input.get("team_name"))
        elif call.name == "SendMessage":
            signal = True
    for spawn in spawns:
        if spawn.owner is None and (spawn.text("team_name") or spawn.text("name")):
            signal = True
            team_name = team_name or spawn.text("team_name") or None
    if not signal:
        return None

    members: dict[str, str | None] = {}
    for sub in subs:
        link = links.get(sub.agent_id or "")
        linked = link.spawn if link is not None else None
        if linked is not None and (linked.text("team_name") or linked.text("name")):
            members[sub.agent_id or ""] = _name(linked.text("name")) or _name(linked.result_name)
        elif (sender := _own_sender(sub)) is not None:
            members[sub.agent_id or ""] = sender
        elif first_prompt(sub).startswith("<teammate-message"):
            members[sub.agent_id or ""] = None
    for agent_id, name in list(members.items()):
        if name is None:
            members[agent_id] = _own_sender(_by_id(subs, agent_id)) or _author_of_tags(
                _by_id(subs, agent_id), [main, *subs]
            )
    return Team(team_name, {agent_id: name or agent_id for agent_id, name in members.items()})


def _own_sender(sub: Transcript) -> str | None:
    """The sender named in the routing metadata of the stream's own SendMessage results."""
    calls = {c.id for c in _calls(sub) if c.name == "SendMessage"}
    for message in sub.messages:
        for block in message.blocks:
            if isinstance(block, ToolResult) and block.tool_use_id in calls:
                info = message.tool_use_result if isinstance(message.tool_use_result, dict) else {}
                routing = info.get("routing")
                if not isinstance(routing, dict):
                    routing = {}
                match = _SENDER_IN_TEXT.search(block.whole())
                sender = _name(routing.get("sender") or (match.group(1) if match else None))
                if sender is not None and sender != LEAD:
                    return sender
    return None


def _author_of_tags(sub: Transcript, streams: Sequence[Transcript]) -> str | None:
    """The one teammate whose received ``<teammate-message>`` texts this stream wrote, if exactly one."""
    written = _squash(
        " ".join(b.text for m in sub.messages if m.role == "assistant" for b in m.blocks if isinstance(b, TextBlock))
    )
    authors = {
        sender
        for stream in streams
        if stream is not sub
        for _, _, sender, _, body in _tags(stream)
        if sender != LEAD and (opening := _opening(body)) and opening in written
    }
    return authors.pop() if len(authors) == 1 else None


# ---- edges ----------------------------------------------------------------------------------------


def team_edges(
    streams: Sequence[PlannedStream], team: Team, links: dict[str, Link], window: timedelta
) -> list[EdgeRecord]:
    """Team edges among ``streams`` (the main stream, if present, first; streams need chunks)."""
    names = {i: _role(s, team) for i, s in enumerate(streams)}
    by_id = {s.agent_id: s for s in streams}
    edges: list[EdgeRecord] = []
    for stream in streams:
        link = links.get(stream.agent_id or "")
        if stream.agent_id in team.members and link is not None:
            caller = by_id.get(link.spawn.owner)
            if caller is not None:
                edges += brief_debrief(
                    caller, stream, link.spawn, window, kinds=("team-spawn", "team-report"), guess_return=False
                )
    sends = [s for i, stream in enumerate(streams) if names[i] for s in _sends(i, stream, names[i] or "")]
    receipts = [r for i, stream in enumerate(streams) if names[i] for r in _receipts(i, stream)]
    pairs, lone_sends, lone_receipts = _pair(sends, receipts, names, window)
    for send, receipt in pairs:
        sent_from = streams[send.stream].chunk_with_call(send.call_id)
        received_in = streams[receipt.stream].chunk_with_message(receipt.uuid)
        edges += _message_edge(streams, names, send.stream, sent_from, receipt.stream, received_in)
    for send in lone_sends:
        sent_from = streams[send.stream].chunk_with_call(send.call_id)
        for index, chunk in _first_chunks_after(streams, names, send, window):
            edges += _message_edge(streams, names, send.stream, sent_from, index, chunk)
    for receipt in lone_receipts:
        source = _sending_chunk(streams, names, receipt, window)
        if source is not None:
            edges += _message_edge(
                streams,
                names,
                source[0],
                source[1],
                receipt.stream,
                streams[receipt.stream].chunk_with_message(receipt.uuid),
            )
    return list(dict.fromkeys(edges))


def _role(stream: PlannedStream, team: Team) -> str | None:
    """The name a stream goes by in messages: the lead, a teammate's name, or None (not in the team)."""
    if stream.agent_id is None:
        return LEAD
    return team.members.get(stream.agent_id)


def _sends(index: int, stream: PlannedStream, sender: str) -> list[_Send]:
    out = []
    for message in stream.transcript.messages:
        for block in message.blocks:
            if isinstance(block, ToolCall) and block.name == "SendMessage":
                data = block.input
                target = _name(_str(data.get("recipient")) or _str(data.get("to")))
                broadcast = data.get("type") == "broadcast" or target in (None, "*")
                out.append(
                    _Send(
                        index,
                        block.id,
                        message.timestamp,
                        sender,
                        frozenset() if broadcast else frozenset({target or ""}),
                        _str(data.get("summary")) or "",
                        _str(data.get("content")) or _str(data.get("message")) or "",
                    )
                )
    return out


def _receipts(index: int, stream: PlannedStream) -> list[_Receipt]:
    return [
        _Receipt(index, uuid, at, sender, summary, body) for uuid, at, sender, summary, body in _tags(stream.transcript)
    ]


def _pair(
    sends: list[_Send], receipts: list[_Receipt], names: dict[int, str | None], window: timedelta
) -> tuple[list[tuple[_Send, _Receipt]], list[_Send], list[_Receipt]]:
    """Match sends with receipts: by content first, then by time (see the module docstring)."""
    pairs: list[tuple[_Send, _Receipt]] = []
    taken: set[int] = set()
    left: list[_Receipt] = []
    for by_content in (True, False):
        pending, left = (receipts if by_content else left), []
        for receipt in pending:
            options = [
                (i, send)
                for i, send in enumerate(sends)
                if i not in taken
                and send.sender == receipt.sender
                and (not send.recipients or names[receipt.stream] in send.recipients)
                and send.stream != receipt.stream
                and _in_order(send.at, receipt.at, None if by_content else window)
                and (not by_content or _same_message(send, receipt))
            ]
            if not options:
                left.append(receipt)
                continue
            i, send = min(options, key=lambda o: (_gap(o[1].at, receipt.at), o[1].stream, o[0]))
            taken.add(i)
            pairs.append((send, receipt))
    return pairs, [s for i, s in enumerate(sends) if i not in taken], left


def _same_message(send: _Send, receipt: _Receipt) -> bool:
    if send.summary and receipt.summary:
        return _squash(send.summary) == _squash(receipt.summary)
    a, b = _squash(send.body), _squash(receipt.body)
    return bool(a and b) and (a == b or a.startswith(b[:200]) or b.startswith(a[:200]))


def _first_chunks_after(
    streams: Sequence[PlannedStream], names: dict[int, str | None], send: _Send, window: timedelta
) -> list[tuple[int, int]]:
    """Per recipient, its first chunk that starts within ``window`` after an unanswered send."""
    if send.at is None:
        return []
    recipients = send.recipients or {n for n in names.values() if n and n != send.sender}
    found: list[tuple[int, int]] = []
    for recipient in sorted(r for r in recipients if r):
        options = [
            (parse_iso(streams[i].records[c].start_time), i, c)
            for i, name in names.items()
            if name == recipient and i != send.stream
            if (c := streams[i].first_chunk_from(send.at, window)) is not None
        ]
        if options:
            _, index, chunk = min(options)
            found.append((index, chunk))
    return found


def _sending_chunk(
    streams: Sequence[PlannedStream], names: dict[int, str | None], receipt: _Receipt, window: timedelta
) -> tuple[int, int] | None:
    """The chunk an unpaired received message most likely came from (see the module docstring)."""
    senders = [i for i, name in names.items() if name == receipt.sender and i != receipt.stream]
    opening = _opening(receipt.body)
    if opening:
        written = [
            (i, c)
            for i in senders
            for c, record in enumerate(streams[i].records)
            if opening in _squash(record.content) and (receipt.at is None or parse_iso(record.start_time) <= receipt.at)
        ]
        if written:
            return max(written, key=lambda w: (parse_iso(streams[w[0]].records[w[1]].start_time), -w[0], w[1]))
    if receipt.at is None:
        return None
    options = [
        (parse_iso(streams[i].records[c].start_time), -i, c, i)
        for i in senders
        if (c := streams[i].chunk_at(receipt.at, window)) is not None
    ]
    if not options:
        return None
    _, _, chunk, index = max(options)
    return index, chunk


def _message_edge(
    streams: Sequence[PlannedStream],
    names: dict[int, str | None],
    source_stream: int,
    source: int | None,
    target_stream: int,
    target: int | None,
) -> list[EdgeRecord]:
    if source is None or target is None:
        return []
    sender, receiver = names[source_stream], names[target_stream]
    if sender == LEAD and receiver != LEAD:
        kind = "team-spawn"
    elif receiver == LEAD and sender != LEAD:
        kind = "team-report"
    elif sender != receiver:
        kind = "peer-message"
    else:
        return []
    return [EdgeRecord(streams[source_stream].records[source].id, streams[target_stream].records[target].id, kind)]


# ---- parsing --------------------------------------------------------------------------------------


def _tags(transcript: Transcript) -> list[tuple[str, datetime | None, str, str, str]]:
    """(message uuid, time, sender, summary, text) of every ``<teammate-message>`` in the prompts."""
    found = []
    for message in transcript.messages:
        if message.role != "user":
            continue
        for block in message.blocks:
            if isinstance(block, TextBlock) and "<teammate-message" in block.text:
                for match in _TAG.finditer(block.text):
                    attributes = dict(_ATTRIBUTE.findall(match.group(1)))
                    sender = _name(attributes.get("teammate_id"))
                    if sender is not None and sender not in _NOT_AGENTS:
                        found.append(
                            (
                                message.uuid,
                                message.timestamp,
                                sender,
                                attributes.get("summary", ""),
                                match.group(2).strip(),
                            )
                        )
    return found


def _calls(transcript: Transcript) -> list[ToolCall]:
    return [
        block
        for message in transcript.messages
        if message.role == "assistant"
        for block in message.blocks
        if isinstance(block, ToolCall)
    ]


def _by_id(streams: Sequence[Transcript], agent_id: str) -> Transcript:
    return next(s for s in streams if s.agent_id == agent_id)


def _name(value: object) -> str | None:
    """A teammate name as messages use it: ``alice@team`` → ``alice``; lead aliases → ``team-lead``."""
    if not isinstance(value, str) or not value.strip():
        return None
    name = value.strip().lstrip("@").split("@", 1)[0].strip()
    if not name:
        return None
    return LEAD if name.lower() in _LEAD_ALIASES else name


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _squash(text: str) -> str:
    """Lower-case letters and digits only, so markdown and spacing do not hide the same words."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _opening(body: str) -> str:
    """The squashed opening words of a message, or "" when too short to be telling."""
    first_line = next((line for line in body.splitlines() if line.strip()), "")
    squashed = _squash(first_line)[:_OPENING_CHARS]
    return squashed if len(squashed) >= _OPENING_MIN_CHARS else ""


def _in_order(sent: datetime | None, received: datetime | None, window: timedelta | None) -> bool:
    if sent is None or received is None:
        return window is None
    return sent <= received and (window is None or received - sent <= window)


def _gap(sent: datetime | None, received: datetime | None) -> float:
    return (received - sent).total_seconds() if sent is not None and received is not None else float("inf")
