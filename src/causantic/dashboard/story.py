"""The one adapter from an episodic answer (recall / predict) to what the search page draws.

Pages never read :class:`~causantic.retrieval.chains.EpisodicResult` directly: when its shape
changes (episodes built around several hits, a relevance floor, "nothing relevant"), only
:func:`story_of` changes. A story is its steps in the order the answer gives them, each saying
where it came from (project, session, agent, time) and how relevant it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from causantic.retrieval.chains import EpisodicResult
    from causantic.retrieval.search import StoredChunk


@dataclass(frozen=True, slots=True)
class Step:
    chunk: StoredChunk
    relevance: float | None  # 0..1, None when the answer gives none
    new_session: bool  # the first step of a session in this story (pages draw a divider)


@dataclass(frozen=True, slots=True)
class Story:
    kind: str  # "recall" or "predict"
    steps: list[Step]
    tokens: int
    how: str  # one line: how the answer was built
    nothing_relevant: bool


def story_of(result: EpisodicResult, kind: str) -> Story:
    steps: list[Step] = []
    previous: str | None = None
    for chunk, score in zip(result.chunks, result.scores, strict=True):
        steps.append(Step(chunk, None if score is None else max(0.0, min(score, 1.0)),
                          chunk.session_id != previous))
        previous = chunk.session_id
    if result.mode == "chain":
        how = f"A chain of {len(steps)} linked chunks, in the order they happened."
    else:
        reason = result.diagnostics.fallback_reason or "no chain qualified"
        how = f"Search results, not a chain ({reason})."
    return Story(kind, steps, result.tokens, how, not steps)
