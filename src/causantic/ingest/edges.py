"""The causal graph rules (seeds 000-002): a linked list with branches at sub-agent forks.

- within-chain: consecutive chunks of one turn, and the last chunk of a turn to the first chunk
  of the next, unless the gap between them exceeds ``graph.timeGapMinutes`` or the next prompt
  opens a new topic (``graph.topicShiftPatterns``) — then the chain breaks, as seed 001 found
  topic continuity is best detected from those two signals.
- cross-session: the last main-agent chunk of a project's session to the first of the next one.
- brief / debrief: a spawning chunk to its sub-agent's first chunk, and the sub-agent's last
  chunk back to the chunk where its result arrived (rules in :mod:`subagents`); team-spawn,
  team-report and peer-message between an agent team's lead and teammates (:mod:`teams`).

Every edge is one ``forward`` row; direction is chosen when walking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from causantic.store.records import ChunkRecord, EdgeRecord, parse_iso


@dataclass(frozen=True, slots=True)
class Gating:
    time_gap: timedelta | None  # None: never break on time
    topic_shift: re.Pattern[str] | None  # None: never break on wording


def make_gating(time_gap_minutes: float, topic_shift_gating: bool, patterns: Sequence[str]) -> Gating:
    gap = timedelta(minutes=time_gap_minutes) if time_gap_minutes > 0 else None
    shift = None
    if topic_shift_gating and patterns:
        shift = re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
    return Gating(gap, shift)


def within_chain_edges(chunks: Sequence[ChunkRecord], prompts: dict[int, str], gating: Gating) -> list[EdgeRecord]:
    """Edges along one agent stream's chunks (in order); ``prompts`` maps turn index to prompt."""
    edges: list[EdgeRecord] = []
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        if prev.turn_index != nxt.turn_index and _breaks(prev, nxt, prompts.get(nxt.turn_index, ""), gating):
            continue
        edges.append(EdgeRecord(prev.id, nxt.id, "within-chain"))
    return edges


def _breaks(prev: ChunkRecord, nxt: ChunkRecord, prompt: str, gating: Gating) -> bool:
    if gating.time_gap is not None and parse_iso(nxt.start_time) - parse_iso(prev.end_time) > gating.time_gap:
        return True
    return bool(gating.topic_shift and gating.topic_shift.match(prompt.lstrip()))


def cross_session_edges(endpoints: Sequence[tuple[str, str]]) -> list[EdgeRecord]:
    """``endpoints`` are (first chunk id, last chunk id) per session, oldest session first."""
    return [
        EdgeRecord(prev_last, next_first, "cross-session")
        for (_, prev_last), (next_first, _) in zip(endpoints, endpoints[1:], strict=False)
    ]
